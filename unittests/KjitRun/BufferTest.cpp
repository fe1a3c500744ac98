//===- BufferTest.cpp - kjit-run's host buffers ---------------------------===//

#include "Buffer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

using kjit::rt::Argument;
using kjit::rt::DType;
using namespace kjit::run;

namespace {

HostBuffer make(DType dtype, Shape shape) {
  absl::StatusOr<HostBuffer> buffer =
      HostBuffer::allocate(dtype, std::move(shape));
  EXPECT_TRUE(buffer.ok()) << buffer.status();
  return std::move(*buffer);
}

template <typename T> T element(const HostBuffer &buffer, int64_t index) {
  T value;
  std::memcpy(&value,
              static_cast<const char *>(buffer.data()) + index * sizeof(T),
              sizeof(T));
  return value;
}

template <typename T>
void setElement(HostBuffer &buffer, int64_t index, T value) {
  std::memcpy(static_cast<char *>(buffer.data()) + index * sizeof(T), &value,
              sizeof(T));
}

double fromBits(uint64_t bits) {
  double value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

//===----------------------------------------------------------------------===//
// HostBuffer
//===----------------------------------------------------------------------===//

TEST(HostBuffer, IsAlignedZeroedAndSized) {
  for (int64_t count : {0, 1, 3, 17, 64, 1000}) {
    HostBuffer buffer = make(DType::FP16, {count});
    EXPECT_EQ(buffer.address() % HostBuffer::kAlignment, 0u) << count;
    EXPECT_NE(buffer.address(), 0u) << count;
    EXPECT_EQ(buffer.numElements(), count);
    EXPECT_EQ(buffer.sizeInBytes(), static_cast<size_t>(count) * 2);
    for (int64_t i = 0; i < count; ++i)
      ASSERT_EQ(element<uint16_t>(buffer, i), 0) << i;
  }
}

TEST(HostBuffer, ShapesAndArguments) {
  HostBuffer matrix = make(DType::I32, {4, 5});
  EXPECT_EQ(matrix.numElements(), 20);
  EXPECT_EQ(matrix.sizeInBytes(), 80u);
  EXPECT_EQ(matrix.shape(), (Shape{4, 5}));
  HostBuffer scalar = make(DType::FP64, {});
  EXPECT_EQ(scalar.numElements(), 1);
  EXPECT_EQ(scalar.sizeInBytes(), 8u);

  Argument arg = matrix.toArgument(/*readOnly=*/true);
  EXPECT_EQ(arg.kind(), kjit::rt::ArgKind::Tensor);
  EXPECT_EQ(arg.address(), matrix.address());
  EXPECT_EQ(arg.dtype(), DType::I32);
  EXPECT_TRUE(arg.isReadOnly());
  EXPECT_FALSE(matrix.toArgument().isReadOnly());

  // Moving keeps the memory.
  uint64_t address = matrix.address();
  HostBuffer moved = std::move(matrix);
  EXPECT_EQ(moved.address(), address);
}

TEST(HostBuffer, Errors) {
  absl::StatusOr<HostBuffer> negative =
      HostBuffer::allocate(DType::FP32, {4, -1});
  EXPECT_EQ(negative.status().message(), "fp32[4,-1] has a negative dimension");
  absl::StatusOr<HostBuffer> overflow =
      HostBuffer::allocate(DType::FP64, {int64_t(1) << 62, 4});
  EXPECT_EQ(overflow.status().message(),
            "fp64[4611686018427387904,4] has more bytes than an address "
            "space holds");
  absl::StatusOr<HostBuffer> huge =
      HostBuffer::allocate(DType::FP32, {int64_t(1) << 60});
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(huge.status().message().substr(0, 57),
            "fp32[1152921504606846976] needs 4611686018427387904 bytes");
  EXPECT_NE(
      std::string(huge.status().message()).find("more than this machine's "),
      std::string::npos);
}

TEST(HostBuffer, FormatShape) {
  EXPECT_EQ(formatShape({}), "[]");
  EXPECT_EQ(formatShape({4096}), "[4096]");
  EXPECT_EQ(formatShape({64, 128, 2}), "[64,128,2]");
  EXPECT_EQ(numElementsOf({}), 1);
  EXPECT_EQ(numElementsOf({3, 0}), 0);
  EXPECT_EQ(numElementsOf({int64_t(1) << 32, int64_t(1) << 31}), std::nullopt);
  EXPECT_EQ(numElementsOf({-1}), std::nullopt);
}

//===----------------------------------------------------------------------===//
// Floating-point conversions
//===----------------------------------------------------------------------===//

struct HalfCase {
  double value;
  uint16_t bits;
};

TEST(Fp16, EdgeCases) {
  const double tiny = std::ldexp(1.0, -24); // the smallest subnormal
  const HalfCase cases[] = {
      {0.0, 0x0000},
      {-0.0, 0x8000},
      {1.0, 0x3c00},
      {-2.0, 0xc000},
      {0.1, 0x2e66},
      {65504.0, 0x7bff},  // the largest finite
      {65519.99, 0x7bff}, // just below the tie
      {65520.0, 0x7c00},  // tie with 2^16: to even, infinity
      {1e10, 0x7c00},     // overflow
      {-1e10, 0xfc00},
      {INFINITY, 0x7c00},
      {-INFINITY, 0xfc00},
      {tiny, 0x0001},
      {tiny / 2, 0x0000},          // tie between 0 and tiny: to even
      {tiny / 2 * 1.0001, 0x0001}, // above the tie
      {-tiny / 2, 0x8000},         // keeps the sign
      {tiny * 1.5, 0x0002},        // tie between 1 and 2 tinies: to even
      {tiny * 2.5, 0x0002},        // tie between 2 and 3: to even
      {1023 * tiny, 0x03ff},       // the largest subnormal
      {1023.5 * tiny, 0x0400},     // tie rounds up into the smallest normal
      {std::ldexp(1.0, -14), 0x0400},
      {1.0 + std::ldexp(1.0, -11), 0x3c00},     // tie: to even
      {1.0 + 3 * std::ldexp(1.0, -11), 0x3c02}, // tie: to even
      {1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40), 0x3c01},
      {2049.0, 0x6800},                 // 2048: tie to even
      {2051.0, 0x6802},                 // 2052: tie to even
      {std::ldexp(1.0, -1074), 0x0000}, // a double subnormal
  };
  for (const HalfCase &c : cases)
    EXPECT_EQ(fp16FromDouble(c.value), c.bits) << c.value;
}

TEST(Fp16, Decode) {
  EXPECT_EQ(fp16ToDouble(0x0001), std::ldexp(1.0, -24));
  EXPECT_EQ(fp16ToDouble(0x03ff), 1023 * std::ldexp(1.0, -24));
  EXPECT_EQ(fp16ToDouble(0x0400), std::ldexp(1.0, -14));
  EXPECT_EQ(fp16ToDouble(0x7bff), 65504.0);
  EXPECT_EQ(fp16ToDouble(0x3c00), 1.0);
  EXPECT_EQ(fp16ToDouble(0xc000), -2.0);
  EXPECT_EQ(fp16ToDouble(0x7c00), INFINITY);
  EXPECT_EQ(fp16ToDouble(0xfc00), -INFINITY);
  EXPECT_TRUE(std::isnan(fp16ToDouble(0x7e00)));
  EXPECT_TRUE(std::isnan(fp16ToDouble(0x7c01)));
  EXPECT_EQ(fp16ToDouble(0x8000), 0.0);
  EXPECT_TRUE(std::signbit(fp16ToDouble(0x8000)));
}

TEST(Fp16, NaNStaysQuietNaN) {
  uint16_t bits = fp16FromDouble(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(bits & 0x7c00, 0x7c00);
  EXPECT_NE(bits & 0x03ff, 0);
  EXPECT_NE(bits & 0x0200, 0); // quiet
  uint16_t negative = fp16FromDouble(-std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(negative & 0x8000, 0x8000);
  // A signalling NaN whose payload is only in low bits must not become
  // infinity.
  uint16_t signalling = fp16FromDouble(fromBits(0x7ff0000000000001ull));
  EXPECT_TRUE(std::isnan(fp16ToDouble(signalling)));
}

TEST(Fp16, EveryPatternRoundTrips) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    double value = fp16ToDouble(static_cast<uint16_t>(bits));
    if (std::isnan(value)) {
      ASSERT_TRUE(std::isnan(fp16ToDouble(fp16FromDouble(value)))) << bits;
    } else {
      ASSERT_EQ(fp16FromDouble(value), bits) << bits;
    }
  }
}

TEST(Bf16, EdgeCases) {
  const HalfCase cases[] = {
      {0.0, 0x0000},
      {-0.0, 0x8000},
      {1.0, 0x3f80},
      {1.0 + std::ldexp(1.0, -8), 0x3f80},     // tie: to even
      {1.0 + 3 * std::ldexp(1.0, -8), 0x3f82}, // tie: to even
      {-2.0, 0xc000},
      {3.140625, 0x4049},
      {std::ldexp(255.0, 120), 0x7f7f}, // the largest finite
      {std::ldexp(511.0, 119), 0x7f80}, // tie above it: infinity
      {INFINITY, 0x7f80},
      {-INFINITY, 0xff80},
      {std::ldexp(1.0, -133), 0x0001}, // the smallest subnormal
      {std::ldexp(1.0, -134), 0x0000}, // tie: to even
      {std::ldexp(1.0, -126), 0x0080}, // the smallest normal
  };
  for (const HalfCase &c : cases)
    EXPECT_EQ(bf16FromDouble(c.value), c.bits) << c.value;
  EXPECT_EQ(bf16FromDouble(std::numeric_limits<double>::quiet_NaN()), 0x7fc0);
  EXPECT_EQ(bf16ToDouble(0x3f80), 1.0);
  EXPECT_EQ(bf16ToDouble(0x0001), std::ldexp(1.0, -133));
  EXPECT_TRUE(std::isnan(bf16ToDouble(0x7fc0)));
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    double value = bf16ToDouble(static_cast<uint16_t>(bits));
    if (!std::isnan(value)) {
      ASSERT_EQ(bf16FromDouble(value), bits) << bits;
    }
  }
}

