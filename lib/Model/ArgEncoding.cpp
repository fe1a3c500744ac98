//===- ArgEncoding.cpp - launch arguments as the plugin ABI's storage -----===//

#include "kjit/Model/ArgEncoding.h"

#include "ValueRules.h"
#include "kjit/Model/FloatFormats.h"
#include "kjit/Support/StrCat.h"

#include <array>
#include <cstring>

namespace kjit::rt {
namespace {

/// DType -> ABI code, indexed by the DType enumerator. The codes are the
/// ABI's (frozen); the enumerator order is not, so every row names both.
struct CodeRow {
  DType dtype;
  int32_t code;
};
constexpr std::array<CodeRow, kNumDTypes> kCodes = {{
    {DType::I1, KJIT_DTYPE_I1},
    {DType::I8, KJIT_DTYPE_I8},
    {DType::I16, KJIT_DTYPE_I16},
    {DType::I32, KJIT_DTYPE_I32},
    {DType::I64, KJIT_DTYPE_I64},
    {DType::U8, KJIT_DTYPE_U8},
    {DType::U16, KJIT_DTYPE_U16},
    {DType::U32, KJIT_DTYPE_U32},
    {DType::U64, KJIT_DTYPE_U64},
    {DType::FP16, KJIT_DTYPE_FP16},
    {DType::BF16, KJIT_DTYPE_BF16},
    {DType::FP32, KJIT_DTYPE_FP32},
    {DType::FP64, KJIT_DTYPE_FP64},
    {DType::FP8E4NV, KJIT_DTYPE_FP8E4NV},
    {DType::FP8E5, KJIT_DTYPE_FP8E5},
    {DType::FP8E4B15, KJIT_DTYPE_FP8E4B15},
    {DType::FP8E4B8, KJIT_DTYPE_FP8E4B8},
    {DType::FP8E5B16, KJIT_DTYPE_FP8E5B16},
}};

constexpr bool rowsInEnumeratorOrder() {
  for (int i = 0; i < kNumDTypes; ++i)
    if (static_cast<int>(kCodes[i].dtype) != i)
      return false;
  return true;
}
static_assert(rowsInEnumeratorOrder(), "kCodes must be indexed by DType");

absl::Status refuse(detail::ValueError error, const detail::ParamRules &rules,
                    const Argument &given) {
  return absl::InvalidArgumentError(
      detail::describeValueError(error, rules, given));
}

} // namespace

int32_t abiDTypeCode(DType dtype) {
  return kCodes[static_cast<int>(dtype)].code;
}

std::optional<DType> dtypeFromAbiCode(int32_t code) {
  for (const CodeRow &row : kCodes)
    if (row.code == code)
      return row.dtype;
  return std::nullopt;
}

absl::Status encodeSignature(SigType type, kjit_arg &arg) {
  arg.dtype = abiDTypeCode(type.dtype);
  arg.flags = 0;
  arg.bits_size = 0;
  arg.reserved1 = 0;
  arg.string_value = nullptr;
  arg.string_len = 0;
  if (type.isPointer()) {
    arg.flags = KJIT_ARG_FLAG_POINTER;
    if (type.kind == SigType::Kind::ConstPointer)
      arg.flags |= KJIT_ARG_FLAG_CONST;
    if (type.kind == SigType::Kind::NullPointer)
      arg.flags |= KJIT_ARG_FLAG_NULL;
    arg.bits_size = sizeof(uint64_t);
    return absl::OkStatus();
  }
  if (bitWidth(type.dtype) == 8 && isFloat(type.dtype)) {
    arg.dtype = KJIT_DTYPE_UNKNOWN;
    return absl::UnimplementedError(
        kjit::strCat("a scalar of type ", canonicalName(type.dtype),
                     " cannot be passed: the runtime has no encoding for "
                     "fp8 scalars"));
  }
  arg.bits_size = byteWidth(type.dtype);
  return absl::OkStatus();
}

absl::Status encodeArgument(SigType type, const Argument &given,
                            kjit_arg &arg) {
  if (absl::Status encodable = encodeSignature(type, arg); !encodable.ok())
    return encodable;
  detail::ParamRules rules;
  if (type.isPointer()) {
    rules.type = ParamType::pointer(type.dtype);
    if (given.kind() == ArgKind::None) {
      // None is a null pointer whatever the pointer type.
      arg.flags |= KJIT_ARG_FLAG_NULL;
      encodeBoundValue(type, given, arg);
      return absl::OkStatus();
    }
    if (type.kind == SigType::Kind::NullPointer)
      return absl::InvalidArgumentError(
          kjit::strCat("expected None (parameter type *i8, a null pointer "
                       "folded into the code), got ",
                       describeArgument(given)));
    if (given.kind() != ArgKind::Tensor)
      return refuse(detail::ValueError::KindMismatch, rules, given);
    if (given.dtype() != type.dtype)
      return refuse(detail::ValueError::DTypeMismatch, rules, given);
    encodeBoundValue(type, given, arg);
    return absl::OkStatus();
  }
  rules.type = ParamType::scalar(type.dtype);
  if (given.kind() == ArgKind::Int &&
      (given.asInt() < detail::kMinInt64 || given.asInt() > detail::kMaxUInt64))
    return refuse(detail::ValueError::BigInt, rules, given);
  Argument value = given;
  if (detail::ValueError error = detail::normalizeScalar(type.dtype, value);
      error != detail::ValueError::Ok)
    return refuse(error, rules, given);
  encodeBoundValue(type, value, arg);
  return absl::OkStatus();
}

namespace {
/// A number the binder accepted for a float type, as a double.
double realOf(const Argument &value) {
  return value.kind() == ArgKind::Float  ? value.asFloat()
         : value.kind() == ArgKind::Bool ? double(value.asBool())
                                         : double(value.asInt());
}

/// A bool given for an integer type is 0 or 1.
Argument asInteger(const Argument &value) {
  return value.kind() == ArgKind::Bool
             ? Argument::integer(value.asBool() ? 1 : 0)
             : value;
}
} // namespace

uint64_t detail::otherBits(SigType type, const Argument &value) {
  // The binder accepted the value for this type: a bool or an integer in
  // range for integer types, any number for float types.
  switch (type.dtype) {
  case DType::I1:
    return value.kind() == ArgKind::Bool ? uint64_t(value.asBool())
                                         : uint64_t(value.asInt() != 0);
  case DType::FP16:
    return fp16FromDouble(realOf(value));
  case DType::BF16:
    return bf16FromDouble(realOf(value));
  case DType::FP32:
    return fp32Bits(realOf(value));
  case DType::FP64: {
    double real = realOf(value);
    uint64_t bits;
    std::memcpy(&bits, &real, sizeof(bits));
    return bits;
  }
  default:
    return uint64_t(asInteger(value).asInt()) & storageMask(type.dtype);
  }
}

void detail::fillOtherKind(SigType type, const Argument &value, kjit_arg &arg) {
  switch (type.dtype) {
  case DType::I1:
    arg.kind = KJIT_ARG_BOOL;
    arg.int_value = int64_t(arg.bits);
    return;
  case DType::FP16:
  case DType::BF16:
  case DType::FP32:
  case DType::FP64:
    arg.kind = KJIT_ARG_FLOAT;
    arg.float_value = realOf(value);
    return;
  default:
    fillKind(asInteger(value), arg);
    return;
  }
}

} // namespace kjit::rt
