//===- ArgEncoding.h - launch arguments as ABI storage ----------*- C++ -*-===//
//
// How a bound launch argument crosses the plugin ABI (include/kjit-c/Plugin.h,
// kjit_arg): the stable dtype code, the pointer flags, and the value encoded
// in the parameter's signature type (`bits`, `bits_size`), next to ABI 1.0's
// kind and value fields. The runtime encodes each argument once per launch,
// so that backends copy bytes and never convert again. Part of the model
// library (it applies the binder's value rules): no LLVM or MLIR header.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_MODEL_ARGENCODING_H
#define KJIT_MODEL_ARGENCODING_H

#include "kjit-c/Plugin.h"
#include "kjit/Model/Argument.h"
#include "kjit/Model/DType.h"
#include "kjit/Model/Specialization.h"

#include "absl/status/status.h"

#include <cstdint>
#include <cstring>
#include <optional>

namespace kjit::rt {

/// The ABI's stable code of a dtype (KJIT_DTYPE_*; never 0).
int32_t abiDTypeCode(DType dtype);

/// The dtype of an ABI code; nullopt for KJIT_DTYPE_UNKNOWN and codes this
/// runtime does not know.
std::optional<DType> dtypeFromAbiCode(int32_t code);

/// Encodes `value` as the launch argument of a parameter of signature type
/// `type`. Writes the value fields of `arg` and nothing else (name, type
/// text, struct_size, is_constexpr are the caller's): the 1.1 storage fields
/// dtype, flags, bits and bits_size, and the 1.0 fields kind and
/// int/uint/float value, so that a backend built against ABI 1.0 keeps
/// working.
///
/// `value` is checked with the binder's own rules (lib/Model/ValueRules.h):
/// a value the binder bound to a parameter of this type always encodes (on
/// the launch path this is a no-op check); anything else is refused with the
/// binder's message, e.g. "integer 128 does not fit parameter type i8". Floats
/// round with FloatFormats.h (fp16 and bf16 straight from the double). A
/// scalar of an fp8 type has no encoding yet (Unimplemented). On an error the
/// value fields of `arg` are unspecified.
absl::Status encodeArgument(SigType type, const Argument &value, kjit_arg &arg);

/// The launch path's two halves of encodeArgument, with no check repeated:
/// encodeSignature writes what depends on the signature type alone (dtype,
/// flags, bits_size; a cache entry does it once, in its argument template)
/// and refuses a type that has no encoding (fp8 scalars, Unimplemented);
/// encodeBoundValue writes the value fields (bits and ABI 1.0's kind and
/// values) of a value the binder accepted for that type.
absl::Status encodeSignature(SigType type, kjit_arg &arg);
inline void encodeBoundValue(SigType type, const Argument &value,
                             kjit_arg &arg);
/// The storage alone of a value the binder accepted for `type`: the `bits`
/// that encodeBoundValue writes. ABI 1.4's launches of a kernel whose
/// backend took its template pass only these (kjit_backend_launch_args's
/// values).
inline uint64_t encodeBoundBits(SigType type, const Argument &value);

namespace detail {
/// ABI 1.0's kind and value fields of `value`, as the runtime always gave
/// them.
inline void fillKind(const Argument &value, kjit_arg &arg) {
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

/// The bits of storage of a scalar of `dtype` set: its width's low bits.
constexpr uint64_t storageMask(DType dtype) {
  unsigned size = byteWidth(dtype);
  return size == 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * size)) - 1;
}

/// isInteger and storageMask for the launch path, from the order of the
/// integer enumerators (i8, i16, i32, i64, then u8 to u64) instead of the
/// dtype table: a launch then reads no row of the table (a cache line or
/// two per dtype).
constexpr bool isIntegerStorage(DType dtype) {
  return dtype >= DType::I8 && dtype <= DType::U64;
}
constexpr uint64_t integerStorageMask(DType dtype) {
  unsigned log2Size =
      (static_cast<unsigned>(dtype) - static_cast<unsigned>(DType::I8)) & 3;
  return log2Size == 3 ? ~uint64_t(0) : (uint64_t(1) << (8u << log2Size)) - 1;
}
constexpr bool integerStorageHolds() {
  for (int i = 0; i < kNumDTypes; ++i) {
    auto dtype = static_cast<DType>(i);
    if (isIntegerStorage(dtype) != isInteger(dtype) ||
        (isInteger(dtype) && integerStorageMask(dtype) != storageMask(dtype)))
      return false;
  }
  return true;
}
static_assert(integerStorageHolds(),
              "isIntegerStorage and integerStorageMask assume the order of "
              "DType's integer enumerators");

/// The IEEE-754 single bits of `real`, rounded to nearest even.
inline uint64_t fp32Bits(double real) {
  float narrow = float(real);
  uint32_t bits;
  std::memcpy(&bits, &narrow, sizeof(bits));
  return bits;
}

/// encodeBoundBits for what its inline part leaves: i1, fp16, bf16 and
/// fp64, a non-float given for fp32, a bool given for an integer type.
uint64_t otherBits(SigType type, const Argument &value);
/// ABI 1.0's kind and value fields for the same values.
void fillOtherKind(SigType type, const Argument &value, kjit_arg &arg);
} // namespace detail

// Inline for pointers, integers and fp32, which are nearly every argument.
inline uint64_t encodeBoundBits(SigType type, const Argument &value) {
  if (type.isPointer())
    return value.kind() == ArgKind::Tensor ? value.address() : 0;
  if (value.kind() == ArgKind::Int && detail::isIntegerStorage(type.dtype))
    return uint64_t(value.asInt()) & detail::integerStorageMask(type.dtype);
  if (value.kind() == ArgKind::Float && type.dtype == DType::FP32)
    return detail::fp32Bits(value.asFloat());
  return detail::otherBits(type, value);
}

// The bits are encodeBoundBits'; the ABI 1.0 fields beside them are filled
// inline for pointers and integers.
inline void encodeBoundValue(SigType type, const Argument &value,
                             kjit_arg &arg) {
  arg.int_value = 0;
  arg.uint_value = 0;
  arg.float_value = 0;
  arg.bits = encodeBoundBits(type, value);
  if (type.isPointer() ||
      (value.kind() == ArgKind::Int && detail::isIntegerStorage(type.dtype))) {
    detail::fillKind(value, arg);
    return;
  }
  detail::fillOtherKind(type, value, arg);
}

} // namespace kjit::rt

#endif // KJIT_MODEL_ARGENCODING_H