/// Doubles that exercise every rounding path: random bit patterns (all
/// exponents), values near float's and half's ranges, and exact ties.
std::vector<double> probeValues() {
  std::vector<double> values;
  SplitMix64 generator(12345);
  for (int i = 0; i < 20000; ++i) {
    uint64_t r = generator.next();
    values.push_back(fromBits(r));
    // Exponents around the interesting ranges: 2^-160 .. 2^140.
    int exponent = static_cast<int>(r % 300) - 160;
    values.push_back(std::ldexp(1.0 + (r >> 12) * 0x1p-52, exponent) *
                     ((r & 1) ? -1 : 1));
    // Ties: an odd significand one bit longer than the format's (24 bits
    // for float, 12 for fp16), so that its last bit is exactly the half;
    // fp16's at exponents around its range.
    values.push_back(std::ldexp(static_cast<double>((r >> 40) | 1), exponent));
    values.push_back(std::ldexp(static_cast<double>((r >> 52) | 0x800 | 1),
                                static_cast<int>(r % 50) - 40));
  }
  return values;
}

// The generic rounding against the compiler's own double-to-float
// conversion: an independent implementation of the same IEEE rule.
TEST(BinaryFormat, MatchesFloatConversion) {
  for (double value : probeValues()) {
    float expected = static_cast<float>(value);
    uint32_t expectedBits;
    std::memcpy(&expectedBits, &expected, sizeof(expectedBits));
    uint64_t bits = roundToBinaryFormat(value, 8, 23);
    if (std::isnan(value)) {
      ASSERT_TRUE(std::isnan(decodeBinaryFormat(bits, 8, 23)));
      continue;
    }
    ASSERT_EQ(bits, expectedBits) << value;
    ASSERT_EQ(decodeBinaryFormat(bits, 8, 23), static_cast<double>(expected))
        << value;
  }
}

