//===- FloatFormats.h - small binary floating-point formats -----*- C++ -*-===//
//
// Conversions between doubles and the narrow IEEE-754-style formats kernels
// use (fp16, bf16), rounding directly from double: going through float would
// round twice. Used for global values (Module::setGlobal) and by kjit-run's
// buffers. Part of the model library (docs/Architecture.md): no LLVM or MLIR
// header here.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_MODEL_FLOATFORMATS_H
#define KJIT_MODEL_FLOATFORMATS_H

#include "kjit/Model/DType.h"

#include <cstdint>

namespace kjit::rt {

/// Rounds `value` to the nearest number of an IEEE-754-style binary format
/// with `exponentBits` exponent and `mantissaBits` stored mantissa bits
/// (subnormals, infinities, NaNs), ties to even, and returns its bit
/// pattern. Overflow gives infinity; a NaN stays a quiet NaN of the same
/// sign. Requires 2 <= exponentBits <= 11 and 1 <= mantissaBits <= 52.
/// fp16 is (5, 10), bf16 (8, 7), fp32 (8, 23).
uint64_t roundToBinaryFormat(double value, unsigned exponentBits,
                             unsigned mantissaBits);

/// The exact value of bit pattern `bits` of the format described above.
double decodeBinaryFormat(uint64_t bits, unsigned exponentBits,
                          unsigned mantissaBits);

/// fp16 (IEEE binary16) bits of `value`, rounded to nearest even. Rounding
/// from double directly avoids the double rounding of going through float.
uint16_t fp16FromDouble(double value);
/// The value of fp16 bits.
double fp16ToDouble(uint16_t bits);
/// Whether a finite `value` rounds to infinity in float dtype `dtype` (fp16,
/// bf16, fp32: its magnitude is past the largest finite value by more than
/// half an ulp). Infinities, NaNs, fp64 and non-float dtypes never do.
bool roundsToInfinity(DType dtype, double value);

/// bf16 bits of `value`, rounded to nearest even.
uint16_t bf16FromDouble(double value);
/// The value of bf16 bits.
double bf16ToDouble(uint16_t bits);

} // namespace kjit::rt

#endif // KJIT_MODEL_FLOATFORMATS_H
