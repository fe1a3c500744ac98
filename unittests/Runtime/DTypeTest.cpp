//===- DTypeTest.cpp - the runtime's dtype table --------------------------===//

#include "kjit/Model/DType.h"

#include <gtest/gtest.h>

#include <string>

using kjit::rt::DType;

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

} // namespace