#ifdef __FLT16_MAX__
// And against the compiler's _Float16 where it has one.
TEST(BinaryFormat, MatchesFloat16Conversion) {
  for (double value : probeValues()) {
    _Float16 expected = static_cast<_Float16>(value);
    uint16_t expectedBits;
    std::memcpy(&expectedBits, &expected, sizeof(expectedBits));
    if (std::isnan(value))
      continue;
    ASSERT_EQ(fp16FromDouble(value), expectedBits) << value;
  }
}
#endif

TEST(BinaryFormat, NumericConversion) {
  EXPECT_TRUE(hasNumericConversion(DType::FP16));
  EXPECT_TRUE(hasNumericConversion(DType::I1));
  EXPECT_FALSE(hasNumericConversion(DType::FP8E5));
  EXPECT_FALSE(hasNumericConversion(DType::FP8E4NV));
}

//===----------------------------------------------------------------------===//
// Initializers
//===----------------------------------------------------------------------===//

/// splitmix64 as published (Vigna's splitmix64.c), written independently of
/// SplitMix64 so that a slip in either shows.
uint64_t referenceSplitMix(uint64_t &x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
  z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
  return z ^ (z >> 31);
}

TEST(Random, GeneratorIsSplitMix64) {
  // The first outputs for seed 0, computed with Python's integers from the
  // published formula.
  SplitMix64 generator(0);
  EXPECT_EQ(generator.next(), 0xe220a8397b1dcdafull);
  EXPECT_EQ(generator.next(), 0x6e789e6aa1b965f4ull);
  EXPECT_EQ(generator.next(), 0x06c45d188009454full);
  uint64_t state = 0xdeadbeef;
  SplitMix64 other(0xdeadbeef);
  for (int i = 0; i < 1000; ++i)
    ASSERT_EQ(other.next(), referenceSplitMix(state));
}

