//===- Specialization.h - the specialization record -------------*- C++ -*-===//
//
// The specialization of one launch: per parameter the signature type, the
// spec key (D: divisible by 16, 1: equal to 1, N: neither) and the constexpr
// value, plus the launch options and the key. It is what the cache hook
// receives, what `kjit-specialize` applies to the IR, and what warmup and
// preload serialize (JSON, read back exactly). Part of the model library
// (docs/Architecture.md): no LLVM or MLIR header may be included here.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_MODEL_SPECIALIZATION_H
#define KJIT_MODEL_SPECIALIZATION_H

#include "kjit/Model/Argument.h"
#include "kjit/Model/DType.h"
#include "kjit/Model/LaunchOptions.h"

#include "absl/status/statusor.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kjit::rt {

/// The reference's compute_spec_key result for one parameter.
enum class SpecKey : uint8_t {
  /// No key: constexpr and do_not_specialize parameters.
  None,
  /// 'D': a pointer address or integer divisible by 16.
  Divisible16,
  /// '1': an integer equal to 1.
  EqualTo1,
  /// 'N': neither.
  Plain,
};

/// "D", "1", "N", or "" for SpecKey::None.
std::string_view toString(SpecKey key);

/// The type a non-constexpr parameter has in one specialization.
struct SigType {
  enum class Kind : uint8_t {
    /// A scalar of type `dtype` (i1, i32, u64, fp32, ...).
    Scalar = 1,
    /// A pointer to `dtype` elements ("*fp32").
    Pointer,
    /// A read-only pointer ("*kfp32").
    ConstPointer,
    /// A None argument: a null "*i8" pointer, folded to a null constant.
    /// Keyed apart from a real "*i8" pointer.
    NullPointer,
  };

  Kind kind = Kind::Scalar;
  DType dtype = DType::I32;

  bool isPointer() const { return kind != Kind::Scalar; }

  friend bool operator==(const SigType &a, const SigType &b) {
    return a.kind == b.kind && a.dtype == b.dtype;
  }
  friend bool operator!=(const SigType &a, const SigType &b) {
    return !(a == b);
  }
};

/// The reference's signature spelling: "i32", "fp32", "*fp16", "*kfp32";
/// a NullPointer is "*i8".
std::string toString(SigType type);

/// Inverse of toString for Scalar, Pointer and ConstPointer (a NullPointer
/// is spelled like a Pointer to i8; records tell them apart by the constant).
std::optional<SigType> parseSigType(std::string_view text);

/// One parameter of a specialization.
struct SpecializedParam {
  std::string name;
  bool isConstexpr = false;
  /// The signature type (non-constexpr parameters only).
  SigType type;
  /// The spec key (SpecKey::None for constexprs and do_not_specialize).
  SpecKey specKey = SpecKey::None;
  /// The constexpr value: None, Bool, Int, Float or DType (constexprs only).
  Argument value;
  /// The backend's own attributes that hold for the value: bit i is
  /// SpecializationRecord::backendAttributes[i] (non-constexprs only).
  uint32_t backendAttrs = 0;

  /// The value specialization folds into the IR, if any: the constexpr
  /// value, None for a NullPointer, the integer 1 for an EqualTo1 key.
  std::optional<Argument> constant() const;
};

/// The specialization record. The reference's serialized fields (name,
/// signature, constants, attrs, options, key) are views over `params`.
struct SpecializationRecord {
  /// The kernel name.
  std::string name;
  /// Every parameter, in declaration order.
  std::vector<SpecializedParam> params;
  /// Every launch option's value, defaults included.
  LaunchOptions options;
  /// The backend's own specialization attributes (plugin ABI 1.3,
  /// describe's spec_attributes), in its bit order; empty for a backend
  /// that has none. In the JSON each is a member of "attrs" beside
  /// divisibility_16 and equal_to_1, listing the parameters it holds for.
  std::vector<std::string> backendAttributes;
  /// The canonical key text (canonicalKey of the other fields).
  std::string key;
  /// Where the record was made (Kernel::warmup fills them; a record written
  /// by hand or by an older kjit has them empty, and nothing is checked):
  /// the backend's target and arch, and the kernel's dependency key (its
  /// source, its callees' and the values of the globals it reads). Not part
  /// of `key`; Kernel::preload refuses a record whose values differ.
  std::string target, arch, sourceHash;

  /// (name, type) of each non-constexpr parameter, in order.
  std::vector<std::pair<std::string, std::string>> signature() const;
  /// (name, value) of each folded constant, in parameter order.
  std::vector<std::pair<std::string, Argument>> constants() const;
  /// Names of the parameters with the D key.
  std::vector<std::string> divisibleBy16() const;
  /// Names of the parameters with the 1 key.
  std::vector<std::string> equalTo1() const;
  /// Names of the parameters backend attribute `bit` holds for.
  std::vector<std::string> withBackendAttribute(size_t bit) const;
  /// The parameter called `name`, or null.
  const SpecializedParam *find(std::string_view name) const;
};

/// The key as text, built from everything but `key` itself:
/// `x:*fp32:D,n:i32:1,p:*i8=none,B=1024|debug=false,...` (a backend
/// attribute that holds follows the spec key: `x:*fp32:D+pointer_range_32`)
/// with options sorted
/// by name, so that it does not depend on the order options were given.
std::string canonicalKey(const SpecializationRecord &record);

/// The readable one-line form the hooks receive:
/// `name[num_warps=4, num_ctas=1, num_stages=3, enable_fp_fusion=true](x:
/// *fp32, n: i32)`; a constexpr shows as `B: constexpr = 1024`.
std::string repr(const SpecializationRecord &record);

/// The record as one line of JSON (docs/Specialization.md shows the fields).
std::string toJson(const SpecializationRecord &record);

/// Reads toJson's output back exactly. Malformed or inconsistent input is an
/// error naming the field: "specialization record: field 'signature':
/// expected an object, got an array".
absl::StatusOr<SpecializationRecord>
specializationFromJson(std::string_view json);

/// Whether `name` is spelled as a backend's specialization attribute must
/// be ([a-z0-9_]+, at most 64 bytes): records use it as a JSON key and the
/// key text as a part, so describe (plugin ABI 1.3) and the record reader
/// hold names to this one rule.
bool isBackendAttributeName(std::string_view name);

/// Renders a constant as keys and reprs print it: "1024", "1.5", "true",
/// "none", "fp16" (a dtype).
std::string formatConstant(const Argument &value);

} // namespace kjit::rt

#endif // KJIT_MODEL_SPECIALIZATION_H
