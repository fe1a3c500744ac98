//===- ApplySpecialization.h - applying a specialization --------*- C++ -*-===//
//
// The compiler-side form of a specialization and the function that applies
// it to a kjit.kernel (what the kjit-specialize pass runs). The runtime's
// record (include/kjit/Model/Specialization.h) converts to it.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_TRANSFORMS_APPLYSPECIALIZATION_H
#define KJIT_TRANSFORMS_APPLYSPECIALIZATION_H

#include "kjit/Dialect/Kjit/IR/Kjit.h"

#include "kjit/Model/Specialization.h"

#include "llvm/ADT/SmallVector.h"

#include <string>

namespace kjit {

namespace rt {
struct SpecializationRecord;
} // namespace rt

/// How one kernel parameter is specialized.
struct ParamSpecialization {
  std::string name;
  /// The signature type of a non-constexpr parameter: a scalar type or a
  /// `!kjit.ptr<...>`; null for a constexpr.
  mlir::Type type;
  /// The value folded into the body: a constexpr's value (IntegerAttr of
  /// i64, FloatAttr of f64, BoolAttr), UnitAttr for None, or the integer 1
  /// of a parameter with the `1` spec key. Null when nothing is folded.
  mlir::Attribute constant;
  /// The `D` spec key: divisible by 16.
  bool divisibleBy16 = false;
  /// The launch backend's own attributes that hold for the value (plugin
  /// ABI 1.3): `kjit.spec_attrs`.
  llvm::SmallVector<std::string> backendAttributes;
  /// The signature type a launch passes for a non-constexpr parameter
  /// (#kjit.signature<const !kjit.ptr<f32>>, <!kjit.ptr<i8>> for None,
  /// <ui64>); null for a constexpr. It decides `kjit.signature_type` where
  /// `type` cannot say it.
  SignatureTypeAttr signatureType;
};

/// A specialization of one kernel.
struct KernelSpecialization {
  std::string kernel;
  llvm::SmallVector<ParamSpecialization> params;
};

/// Parses the inline form of the kjit-specialize `spec` option, one entry per
/// parameter:
///   name:TYPE[:KEY]  a non-constexpr parameter; TYPE as in signatures
///                    (i32, fp32, *fp16, *kfp32), KEY D, 1 or N (default N)
///   name=VALUE       a constexpr value (42, -1, 2.5, true, false) or none
std::optional<KernelSpecialization>
parseSpecialization(llvm::StringRef kernel, llvm::ArrayRef<std::string> entries,
                    mlir::MLIRContext *context, std::string &error);

/// Reads a specialization record as the runtime writes it (JSON; see
/// docs/Specialization.md). The kernel name comes from the record.
std::optional<KernelSpecialization>
readSpecializationRecord(llvm::StringRef json, mlir::MLIRContext *context,
                         std::string &error);

/// The same from a record already read: no JSON is parsed.
std::optional<KernelSpecialization>
specializationFromRecord(const rt::SpecializationRecord &record,
                         mlir::MLIRContext *context, std::string &error);

/// The MLIR type of a typed signature type, or null where MLIR has no such
/// element type (fp8e4b15).
mlir::Type signatureType(const rt::SigType &type, mlir::MLIRContext *context);

/// The signature type a launch passes, typed: its MLIR type with the
/// signedness kept (u64 -> ui64), and whether a pointer is read-only; null
/// where MLIR has no such element type.
SignatureTypeAttr getSignatureTypeAttr(const rt::SigType &type,
                                       mlir::MLIRContext *context);

/// The MLIR type of a signature type ("i32" -> i32, "u64" -> i64, "*fp32" ->
/// !kjit.ptr<f32>, "*ku8" -> !kjit.ptr<ui8>), or null with `error` set.
mlir::Type parseSignatureType(llvm::StringRef text, mlir::MLIRContext *context,
                              std::string &error);

/// The signature spelling of a parameter type, the inverse of
/// parseSignatureType: i32 -> "i32", f32 -> "fp32", !kjit.ptr<ui8> -> "*u8"
/// ("*ku8" when `isConst`), !kjit.any -> "any"; i32 -> "u32" when
/// `isUnsigned` (a `kjit.unsigned` parameter).
std::string printSignatureType(mlir::Type type, bool isConst = false,
                               bool isUnsigned = false);

/// The runtime's spelling of a typed signature type ("*kfp32", "*i8",
/// "u64"), where text leaves the compiler (the host kernel ABI's signature
/// symbol) and in messages.
std::string printSignatureType(SignatureTypeAttr type);

/// printSignatureType of parameter `index` of `kernel`, with its
/// `kjit.const` and `kjit.unsigned` flags.
std::string printParamSignatureType(KernelOp kernel, unsigned index);

/// The attribute specialization puts on the `kjit.null` that replaces a
/// parameter bound to None: the parameter's name (a StringAttr), so that
/// kjit-check-none-pointers can name it when the kernel dereferences it.
inline constexpr llvm::StringLiteral kNoneParamAttrName = "kjit.none_param";

/// Applies `spec` to `kernel`: gives `!kjit.any` parameters their types and
/// resolves their casts, folds constexprs (and removes those parameters),
/// None and `1` parameters into constants, marks `D` parameters with
/// `kjit.divisibility = 16`, and gives `kjit.signature_type` to parameters
/// whose signature type is not what their type (and `kjit.const` and
/// `kjit.unsigned`) say. Emits an error on the kernel or the offending
/// operation and fails when the specialization does not fit the kernel.
mlir::LogicalResult applySpecialization(KernelOp kernel,
                                        const KernelSpecialization &spec);

} // namespace kjit

#endif // KJIT_TRANSFORMS_APPLYSPECIALIZATION_H
