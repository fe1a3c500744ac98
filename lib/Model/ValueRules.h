//===- ValueRules.h - how a launch value specializes ------------*- C++ -*-===//
//
// Internal to the model library. The reference's mangle_type and
// compute_spec_key, with kjit's deliberate differences, as inline functions:
// the binder runs them on its hot path, and the manifest verifier runs them
// on default values so that a default is checked by the same rules as a
// launch value.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_MODEL_VALUERULES_H
#define KJIT_LIB_MODEL_VALUERULES_H

#include "kjit/Model/Argument.h"
#include "kjit/Model/FloatFormats.h"
#include "kjit/Model/KernelManifest.h"
#include "kjit/Model/Specialization.h"

#include "absl/base/optimization.h"

#include <cstring>
#include <string>

namespace kjit::rt::detail {

/// Why a value does not fit a parameter.
enum class ValueError : uint8_t {
  Ok,
  /// An integer outside [-2^63, 2^64-1].
  BigInt,
  /// An integer outside the declared scalar type's range.
  IntRange,
  /// A tensor whose dtype differs from the typed pointer's element type.
  DTypeMismatch,
  /// A value of the wrong kind for the parameter.
  KindMismatch,
  /// A callable passed to a constexpr parameter.
  CallableConstexpr,
  /// A tensor passed to a constexpr parameter.
  TensorConstexpr,
  /// A tensor of a dtype that kernel IR has no type for (fp8e4b15): refused
  /// here rather than failing inside the compiler.
  NoKernelType,
  /// A finite number that would round to infinity in a declared fp16 or
  /// bf16 parameter; an infinity asked for stays one.
  FloatRange,
};

/// The largest finite value of a float dtype narrower than a double (fp16,
/// bf16, fp32); the binder's fast rule sends anything beyond it to the
/// general rules, which decide with roundsToInfinity (fp16 and bf16).
constexpr double largestFinite(DType dtype) {
  switch (dtype) {
  case DType::FP16:
    return 65504.0;
  case DType::BF16:
    return 3.38953138925153547590470800371487866880e38;
  case DType::FP32:
    return 3.40282346638528859811704183484516925440e38;
  default:
    return 1.79769313486231570814527423731704356798e308;
  }
}

/// The per-parameter facts the rules need.
struct ParamRules {
  ParamType type;
  bool isConstexpr = false;
  bool doNotSpecialize = false;
  /// False for do_not_specialize_on_alignment.
  bool align = true;
  bool isConst = false;
};

inline ParamRules rulesOf(const KernelParam &param) {
  return {param.type, param.isConstexpr, param.doNotSpecialize,
          !param.doNotSpecializeOnAlignment, param.isConst};
}

inline constexpr Int128 kMinInt64 = integerMin(DType::I64);
inline constexpr Int128 kMaxUInt64 = integerMax(DType::U64);

/// Whether `v` is representable in integer dtype `dtype`.
inline bool fitsInteger(Int128 v, DType dtype) {
  return isInteger(dtype) && v >= integerMin(dtype) && v <= integerMax(dtype);
}

/// mangle_type for an int: i32, then u64 for [2^63, 2^64-1], then i64.
inline DType integerTypeOf(Int128 v) {
  if (v >= integerMin(DType::I32) && v <= integerMax(DType::I32))
    return DType::I32;
  if (v > integerMax(DType::I64))
    return DType::U64;
  return DType::I64;
}

/// compute_spec_key for an integer (bools never get here: kjit keys them N).
inline SpecKey integerSpecKey(Int128 v, bool align) {
  if (align && v % 16 == 0)
    return SpecKey::Divisible16;
  if (v == 1)
    return SpecKey::EqualTo1;
  return SpecKey::Plain;
}

/// Checks and normalizes a value for a declared scalar type: ints and bools
/// become the declared kind (an int for an integer type, a bool for i1, a
/// float for a float type). Shared by constexpr and runtime parameters.
/// Like every rule here, it leaves `arg` unchanged when it fails, so that
/// the error message can show the value as given.
inline ValueError normalizeScalar(DType dtype, Argument &arg) {
  ArgKind kind = arg.kind();
  if (isBool(dtype)) {
    if (kind == ArgKind::Bool)
      return ValueError::Ok;
    if (kind != ArgKind::Int)
      return ValueError::KindMismatch;
    if (arg.asInt() != 0 && arg.asInt() != 1)
      return ValueError::IntRange;
    arg = Argument::boolean(arg.asInt() == 1);
    return ValueError::Ok;
  }
  if (isInteger(dtype)) {
    if (kind == ArgKind::Bool) {
      arg = Argument::integer(arg.asBool() ? 1 : 0);
      return ValueError::Ok;
    }
    if (kind != ArgKind::Int)
      return ValueError::KindMismatch;
    return fitsInteger(arg.asInt(), dtype) ? ValueError::Ok
                                           : ValueError::IntRange;
  }
  // A float type: Python converts ints and bools to float when it packs the
  // argument; so does kjit.
  // On an error the argument stays as given, for the message.
  if (kind != ArgKind::Float && kind != ArgKind::Int && kind != ArgKind::Bool)
    return ValueError::KindMismatch;
  double value =
      kind == ArgKind::Float ? arg.asFloat() : static_cast<double>(arg.asInt());
  // fp16 and bf16 only: an fp32 parameter takes a double as C's cast does,
  // as the reference's launcher passes a Python float (docs/KjitRun.md).
  if (ABSL_PREDICT_FALSE(dtype != DType::FP32 &&
                         roundsToInfinity(dtype, value)))
    return ValueError::FloatRange;
  if (kind != ArgKind::Float)
    arg = Argument::fp(value);
  return ValueError::Ok;
}

/// mangle_type + compute_spec_key for a non-constexpr parameter. Normalizes
/// `arg` in place and writes the signature type and spec key.
inline ValueError specializeValue(const ParamRules &rules, Argument &arg,
                                  SigType &type, SpecKey &spec) {
  ArgKind kind = arg.kind();
  // Every integer must fit in 64 bits (the reference would call a larger one
  // i64 and fail later, or wrap).
  if (kind == ArgKind::Int &&
      ABSL_PREDICT_FALSE(arg.asInt() < kMinInt64 || arg.asInt() > kMaxUInt64))
    return ValueError::BigInt;
  spec = SpecKey::Plain;
  switch (rules.type.kind) {
  case ParamType::Kind::Any:
    switch (kind) {
    case ArgKind::None:
      type = {SigType::Kind::NullPointer, DType::I8};
      break;
    case ArgKind::Bool:
      type = {SigType::Kind::Scalar, DType::I1};
      break;
    case ArgKind::Int:
      type = {SigType::Kind::Scalar, integerTypeOf(arg.asInt())};
      spec = integerSpecKey(arg.asInt(), rules.align);
      break;
    case ArgKind::Float:
      type = {SigType::Kind::Scalar, DType::FP32};
      break;
    case ArgKind::Tensor:
      if (ABSL_PREDICT_FALSE(kernelIRTypeName(arg.dtype()).empty()))
        return ValueError::NoKernelType;
      type = {rules.isConst || arg.isReadOnly() ? SigType::Kind::ConstPointer
                                                : SigType::Kind::Pointer,
              arg.dtype()};
      if (rules.align && (arg.isMock() || arg.address() % 16 == 0))
        spec = SpecKey::Divisible16;
      break;
    default:
      return ValueError::KindMismatch;
    }
    break;
  case ParamType::Kind::Pointer:
    if (kind == ArgKind::None) {
      type = {SigType::Kind::NullPointer, DType::I8};
      break;
    }
    if (kind != ArgKind::Tensor)
      return ValueError::KindMismatch;
    if (arg.dtype() != rules.type.dtype)
      return ValueError::DTypeMismatch;
    type = {rules.isConst || arg.isReadOnly() ? SigType::Kind::ConstPointer
                                              : SigType::Kind::Pointer,
            arg.dtype()};
    if (rules.align && (arg.isMock() || arg.address() % 16 == 0))
      spec = SpecKey::Divisible16;
    break;
  case ParamType::Kind::Scalar: {
    type = {SigType::Kind::Scalar, rules.type.dtype};
    // The common case inline: an int for an integer type.
    if (kind == ArgKind::Int && isInteger(rules.type.dtype) &&
        !isBool(rules.type.dtype)) {
      if (!fitsInteger(arg.asInt(), rules.type.dtype))
        return ValueError::IntRange;
      spec = integerSpecKey(arg.asInt(), rules.align);
      break;
    }
    bool wasBool = kind == ArgKind::Bool;
    if (ValueError error = normalizeScalar(rules.type.dtype, arg);
        error != ValueError::Ok)
      return error;
    // Booleans never take D or 1, whatever the declared type.
    if (arg.kind() == ArgKind::Int && !wasBool)
      spec = integerSpecKey(arg.asInt(), rules.align);
    break;
  }
  }
  if (rules.doNotSpecialize)
    spec = SpecKey::None;
  return ValueError::Ok;
}

/// Checks and normalizes a constexpr value.
inline ValueError normalizeConstexpr(const ParamRules &rules, Argument &arg) {
  ArgKind kind = arg.kind();
  if (kind == ArgKind::Callable)
    return ValueError::CallableConstexpr;
  if (kind == ArgKind::Tensor)
    return ValueError::TensorConstexpr;
  if (kind == ArgKind::Int &&
      (arg.asInt() < kMinInt64 || arg.asInt() > kMaxUInt64))
    return ValueError::BigInt;
  if (rules.type.kind == ParamType::Kind::Scalar)
    return normalizeScalar(rules.type.dtype, arg);
  return ValueError::Ok;
}

/// What a parameter accepts, for messages.
inline std::string expectedValue(const ParamRules &rules) {
  switch (rules.type.kind) {
  case ParamType::Kind::Any:
    return rules.isConstexpr ? "an int, a float, a bool, None or a dtype"
                             : "a tensor, an int, a float, a bool or None";
  case ParamType::Kind::Pointer:
    return "a tensor of " + std::string(canonicalName(rules.type.dtype)) +
           " or None";
  case ParamType::Kind::Scalar:
    if (isBool(rules.type.dtype))
      return "a bool";
    if (isInteger(rules.type.dtype))
      return "an int";
    return "a number";
  }
  return "";
}

/// The message for `error`, without the "argument 'x' of kernel 'k': "
/// prefix, which the caller supplies. `original` is the value as given.
std::string describeValueError(ValueError error, const ParamRules &rules,
                               const Argument &original);

/// The type's part of a parameter's key word (paramWord).
inline uint64_t typeBits(SigType type) {
  return static_cast<uint64_t>(type.kind) |
         (static_cast<uint64_t>(type.dtype) << 8);
}

/// The spec key's part of a parameter's key word (paramWord).
inline uint64_t specKeyBits(SpecKey spec) {
  return static_cast<uint64_t>(spec) << 16;
}

/// One key word for a non-constexpr parameter: type kind, dtype, spec key.
inline uint64_t paramWord(SigType type, SpecKey spec) {
  return typeBits(type) | specKeyBits(spec);
}

/// A parameter's backend attribute bits in its key word, above what
/// paramWord uses (at most 8 attributes).
inline uint64_t backendAttributeBits(uint32_t bits) {
  return static_cast<uint64_t>(bits & 0xff) << 24;
}

/// The three key words of a constexpr value: a tag (kind, dtype), then the
/// payload (a 128-bit int as two halves, a double's bits).
inline void constexprWords(const Argument &value, uint64_t *words) {
  words[0] = static_cast<uint64_t>(value.kind()) |
             (value.kind() == ArgKind::DType
                  ? static_cast<uint64_t>(value.dtype()) << 8
                  : 0);
  words[1] = 0;
  words[2] = 0;
  switch (value.kind()) {
  case ArgKind::Bool:
  case ArgKind::Int: {
    unsigned __int128 bits = static_cast<unsigned __int128>(value.asInt());
    words[1] = static_cast<uint64_t>(bits);
    words[2] = static_cast<uint64_t>(bits >> 64);
    break;
  }
  case ArgKind::Float: {
    double f = value.asFloat();
    std::memcpy(&words[1], &f, sizeof(double));
    break;
  }
  default:
    break;
  }
}

/// Mixes one key word at `position` (splitmix64's finalizer over the word
/// plus a per-position offset). Words are mixed independently and summed, so
/// the multiplies run in parallel and one option's word can be replaced in
/// the sum without rehashing the rest.
inline uint64_t mixWord(uint64_t word, uint64_t position) {
  uint64_t x = word + (position + 1) * 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// The final hash of a sum of mixed words.
inline uint64_t finishHash(uint64_t sum, uint64_t count) {
  return mixWord(sum ^ count, 0x5851F42D4C957F2Dull);
}

} // namespace kjit::rt::detail

#endif // KJIT_LIB_MODEL_VALUERULES_H
