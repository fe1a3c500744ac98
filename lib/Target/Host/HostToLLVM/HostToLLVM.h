//===- HostToLLVM.h - the pieces of kjit-convert-host-to-llvm ---*- C++ -*-===//
//
// What the pass (ConvertHostToLLVM.cpp) assembles: the kjit op patterns
// (Patterns.cpp), workgroup memory as thread-local storage (Workgroup.cpp)
// and the ABI symbols of each kernel (Symbols.cpp). Internal to
// lib/Target/Host/HostToLLVM; docs/HostTarget.md gives the rationale.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_TARGET_HOST_HOSTTOLLVM_HOSTTOLLVM_H
#define KJIT_LIB_TARGET_HOST_HOSTTOLLVM_HOSTTOLLVM_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir {
class LLVMTypeConverter;
class RewritePatternSet;
} // namespace mlir

namespace kjit::host {

/// The patterns that lower kjit's operations (kernels, functions, calls,
/// ids, barriers, loads, stores, prints, asserts) and the gpu ids to the
/// LLVM dialect of the host ABI. Masked accesses and global reads are not
/// lowered (kjit-expand-masks and kjit-bake-globals remove them first).
void populateKjitToHostLLVMPatterns(mlir::LLVMTypeConverter &converter,
                                    mlir::RewritePatternSet &patterns);

/// On a kjit.load/kjit.store that debug mode checks: the index of the
/// kernel parameter it goes through, and the message of a failed check.
inline constexpr llvm::StringLiteral kBoundsArgAttrName =
    "kjit.host.bounds_arg";
inline constexpr llvm::StringLiteral kBoundsMessageAttrName =
    "kjit.host.bounds_message";

/// Debug mode (DebugChecks.cpp): inserts kjit.assert checks of integer
/// divisors and memref indices, and marks the accesses through kernel
/// pointer parameters for the load/store lowering to check against the
/// backend's extents. Returns whether any access was marked (the object
/// then needs host kernel ABI 2). Runs before the conversion.
bool insertDebugChecks(mlir::ModuleOp module);

/// "file:line:col" of `loc` (the first such location inside fused, named
/// or call-site ones), or "" when it has none.
std::string describeLocation(mlir::Location loc);

/// The most workgroup memory a host kernel may have (per program): it is
/// thread-local storage of every worker thread (docs/HostTarget.md).
inline constexpr uint64_t kMaxWorkgroupBytes = 1u << 20;

/// Fails, naming the global and the sizes, when the module's workgroup
/// memory is more than kMaxWorkgroupBytes (or has no static size).
mlir::LogicalResult checkWorkgroupSize(mlir::ModuleOp module);

/// Workgroup memory becomes ordinary memory, held in thread-local globals
/// (see HostKernel.h). Returns the names of those globals. Runs before the
/// conversion.
llvm::SmallVector<mlir::StringAttr>
makeWorkgroupMemoryThreadLocal(mlir::ModuleOp module);

/// After the conversion: marks the workgroup globals thread-local and makes
/// every use take its address from an out-of-line accessor.
void lowerWorkgroupGlobals(mlir::OpBuilder &b, mlir::ModuleOp module,
                           llvm::ArrayRef<mlir::StringAttr> workgroup);

/// What the ABI symbols of one kernel need, taken before conversion.
struct KernelABIInfo {
  std::string name;
  /// The parameter types (kjit types), in order.
  llvm::SmallVector<mlir::Type> paramTypes;
  /// The kernel or a function it reaches has a barrier.
  bool usesBarrier = false;
  /// The signature types of the launch arguments, comma-separated
  /// ("*fp32,*kfp32,i32").
  std::string signature;
};

/// Emits, at the end of the module, kjit_host_entry_K, kjit_host_flags_K
/// and kjit_host_signature_K for `kernel`.
void emitKernelSymbols(mlir::OpBuilder &b, mlir::ModuleOp module,
                       const KernelABIInfo &kernel,
                       const mlir::LLVMTypeConverter &converter);

/// Emits kjit_host_abi_version = `version` at the end of the module: the
/// lowest version that has what the object uses (HostKernel.h).
void emitABIVersion(mlir::OpBuilder &b, mlir::ModuleOp module,
                    uint32_t version);

} // namespace kjit::host

#endif // KJIT_LIB_TARGET_HOST_HOSTTOLLVM_HOSTTOLLVM_H
