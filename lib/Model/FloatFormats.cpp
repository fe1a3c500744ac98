//===- FloatFormats.cpp - small binary floating-point formats -------------===//

#include "kjit/Model/FloatFormats.h"

#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>

namespace kjit::rt {

uint64_t roundToBinaryFormat(double value, unsigned exponentBits,
                             unsigned mantissaBits) {
  assert(exponentBits >= 2 && exponentBits <= 11 && mantissaBits >= 1 &&
         mantissaBits <= 52 && "unsupported binary format");
  const unsigned e = exponentBits, m = mantissaBits;
  const int bias = (1 << (e - 1)) - 1;
  const uint64_t infinity = ((uint64_t(1) << e) - 1) << m;

  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  const uint64_t sign = (bits >> 63) << (e + m);
  const uint64_t magnitude = bits & ~(uint64_t(1) << 63);
  const uint64_t doubleExponent = magnitude >> 52;
  const uint64_t fraction = magnitude & ((uint64_t(1) << 52) - 1);

  if (doubleExponent == 0x7ff) {
    if (fraction == 0)
      return sign | infinity;
    // A quiet NaN keeping the leading payload bits, as hardware converts.
    return sign | infinity | (uint64_t(1) << (m - 1)) | (fraction >> (52 - m));
  }
  if (magnitude == 0)
    return sign;

  // value = significand * 2^exponent with an integer significand < 2^53.
  uint64_t significand;
  int exponent;
  if (doubleExponent == 0) {
    significand = fraction;
    exponent = -1074;
  } else {
    significand = fraction | (uint64_t(1) << 52);
    exponent = static_cast<int>(doubleExponent) - 1075;
  }
  // The exponent of the leading bit, clamped to the format's smallest normal
  // exponent: below it the spacing of subnormals applies.
  int leading = exponent + 63 - __builtin_clzll(significand);
  int targetExponent = std::max(leading, 1 - bias);
  // Round significand * 2^exponent to a multiple of 2^(targetExponent - m).
  int shift = targetExponent - static_cast<int>(m) - exponent;
  uint64_t rounded;
  if (shift <= 0) {
    // Only a double with fewer significant bits than the target; exact.
    rounded = significand << -shift;
  } else if (shift >= 54) {
    // significand < 2^53, so the value is below half of the spacing.
    rounded = 0;
  } else {
    rounded = significand >> shift;
    uint64_t remainder = significand & ((uint64_t(1) << shift) - 1);
    uint64_t half = uint64_t(1) << (shift - 1);
    if (remainder > half || (remainder == half && (rounded & 1)))
      ++rounded;
  }
  // A normal number encodes as ((biased exponent - 1) << m) + rounded, the
  // implicit bit of `rounded` adding the missing 1 to the exponent field. The
  // same sum encodes subnormals (field 0, rounded < 2^m), a subnormal
  // rounding up to the smallest normal, and a carry out of the mantissa.
  uint64_t encoded =
      (static_cast<uint64_t>(targetExponent + bias - 1) << m) + rounded;
  if (encoded >= infinity)
    encoded = infinity;
  return sign | encoded;
}

double decodeBinaryFormat(uint64_t bits, unsigned exponentBits,
                          unsigned mantissaBits) {
  const unsigned e = exponentBits, m = mantissaBits;
  const int bias = (1 << (e - 1)) - 1;
  const bool negative = (bits >> (e + m)) & 1;
  const uint64_t field = (bits >> m) & ((uint64_t(1) << e) - 1);
  const uint64_t mantissa = bits & ((uint64_t(1) << m) - 1);
  double magnitude;
  if (field == (uint64_t(1) << e) - 1)
    magnitude = mantissa ? std::numeric_limits<double>::quiet_NaN()
                         : std::numeric_limits<double>::infinity();
  else if (field == 0)
    magnitude = std::ldexp(static_cast<double>(mantissa), 1 - bias - int(m));
  else
    magnitude = std::ldexp(static_cast<double>(mantissa | (uint64_t(1) << m)),
                           static_cast<int>(field) - bias - int(m));
  return negative ? -magnitude : magnitude;
}

uint16_t fp16FromDouble(double value) {
  return static_cast<uint16_t>(roundToBinaryFormat(value, 5, 10));
}
double fp16ToDouble(uint16_t bits) { return decodeBinaryFormat(bits, 5, 10); }
uint16_t bf16FromDouble(double value) {
  return static_cast<uint16_t>(roundToBinaryFormat(value, 8, 7));
}
double bf16ToDouble(uint16_t bits) { return decodeBinaryFormat(bits, 8, 7); }

bool roundsToInfinity(DType dtype, double value) {
  if (!std::isfinite(value))
    return false;
  switch (dtype) {
  case DType::FP16:
    return (fp16FromDouble(value) & 0x7fff) == 0x7c00;
  case DType::BF16:
    return (bf16FromDouble(value) & 0x7fff) == 0x7f80;
  case DType::FP32:
    return std::isinf(static_cast<float>(value));
  default:
    return false;
  }
}

} // namespace kjit::rt