TEST(Random, FloatsFollowTheDefinition) {
  const uint64_t seed = 7;
  HostBuffer f32 = make(DType::FP32, {1000});
  HostBuffer f64 = make(DType::FP64, {1000});
  HostBuffer f16 = make(DType::FP16, {1000});
  HostBuffer b16 = make(DType::BF16, {1000});
  fillRandom(f32, seed);
  fillRandom(f64, seed);
  fillRandom(f16, seed);
  fillRandom(b16, seed);
  uint64_t state = seed;
  for (int64_t i = 0; i < 1000; ++i) {
    uint64_t r = referenceSplitMix(state);
    // -1 + k * 2^-m with k the top m + 1 bits.
    float expected32 = static_cast<float>(-1.0 + (r >> 40) / 8388608.0);
    double expected64 = -1.0 + (r >> 11) / 4503599627370496.0;
    double expected16 = -1.0 + (r >> 53) / 1024.0;
    double expectedB16 = -1.0 + (r >> 56) / 128.0;
    ASSERT_EQ(element<float>(f32, i), expected32) << i;
    ASSERT_EQ(element<double>(f64, i), expected64) << i;
    ASSERT_EQ(fp16ToDouble(element<uint16_t>(f16, i)), expected16) << i;
    ASSERT_EQ(bf16ToDouble(element<uint16_t>(b16, i)), expectedB16) << i;
    ASSERT_GE(element<float>(f32, i), -1.0f);
    ASSERT_LT(element<float>(f32, i), 1.0f);
  }
}

