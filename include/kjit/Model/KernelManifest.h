//===- KernelManifest.h - what the runtime knows about a kernel -*- C++ -*-===//
//
// A kernel manifest is what the runtime knows about a kernel without parsing
// its IR: its name and, per parameter, the name, declared type and the
// attributes of the reference's KernelParam. The compiler fills it from a
// `kjit.kernel` op; it is serialized to JSON so that a warm process reads it
// from the disk cache instead of loading MLIR (a process that links LLVM
// and parses IR starts an order of magnitude slower than one that does not;
// docs/Architecture.md has the figures). Part of the model library: no LLVM
// or MLIR header may be included here.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_MODEL_KERNELMANIFEST_H
#define KJIT_MODEL_KERNELMANIFEST_H

#include "kjit/Model/Argument.h"
#include "kjit/Model/DType.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kjit::rt {

/// The declared type of a kernel parameter.
struct ParamType {
  enum class Kind : uint8_t {
    /// Unannotated (`!kjit.any`): the type comes from the launch value.
    Any,
    /// A scalar: i1, i8..i64, u8..u64, fp16, bf16, fp32, fp64.
    Scalar,
    /// A global-memory pointer (`!kjit.ptr<T>`) with element dtype `dtype`.
    Pointer,
  };

  Kind kind = Kind::Any;
  /// The scalar type, or the pointer's element type; unused for Any.
  DType dtype = DType::I8;

  static ParamType any() { return ParamType(); }
  static ParamType scalar(DType dtype) { return {Kind::Scalar, dtype}; }
  static ParamType pointer(DType dtype) { return {Kind::Pointer, dtype}; }

  friend bool operator==(const ParamType &a, const ParamType &b) {
    return a.kind == b.kind && (a.kind == Kind::Any || a.dtype == b.dtype);
  }
  friend bool operator!=(const ParamType &a, const ParamType &b) {
    return !(a == b);
  }
};

/// "any", "i32", "fp32", "*fp16" (canonical dtype names).
std::string toString(ParamType type);

/// Inverse of toString; also accepts the framework dtype spellings of the
/// canonicalisation table ("float32", "*bfloat16"). nullopt when unknown.
std::optional<ParamType> parseParamType(std::string_view text);

/// One kernel parameter, as the reference's KernelParam describes it.
struct KernelParam {
  /// The parameter name; keyword arguments bind by it.
  std::string name;
  ParamType type;
  /// `kjit.constexpr`: the value is part of the key and folded at compile
  /// time.
  bool isConstexpr = false;
  /// `kjit.do_not_specialize`: no spec key (D / 1 / N).
  bool doNotSpecialize = false;
  /// `kjit.do_not_specialize_on_alignment`: never the D spec key.
  bool doNotSpecializeOnAlignment = false;
  /// `kjit.const`: a read-only pointer (`*k` in signatures).
  bool isConst = false;
  /// `kjit.default`: used when a launch omits the argument. An int, float,
  /// bool or None (`Argument::none()`, the unit attribute).
  std::optional<Argument> defaultValue;
};

/// What the runtime knows about one kernel.
struct KernelManifest {
  /// The kernel's symbol name.
  std::string name;
  /// Parameters in declaration order.
  std::vector<KernelParam> params;
};

/// Checks a manifest's rules, each error naming the kernel and parameter:
/// names non-empty and unique and not a launch option's keyword; a constexpr
/// is not a pointer and not do_not_specialize; const only on pointers (or
/// unannotated parameters); no fp8 scalars; defaults are an int, float, bool
/// or None that fits the type, and only on trailing parameters.
absl::Status verifyManifest(const KernelManifest &manifest);

/// The manifest as one line of JSON:
/// `{"version":1,"name":"add","params":[{"name":"x","type":"*fp32",
/// "constexpr":false,...,"default":null}]}`. A parameter without a default
/// has no "default" member; `"default":null` is a None default.
std::string manifestToJson(const KernelManifest &manifest);

/// Reads manifestToJson's output back exactly, then verifies it. Errors name
/// what is wrong ("kernel manifest: params[1].type: unknown type 'fp33'").
absl::StatusOr<KernelManifest> manifestFromJson(std::string_view json);
class JsonValue;

/// The same for a manifest already parsed, as an object inside a larger
/// document (a module's analysis in the disk cache).
absl::StatusOr<KernelManifest> manifestFromJsonValue(const JsonValue &doc);

} // namespace kjit::rt

#endif // KJIT_MODEL_KERNELMANIFEST_H
