//===- CommonPatterns.h - kjit op lowerings every target shares -*- C++ -*-===//
//
// The conversion patterns and helpers that kjit-convert-host-to-llvm and
// kjit-convert-to-gpu share: element addresses and their storage types,
// kjit.load, kjit.store, kjit.null, kjit.program_id and kjit.num_programs,
// the conversion of a function's signature and of its `kjit.divisibility`
// parameters. What differs between targets is a LoweringTargetInfo (after
// Triton's TargetInfoBase): the address space of kjit pointers, how masked
// accesses lower, the alignment of an access, where program ids come from
// and what a target checks before an access. docs/Targets.md says how a
// target uses them and why the other patterns stay per target.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_CONVERSION_COMMONPATTERNS_H
#define KJIT_LIB_CONVERSION_COMMONPATTERNS_H

#include "kjit/Dialect/Kjit/IR/Kjit.h"

#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"

namespace kjit {

/// What a target's lowering does differently in the common patterns. A
/// target derives from it, sets the fields and implements the hooks; the
/// object must outlive the pattern set it is given to.
class LoweringTargetInfo {
public:
  /// How a masked kjit.load/kjit.store lowers.
  enum class MaskLowering {
    /// kjit-expand-masks has removed every mask before the conversion (the
    /// host: its lowering is a full conversion to LLVM after scf-to-cf, so
    /// it cannot create scf.if); a masked access does not match.
    Expanded,
    /// The access becomes an scf.if on the mask (the cuda target: one
    /// branch around one vector access; scf lowers later).
    Branch,
  };

  explicit LoweringTargetInfo(unsigned addressSpace, MaskLowering masks)
      : addressSpace(addressSpace), masks(masks) {}
  virtual ~LoweringTargetInfo();

  /// The LLVM address space kjit pointers become (host 0, NVVM global 1).
  const unsigned addressSpace;
  const MaskLowering masks;

  /// The alignment in bytes of the load or store `access` (the kjit op
  /// being converted) through `pointer`: the element's size (host), or what
  /// specialization proves (cuda, computed before the conversion).
  virtual unsigned getAccessAlignment(mlir::Operation *access,
                                      PointerType pointer) const = 0;

  /// `kjit.program_id` and `kjit.num_programs` along `axis` as i32,
  /// created at the rewriter's insertion point; `op` is the operation being
  /// replaced.
  virtual mlir::Value getProgramId(mlir::ConversionPatternRewriter &rewriter,
                                   mlir::Operation *op, Axis axis) const = 0;
  virtual mlir::Value getNumPrograms(mlir::ConversionPatternRewriter &rewriter,
                                     mlir::Operation *op, Axis axis) const = 0;

  /// Called before the address of an access is computed, at the rewriter's
  /// insertion point, with the converted offset and the kjit type of the
  /// loaded or stored value (the host's debug-mode bounds check). With
  /// MaskLowering::Branch that is before the branch, where the mask may be
  /// off. Nothing by default.
  virtual void beforeAccess(mlir::ConversionPatternRewriter &rewriter,
                            mlir::Operation *access, PointerType pointer,
                            mlir::Value offset, mlir::Type accessType) const;

  /// The LLVM pointer type kjit pointers become.
  mlir::LLVM::LLVMPointerType getPointerType(mlir::MLIRContext *context) const;
};

/// The patterns of kjit.load, kjit.store, kjit.null, kjit.program_id and
/// kjit.num_programs for `info`'s target. `converter` turns kjit pointers
/// into `info.getPointerType()` (and, on the host, everything else into
/// LLVM types); the patterns create arith casts (trunci/extui/bitcast/
/// index_cast) that the target lowers with the rest of arith.
void populateCommonKjitPatterns(const mlir::TypeConverter &converter,
                                mlir::RewritePatternSet &patterns,
                                const LoweringTargetInfo &info);

/// The type `type` is kept in memory as, elementwise: i1 as a byte, an fp8
/// format (which LLVM has no type for) as its bits; any other type as it is.
mlir::Type getStorageType(mlir::Type type);

/// The address of element `offset` of `base` (converted values) through a
/// kjit pointer of type `pointer`: a GEP over the element's storage type in
/// `info`'s address space; an index offset is cast to i64 first.
mlir::Value getElementAddress(mlir::OpBuilder &b, mlir::Location loc,
                              const LoweringTargetInfo &info,
                              PointerType pointer, mlir::Value base,
                              mlir::Value offset);

/// Adds the converted input types of `type` to `signature`, or fails on the
/// first that does not convert.
mlir::LogicalResult
convertSignature(const mlir::TypeConverter &converter, mlir::FunctionType type,
                 mlir::TypeConverter::SignatureConversion &signature);

/// After a kjit function's body moved into `lowered` (its converted
/// function, whose parameters are `from`'s in order): a parameter with
/// `kjit.divisibility = N` gets `llvm.align = N` when it is a pointer, and
/// an assumption `(x & (N - 1)) == 0` at the start of the body when it is
/// an integer. The rewriter's insertion point is left at the start of the
/// body.
void lowerDivisibility(mlir::ConversionPatternRewriter &rewriter,
                       mlir::FunctionOpInterface from,
                       mlir::FunctionOpInterface lowered);

} // namespace kjit

#endif // KJIT_LIB_CONVERSION_COMMONPATTERNS_H