TEST(Random, IntegersFollowTheDefinition) {
  const uint64_t seed = 99;
  HostBuffer i32 = make(DType::I32, {1000});
  HostBuffer u8 = make(DType::U8, {1000});
  HostBuffer i1 = make(DType::I1, {1000});
  fillRandom(i32, seed);
  fillRandom(u8, seed);
  fillRandom(i1, seed);
  uint64_t state = seed;
  int ones = 0;
  for (int64_t i = 0; i < 1000; ++i) {
    uint64_t r = referenceSplitMix(state);
    int32_t expected =
        static_cast<int32_t>((static_cast<unsigned __int128>(r) * 100) >> 64);
    ASSERT_EQ(element<int32_t>(i32, i), expected) << i;
    ASSERT_EQ(element<uint8_t>(u8, i), expected) << i;
    ASSERT_EQ(element<uint8_t>(i1, i), r >> 63) << i;
    ASSERT_GE(expected, 0);
    ASSERT_LT(expected, 100);
    ones += element<uint8_t>(i1, i);
  }
  // Both values occur (a constant fill would pass the loop above only if
  // the reference were wrong in the same way).
  EXPECT_GT(ones, 400);
  EXPECT_LT(ones, 600);
}

TEST(Random, SameSeedSameBytesOtherSeedOtherBytes) {
  HostBuffer a = make(DType::FP32, {4096});
  HostBuffer b = make(DType::FP32, {4096});
  HostBuffer c = make(DType::FP32, {4096});
  fillRandom(a, 5);
  fillRandom(b, 5);
  fillRandom(c, 6);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.sizeInBytes()), 0);
  EXPECT_NE(std::memcmp(a.data(), c.data(), a.sizeInBytes()), 0);
}

TEST(Arange, ConvertsLikeNumpy) {
  HostBuffer i32 = make(DType::I32, {5});
  fillArange(i32);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(element<int32_t>(i32, i), i);
  HostBuffer u8 = make(DType::U8, {300});
  fillArange(u8);
  EXPECT_EQ(element<uint8_t>(u8, 255), 255);
  EXPECT_EQ(element<uint8_t>(u8, 256), 0); // modulo 2^8
  EXPECT_EQ(element<uint8_t>(u8, 299), 43);
  HostBuffer i8 = make(DType::I8, {200});
  fillArange(i8);
  EXPECT_EQ(element<int8_t>(i8, 128), -128);
  HostBuffer i1 = make(DType::I1, {4});
  fillArange(i1);
  EXPECT_EQ(element<uint8_t>(i1, 0), 0);
  EXPECT_EQ(element<uint8_t>(i1, 1), 1);
  EXPECT_EQ(element<uint8_t>(i1, 2), 0);
  HostBuffer f16 = make(DType::FP16, {2052});
  fillArange(f16);
  EXPECT_EQ(fp16ToDouble(element<uint16_t>(f16, 2047)), 2047.0);
  EXPECT_EQ(fp16ToDouble(element<uint16_t>(f16, 2049)), 2048.0); // to even
  EXPECT_EQ(fp16ToDouble(element<uint16_t>(f16, 2051)), 2052.0);
  HostBuffer f64 = make(DType::FP64, {3});
  fillArange(f64);
  EXPECT_EQ(element<double>(f64, 2), 2.0);
}

