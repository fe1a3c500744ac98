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

/// The 1.0 description of a normalized value, as the runtime always gave it.
void fillKind(const Argument &value, kjit_arg &arg) {
  switch (value.kind()) {
  case ArgKind::None:
    arg.kind = KJIT_ARG_NONE;
    break;
  case ArgKind::Bool:
    arg.kind = KJIT_ARG_BOOL;
    arg.int_value = value.asBool();
    break;
  case ArgKind::Int:
    if (value.asInt() > INT64_MAX) {
      arg.kind = KJIT_ARG_UINT;
      arg.uint_value = uint64_t(value.asInt());
    } else {
      arg.kind = KJIT_ARG_INT;
      arg.int_value = int64_t(value.asInt());
    }
    break;
  case ArgKind::Float:
    arg.kind = KJIT_ARG_FLOAT;
    arg.float_value = value.asFloat();
    break;
  case ArgKind::Tensor:
    arg.kind = KJIT_ARG_POINTER;
    arg.uint_value = value.address();
    break;
  case ArgKind::DType:
  case ArgKind::Callable:
    break; // refused before this is called
  }
}

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

absl::Status encodeArgument(SigType type, const Argument &given,
                            kjit_arg &arg) {
  arg.kind = KJIT_ARG_NONE;
  arg.int_value = 0;
  arg.uint_value = 0;
  arg.float_value = 0;
  arg.string_value = nullptr;
  arg.string_len = 0;
  arg.dtype = abiDTypeCode(type.dtype);
  arg.flags = 0;
  arg.bits = 0;
  arg.bits_size = 0;
  arg.reserved1 = 0;

  detail::ParamRules rules;
  if (type.isPointer()) {
    rules.type = ParamType::pointer(type.dtype);
    arg.flags = KJIT_ARG_FLAG_POINTER;
    if (type.kind == SigType::Kind::ConstPointer)
      arg.flags |= KJIT_ARG_FLAG_CONST;
    arg.bits_size = sizeof(uint64_t);
    if (given.kind() == ArgKind::None) {
      arg.flags |= KJIT_ARG_FLAG_NULL;
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
    arg.bits = given.address();
    fillKind(given, arg);
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

  unsigned size = byteWidth(type.dtype);
  switch (type.dtype) {
  case DType::I1:
    arg.bits = value.asBool() ? 1 : 0;
    break;
  case DType::I8:
  case DType::I16:
  case DType::I32:
  case DType::I64:
  case DType::U8:
  case DType::U16:
  case DType::U32:
  case DType::U64: {
    // Two's complement in `size` bytes: the value fits (checked above).
    uint64_t mask = size == 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * size)) - 1;
    arg.bits = uint64_t(value.asInt()) & mask;
    break;
  }
  case DType::FP16:
    arg.bits = fp16FromDouble(value.asFloat());
    break;
  case DType::BF16:
    arg.bits = bf16FromDouble(value.asFloat());
    break;
  case DType::FP32: {
    float narrow = float(value.asFloat()); // rounds to nearest even
    uint32_t bits;
    std::memcpy(&bits, &narrow, sizeof(bits));
    arg.bits = bits;
    break;
  }
  case DType::FP64: {
    double wide = value.asFloat();
    std::memcpy(&arg.bits, &wide, sizeof(wide));
    break;
  }
  case DType::FP8E4NV:
  case DType::FP8E5:
  case DType::FP8E4B15:
  case DType::FP8E4B8:
  case DType::FP8E5B16:
    arg.dtype = KJIT_DTYPE_UNKNOWN;
    return absl::UnimplementedError(
        kjit::strCat("a scalar of type ", canonicalName(type.dtype),
                     " cannot be passed: the runtime has no encoding for "
                     "fp8 scalars"));
  }
  arg.bits_size = size;
  fillKind(value, arg);
  return absl::OkStatus();
}

} // namespace kjit::rt
