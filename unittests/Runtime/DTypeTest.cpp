//===- DTypeTest.cpp - the model library's dtype table --------------------===//
//
// Checks kDTypeTraits against facts that do not come from it: the
// reference's canonicalisation table, the C++ types of the same width and
// signedness, and the exponent and mantissa widths that the fp8 formats'
// names spell. unittests/Dialect/DTypeIRTypesTest.cpp checks it against
// MLIR's types.
//
//===----------------------------------------------------------------------===//

#include "kjit/Model/DType.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <limits>
#include <set>
#include <string>
#include <type_traits>

using kjit::rt::DType;
using kjit::rt::DTypeKind;
using kjit::rt::Int128;

namespace {

struct NameCase {
  const char *name;
  const char *canonical;
  unsigned bytes;
};

// The reference's type_canonicalisation_dict, entry by entry.
constexpr NameCase kFrameworkNames[] = {
    {"bool", "i1", 1},
    {"float8e4nv", "fp8e4nv", 1},
    {"float8e5", "fp8e5", 1},
    {"float8e4b15", "fp8e4b15", 1},
    {"float8_e4m3fn", "fp8e4nv", 1},
    {"float8e4b8", "fp8e4b8", 1},
    {"float8_e4m3fnuz", "fp8e4b8", 1},
    {"float8_e5m2", "fp8e5", 1},
    {"float8e5b16", "fp8e5b16", 1},
    {"float8_e5m2fnuz", "fp8e5b16", 1},
    {"float16", "fp16", 2},
    {"bfloat16", "bf16", 2},
    {"float32", "fp32", 4},
    {"float64", "fp64", 8},
    {"int8", "i8", 1},
    {"int16", "i16", 2},
    {"int32", "i32", 4},
    {"int64", "i64", 8},
    {"uint8", "u8", 1},
    {"uint16", "u16", 2},
    {"uint32", "u32", 4},
    {"uint64", "u64", 8},
};

class FrameworkName : public testing::TestWithParam<NameCase> {};

TEST_P(FrameworkName, CanonicalizesLikeTheReference) {
  const NameCase &c = GetParam();
  std::optional<DType> dtype = kjit::rt::parseDType(c.name);
  ASSERT_TRUE(dtype.has_value()) << c.name;
  EXPECT_EQ(kjit::rt::canonicalName(*dtype), c.canonical);
  EXPECT_EQ(kjit::rt::byteWidth(*dtype), c.bytes);
  // A canonical name maps to itself, as in the reference.
  EXPECT_EQ(kjit::rt::parseDType(c.canonical), dtype);
  // Qualified framework spellings key on the last component.
  EXPECT_EQ(kjit::rt::parseDType(std::string("torch.") + c.name), dtype);
}

INSTANTIATE_TEST_SUITE_P(ReferenceTable, FrameworkName,
                         testing::ValuesIn(kFrameworkNames));

TEST(DType, EveryEnumeratorHasADistinctCanonicalName) {
  for (int i = 0; i < kjit::rt::kNumDTypes; ++i) {
    auto dtype = static_cast<DType>(i);
    std::string_view name = kjit::rt::canonicalName(dtype);
    EXPECT_EQ(kjit::rt::parseDType(name), dtype) << name;
  }
}

TEST(DType, UnknownNamesAreRejected) {
  EXPECT_FALSE(kjit::rt::parseDType("").has_value());
  EXPECT_FALSE(kjit::rt::parseDType("float").has_value());
  EXPECT_FALSE(kjit::rt::parseDType("f32").has_value());
  EXPECT_FALSE(kjit::rt::parseDType("complex64").has_value());
  EXPECT_FALSE(kjit::rt::parseDType("torch.").has_value());
}

TEST(DType, KernelIRNames) {
  EXPECT_EQ(kjit::rt::kernelIRTypeName(DType::FP32), "f32");
  EXPECT_EQ(kjit::rt::kernelIRTypeName(DType::U8), "ui8");
  EXPECT_EQ(kjit::rt::kernelIRTypeName(DType::I1), "i1");
  EXPECT_EQ(kjit::rt::kernelIRTypeName(DType::FP8E4NV), "f8E4M3FN");
  EXPECT_EQ(kjit::rt::kernelIRTypeName(DType::FP8E5B16), "f8E5M2FNUZ");
  // MLIR has no fp8 with exponent bias 15.
  EXPECT_EQ(kjit::rt::kernelIRTypeName(DType::FP8E4B15), "");
}

TEST(DType, TheTableHoldsExactlyTheReferenceNames) {
  // Every framework name of the table is one of the reference's, for the
  // same dtype, and the table has all of them.
  std::set<std::string> fromTable;
  for (const kjit::rt::DTypeTraits &t : kjit::rt::kDTypeTraits)
    for (std::string_view name : t.frameworkNames) {
      if (name.empty())
        continue;
      EXPECT_TRUE(fromTable.emplace(name).second) << name << " twice";
      bool known = false;
      for (const NameCase &c : kFrameworkNames)
        if (c.name == name) {
          known = true;
          EXPECT_EQ(t.name, c.canonical) << name;
        }
      EXPECT_TRUE(known) << name << " is not in the reference's table";
    }
  EXPECT_EQ(fromTable.size(), std::size(kFrameworkNames));
}

TEST(DType, EveryNameRoundTrips) {
  for (int i = 0; i < kjit::rt::kNumDTypes; ++i) {
    auto dtype = static_cast<DType>(i);
    EXPECT_EQ(kjit::rt::dtypeTraits(dtype).dtype, dtype);
    std::string canonical(kjit::rt::canonicalName(dtype));
    EXPECT_EQ(kjit::rt::parseDType(canonical), dtype) << canonical;
    for (std::string_view name : kjit::rt::frameworkNames(dtype)) {
      if (name.empty())
        continue;
      EXPECT_EQ(kjit::rt::parseDType(name), dtype) << name;
      EXPECT_EQ(kjit::rt::parseDType("numpy." + std::string(name)), dtype);
    }
  }
}

/// The facts of integer dtype `dtype` against C++ type T.
template <typename T> void expectIntegerLike(DType dtype) {
  SCOPED_TRACE(std::string(kjit::rt::canonicalName(dtype)));
  EXPECT_EQ(kjit::rt::byteWidth(dtype), sizeof(T));
  EXPECT_EQ(kjit::rt::bitWidth(dtype), 8 * sizeof(T));
  EXPECT_TRUE(kjit::rt::isInteger(dtype));
  EXPECT_FALSE(kjit::rt::isFloat(dtype));
  EXPECT_FALSE(kjit::rt::isBool(dtype));
  EXPECT_EQ(kjit::rt::isSigned(dtype), std::is_signed_v<T>);
  EXPECT_EQ(kjit::rt::mantissaBits(dtype), 0u);
  EXPECT_TRUE(kjit::rt::integerMin(dtype) ==
              static_cast<Int128>(std::numeric_limits<T>::min()));
  EXPECT_TRUE(kjit::rt::integerMax(dtype) ==
              static_cast<Int128>(std::numeric_limits<T>::max()));
}

TEST(DType, IntegersMatchTheCppTypes) {
  expectIntegerLike<int8_t>(DType::I8);
  expectIntegerLike<int16_t>(DType::I16);
  expectIntegerLike<int32_t>(DType::I32);
  expectIntegerLike<int64_t>(DType::I64);
  expectIntegerLike<uint8_t>(DType::U8);
  expectIntegerLike<uint16_t>(DType::U16);
  expectIntegerLike<uint32_t>(DType::U32);
  expectIntegerLike<uint64_t>(DType::U64);
}

TEST(DType, SignednessFollowsTheName) {
  for (int i = 0; i < kjit::rt::kNumDTypes; ++i) {
    auto dtype = static_cast<DType>(i);
    std::string_view name = kjit::rt::canonicalName(dtype);
    SCOPED_TRACE(std::string(name));
    if (name[0] == 'u') {
      EXPECT_EQ(kjit::rt::kindOf(dtype), DTypeKind::UnsignedInt);
      EXPECT_FALSE(kjit::rt::isSigned(dtype));
    } else if (name[0] == 'i' && name != "i1") {
      EXPECT_EQ(kjit::rt::kindOf(dtype), DTypeKind::SignedInt);
      EXPECT_TRUE(kjit::rt::isSigned(dtype));
    } else if (name != "i1") {
      // fp16, bf16, fp8e4nv, ...: every float format has a sign bit.
      EXPECT_TRUE(name.substr(0, 2) == "fp" || name.substr(0, 2) == "bf");
      EXPECT_EQ(kjit::rt::kindOf(dtype), DTypeKind::Float);
      EXPECT_TRUE(kjit::rt::isSigned(dtype));
    }
  }
}

TEST(DType, BoolIsNeitherIntegerNorSigned) {
  EXPECT_TRUE(kjit::rt::isBool(DType::I1));
  EXPECT_FALSE(kjit::rt::isInteger(DType::I1));
  EXPECT_FALSE(kjit::rt::isSigned(DType::I1));
  EXPECT_FALSE(kjit::rt::isFloat(DType::I1));
  EXPECT_EQ(kjit::rt::bitWidth(DType::I1), 1u);
  EXPECT_EQ(kjit::rt::byteWidth(DType::I1), sizeof(bool));
  EXPECT_TRUE(kjit::rt::integerMin(DType::I1) == 0);
  EXPECT_TRUE(kjit::rt::integerMax(DType::I1) == 1);
}

TEST(DType, WideFloatsMatchTheCppTypes) {
  EXPECT_EQ(kjit::rt::byteWidth(DType::FP32), sizeof(float));
  EXPECT_EQ(kjit::rt::byteWidth(DType::FP64), sizeof(double));
  // digits counts the implicit leading bit.
  EXPECT_EQ(kjit::rt::mantissaBits(DType::FP32),
            unsigned(std::numeric_limits<float>::digits - 1));
  EXPECT_EQ(kjit::rt::mantissaBits(DType::FP64),
            unsigned(std::numeric_limits<double>::digits - 1));
  // IEEE binary16 has a 5-bit exponent; bf16 is fp32 with the low 16 bits
  // of the mantissa cut off.
  EXPECT_EQ(kjit::rt::mantissaBits(DType::FP16), 16u - 1 - 5);
  EXPECT_EQ(kjit::rt::mantissaBits(DType::BF16),
            kjit::rt::mantissaBits(DType::FP32) - 16);
  for (DType dtype : {DType::FP16, DType::BF16, DType::FP32, DType::FP64}) {
    EXPECT_TRUE(kjit::rt::isFloat(dtype));
    EXPECT_FALSE(kjit::rt::isInteger(dtype));
    EXPECT_EQ(kjit::rt::bitWidth(dtype), 8 * kjit::rt::byteWidth(dtype));
  }
}

struct Fp8Case {
  DType dtype;
  unsigned exponentBits;
  unsigned mantissaBits;
};

TEST(DType, Fp8FormatsHaveTheirNamedWidths) {
  // E4M3 (fp8e4nv, fp8e4b15 and fp8e4b8, which differ in bias and special
  // values) and E5M2 (fp8e5, fp8e5b16).
  constexpr Fp8Case kCases[] = {
      {DType::FP8E4NV, 4, 3}, {DType::FP8E5, 5, 2},    {DType::FP8E4B15, 4, 3},
      {DType::FP8E4B8, 4, 3}, {DType::FP8E5B16, 5, 2},
  };
  for (const Fp8Case &c : kCases) {
    std::string_view ir = kjit::rt::kernelIRTypeName(c.dtype);
    SCOPED_TRACE(std::string(kjit::rt::canonicalName(c.dtype)));
    EXPECT_TRUE(kjit::rt::isFloat(c.dtype));
    EXPECT_TRUE(kjit::rt::isSigned(c.dtype));
    EXPECT_EQ(kjit::rt::byteWidth(c.dtype), 1u);
    EXPECT_EQ(kjit::rt::bitWidth(c.dtype), 1 + c.exponentBits + c.mantissaBits);
    EXPECT_EQ(kjit::rt::mantissaBits(c.dtype), c.mantissaBits);
    // MLIR spells the widths: f8E4M3FN, f8E5M2FNUZ.
    if (!ir.empty()) {
      std::string widths = "f8E" + std::to_string(c.exponentBits) + "M" +
                           std::to_string(c.mantissaBits);
      EXPECT_EQ(ir.substr(0, widths.size()), widths);
    }
  }
}

TEST(DType, NonFloatsHaveNoMantissa) {
  for (int i = 0; i < kjit::rt::kNumDTypes; ++i) {
    auto dtype = static_cast<DType>(i);
    EXPECT_EQ(kjit::rt::isFloat(dtype), kjit::rt::mantissaBits(dtype) > 0)
        << kjit::rt::canonicalName(dtype);
  }
}

} // namespace