TEST(Fill, EveryElement) {
  HostBuffer f32 = make(DType::FP32, {7});
  fillValue(f32, Argument::fp(-1.5));
  HostBuffer u8 = make(DType::U8, {7});
  fillValue(u8, Argument::integer(3));
  HostBuffer bf = make(DType::BF16, {7});
  fillValue(bf, Argument::integer(1));
  HostBuffer i1 = make(DType::I1, {7});
  fillValue(i1, Argument::boolean(true));
  HostBuffer u64 = make(DType::U64, {7});
  fillValue(u64, Argument::integer(static_cast<kjit::rt::Int128>(UINT64_MAX)));
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(element<float>(f32, i), -1.5f);
    EXPECT_EQ(element<uint8_t>(u8, i), 3);
    EXPECT_EQ(element<uint16_t>(bf, i), 0x3f80);
    EXPECT_EQ(element<uint8_t>(i1, i), 1);
    EXPECT_EQ(element<uint64_t>(u64, i), UINT64_MAX);
  }
  HostBuffer empty = make(DType::FP32, {0});
  fillValue(empty, Argument::fp(1.0)); // no element to touch
  EXPECT_EQ(empty.numElements(), 0);
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

TEST(Format, SmallBuffers) {
  HostBuffer f32 = make(DType::FP32, {4});
  setElement(f32, 0, 0.5f);
  setElement(f32, 1, -0.25f);
  setElement(f32, 2, 1.0f);
  setElement(f32, 3, 0.1f);
  EXPECT_EQ(formatBuffer(f32), "fp32[4] [0.5, -0.25, 1, 0.1]");

  HostBuffer f16 = make(DType::FP16, {4});
  setElement(f16, 0, fp16FromDouble(0.1));
  setElement(f16, 1, fp16FromDouble(65504));
  setElement(f16, 2, uint16_t(0xfc00));
  setElement(f16, 3, uint16_t(0x7e00));
  EXPECT_EQ(formatBuffer(f16), "fp16[4] [0.1, 65504, -inf, nan]");

  HostBuffer bf = make(DType::BF16, {4});
  setElement(bf, 0, bf16FromDouble(3.140625));
  setElement(bf, 1, bf16FromDouble(0.1));
  setElement(bf, 2, bf16FromDouble(300));
  setElement(bf, 3, uint16_t(0x7f7f));
  EXPECT_EQ(formatBuffer(bf), "bf16[4] [3.14, 0.1, 300, 3.39e+38]");

  HostBuffer f64 = make(DType::FP64, {2});
  setElement(f64, 0, 1e-5);
  setElement(f64, 1, -0.0);
  EXPECT_EQ(formatBuffer(f64), "fp64[2] [1e-05, -0]");

  HostBuffer i1 = make(DType::I1, {2});
  setElement(i1, 1, uint8_t(1));
  EXPECT_EQ(formatBuffer(i1), "i1[2] [false, true]");

  HostBuffer u64 = make(DType::U64, {1});
  setElement(u64, 0, UINT64_MAX);
  EXPECT_EQ(formatBuffer(u64), "u64[1] [18446744073709551615]");
  HostBuffer i8 = make(DType::I8, {1});
  setElement(i8, 0, int8_t(-128));
  EXPECT_EQ(formatBuffer(i8), "i8[1] [-128]");

  HostBuffer fp8 = make(DType::FP8E5, {2});
  setElement(fp8, 1, uint8_t(0x3c));
  EXPECT_EQ(formatBuffer(fp8), "fp8e5[2] [0x00, 0x3c]");

  EXPECT_EQ(formatBuffer(make(DType::FP32, {0})), "fp32[0] []");
  EXPECT_EQ(formatBuffer(make(DType::I32, {2, 3})),
            "i32[2,3] [0, 0, 0, 0, 0, 0]");
  EXPECT_EQ(formatBuffer(make(DType::I32, {})), "i32[] [0]");
}

/// Formats [min, max] of integer type T stored as `dtype`.
template <typename T> std::string formatLimits(DType dtype) {
  HostBuffer buffer = make(dtype, {2});
  setElement(buffer, 0, std::numeric_limits<T>::min());
  setElement(buffer, 1, std::numeric_limits<T>::max());
  return formatBuffer(buffer);
}

TEST(Format, EveryIntegerAtItsLimits) {
  // Element loads follow the dtype's width and signedness.
  EXPECT_EQ(formatLimits<int8_t>(DType::I8), "i8[2] [-128, 127]");
  EXPECT_EQ(formatLimits<int16_t>(DType::I16), "i16[2] [-32768, 32767]");
  EXPECT_EQ(formatLimits<int32_t>(DType::I32),
            "i32[2] [-2147483648, 2147483647]");
  EXPECT_EQ(formatLimits<int64_t>(DType::I64),
            "i64[2] [-9223372036854775808, 9223372036854775807]");
  EXPECT_EQ(formatLimits<uint8_t>(DType::U8), "u8[2] [0, 255]");
  EXPECT_EQ(formatLimits<uint16_t>(DType::U16), "u16[2] [0, 65535]");
  EXPECT_EQ(formatLimits<uint32_t>(DType::U32), "u32[2] [0, 4294967295]");
  EXPECT_EQ(formatLimits<uint64_t>(DType::U64),
            "u64[2] [0, 18446744073709551615]");
}

TEST(Format, LargeBuffersShowHeadAndTail) {
  HostBuffer buffer = make(DType::I32, {10});
  fillArange(buffer);
  EXPECT_EQ(formatBuffer(buffer, 10), "i32[10] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]");
  EXPECT_EQ(formatBuffer(buffer, 8), "i32[10] [0, 1, 2, 3, ..., 6, 7, 8, 9]");
  EXPECT_EQ(formatBuffer(buffer, 3), "i32[10] [0, 1, ..., 9]");
  EXPECT_EQ(formatBuffer(buffer, 1), "i32[10] [0, ...]");
  EXPECT_EQ(formatBuffer(buffer, 0), "i32[10] [...]");
}

TEST(Checksum, SumAndHash) {
  // FNV-1a test vectors (Fowler, Noll, Vo).
  EXPECT_EQ(fnv1a64("", 0), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a", 1), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar", 6), 0x85944171f73967e8ull);

  HostBuffer buffer = make(DType::FP32, {4});
  fillArange(buffer);
  Checksum checksum = computeChecksum(buffer);
  EXPECT_EQ(checksum.sum, 6.0);
  EXPECT_EQ(checksum.fnv1a, fnv1a64(buffer.data(), 16));
  char text[64];
  snprintf(text, sizeof(text), "fp32[4] sum=6 fnv1a=0x%016llx",
           static_cast<unsigned long long>(checksum.fnv1a));
  EXPECT_EQ(formatChecksum(buffer), text);

  HostBuffer f16 = make(DType::FP16, {3});
  fillValue(f16, Argument::fp(0.5));
  EXPECT_EQ(computeChecksum(f16).sum, 1.5);
  HostBuffer i8 = make(DType::I8, {2});
  fillValue(i8, Argument::integer(-3));
  EXPECT_EQ(computeChecksum(i8).sum, -6.0);
  HostBuffer i32 = make(DType::I32, {2});
  fillValue(i32, Argument::integer(-70000));
  EXPECT_EQ(computeChecksum(i32).sum, -140000.0);
  HostBuffer u32 = make(DType::U32, {2});
  fillValue(u32, Argument::integer(UINT32_MAX));
  EXPECT_EQ(computeChecksum(u32).sum, 2.0 * UINT32_MAX);

  // A one-bit change changes the hash.
  HostBuffer other = make(DType::FP32, {4});
  fillArange(other);
  setElement(other, 3, 3.0000002f);
  EXPECT_NE(computeChecksum(other).fnv1a, checksum.fnv1a);

  HostBuffer fp8 = make(DType::FP8E4NV, {2});
  EXPECT_EQ(computeChecksum(fp8).sum, std::nullopt);
  EXPECT_EQ(formatChecksum(fp8).substr(0, 25), "fp8e4nv[2] sum=n/a fnv1a=");
}

} // namespace
