//===- ArgEncodingTest.cpp - launch arguments as the ABI's storage --------===//
//
// kjit::rt::encodeArgument: the 1.1 storage fields (dtype code, flags, bits,
// bits_size) and the 1.0 description of each kind of value, the binder's
// refusals, and the dtype codes, which are part of the frozen C ABI.
//
//===----------------------------------------------------------------------===//

#include "kjit/Model/ArgEncoding.h"
#include "kjit/Model/FloatFormats.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

using namespace kjit::rt;

namespace {

kjit_arg blank() {
  kjit_arg arg;
  std::memset(&arg, 0xab, sizeof(arg)); // garbage: every field is written
  arg.struct_size = sizeof(arg);
  return arg;
}

SigType scalar(DType dtype) { return {SigType::Kind::Scalar, dtype}; }
SigType pointer(DType dtype) { return {SigType::Kind::Pointer, dtype}; }

std::string error(SigType type, const Argument &value) {
  kjit_arg arg = blank();
  absl::Status status = encodeArgument(type, value, arg);
  return std::string(status.message().data(), status.message().size());
}

TEST(ArgEncoding, CodesAreTheFrozenOnes) {
  // The numbers are ABI: a change here breaks every plugin.
  const std::pair<const char *, int32_t> codes[] = {
      {"i1", 1},       {"i8", 2},       {"i16", 3},    {"i32", 4},
      {"i64", 5},      {"u8", 6},       {"u16", 7},    {"u32", 8},
      {"u64", 9},      {"fp16", 10},    {"bf16", 11},  {"fp32", 12},
      {"fp64", 13},    {"fp8e4nv", 14}, {"fp8e5", 15}, {"fp8e4b15", 16},
      {"fp8e4b8", 17}, {"fp8e5b16", 18}};
  ASSERT_EQ(std::size(codes), size_t(kNumDTypes));
  for (const auto &[name, code] : codes) {
    std::optional<DType> dtype = parseDType(name);
    ASSERT_TRUE(dtype) << name;
    EXPECT_EQ(abiDTypeCode(*dtype), code) << name;
    EXPECT_EQ(dtypeFromAbiCode(code), dtype) << name;
  }
  EXPECT_EQ(dtypeFromAbiCode(KJIT_DTYPE_UNKNOWN), std::nullopt);
  EXPECT_EQ(dtypeFromAbiCode(19), std::nullopt);
}

TEST(ArgEncoding, Integers) {
  kjit_arg arg = blank();
  ASSERT_TRUE(
      encodeArgument(scalar(DType::I8), Argument::integer(-1), arg).ok());
  EXPECT_EQ(arg.dtype, KJIT_DTYPE_I8);
  EXPECT_EQ(arg.flags, 0u);
  EXPECT_EQ(arg.bits, 0xffu); // two's complement in one byte, zeros above
  EXPECT_EQ(arg.bits_size, 1u);
  EXPECT_EQ(arg.kind, KJIT_ARG_INT);
  EXPECT_EQ(arg.int_value, -1);
  EXPECT_EQ(arg.string_value, nullptr);
  EXPECT_EQ(arg.reserved1, 0u);

  ASSERT_TRUE(
      encodeArgument(scalar(DType::I32), Argument::integer(-5), arg).ok());
  EXPECT_EQ(arg.bits, 0xfffffffbu);
  EXPECT_EQ(arg.bits_size, 4u);

  Int128 max = (Int128(1) << 64) - 1;
  ASSERT_TRUE(
      encodeArgument(scalar(DType::U64), Argument::integer(max), arg).ok());
  EXPECT_EQ(arg.bits, ~uint64_t(0));
  EXPECT_EQ(arg.bits_size, 8u);
  EXPECT_EQ(arg.kind, KJIT_ARG_UINT); // 1.0 kept values above INT64_MAX so
  EXPECT_EQ(arg.uint_value, ~uint64_t(0));

  // A bool for an integer type is 0 or 1 (the binder's rule).
  ASSERT_TRUE(
      encodeArgument(scalar(DType::I16), Argument::boolean(true), arg).ok());
  EXPECT_EQ(arg.bits, 1u);
  EXPECT_EQ(arg.kind, KJIT_ARG_INT);
}

TEST(ArgEncoding, Bools) {
  kjit_arg arg = blank();
  ASSERT_TRUE(
      encodeArgument(scalar(DType::I1), Argument::boolean(true), arg).ok());
  EXPECT_EQ(arg.dtype, KJIT_DTYPE_I1);
  EXPECT_EQ(arg.bits, 1u);
  EXPECT_EQ(arg.bits_size, 1u);
  EXPECT_EQ(arg.kind, KJIT_ARG_BOOL);
  EXPECT_EQ(arg.int_value, 1);
  // An int 0 or 1 for i1 becomes a bool, as the binder normalizes it.
  ASSERT_TRUE(
      encodeArgument(scalar(DType::I1), Argument::integer(0), arg).ok());
  EXPECT_EQ(arg.bits, 0u);
  EXPECT_EQ(arg.kind, KJIT_ARG_BOOL);
}

TEST(ArgEncoding, Floats) {
  kjit_arg arg = blank();
  // Just above the tie between 1 and 1 + 2^-10: rounds up only when rounded
  // straight from the double (through float it would round twice).
  double above = 1.0004882812509095;
  ASSERT_TRUE(
      encodeArgument(scalar(DType::FP16), Argument::fp(above), arg).ok());
  EXPECT_EQ(arg.dtype, KJIT_DTYPE_FP16);
  EXPECT_EQ(arg.bits, 0x3c01u);
  EXPECT_EQ(arg.bits, fp16FromDouble(above));
  EXPECT_EQ(arg.bits_size, 2u);
  EXPECT_EQ(arg.kind, KJIT_ARG_FLOAT);
  EXPECT_EQ(arg.float_value, above);

  ASSERT_TRUE(
      encodeArgument(scalar(DType::BF16), Argument::fp(1.0039062509313226), arg)
          .ok());
  EXPECT_EQ(arg.bits, 0x3f81u);

  ASSERT_TRUE(encodeArgument(scalar(DType::FP32), Argument::fp(2.5), arg).ok());
  EXPECT_EQ(arg.bits, 0x40200000u);
  EXPECT_EQ(arg.bits_size, 4u);

  ASSERT_TRUE(
      encodeArgument(scalar(DType::FP64), Argument::fp(-0.0), arg).ok());
  EXPECT_EQ(arg.bits, uint64_t(1) << 63);
  EXPECT_EQ(arg.bits_size, 8u);

  // An int for a float type converts (the binder's rule); so does a bool.
  ASSERT_TRUE(
      encodeArgument(scalar(DType::FP32), Argument::integer(3), arg).ok());
  EXPECT_EQ(arg.bits, 0x40400000u);
  EXPECT_EQ(arg.kind, KJIT_ARG_FLOAT);
  EXPECT_EQ(arg.float_value, 3.0);
}

TEST(ArgEncoding, Pointers) {
  kjit_arg arg = blank();
  ASSERT_TRUE(encodeArgument(pointer(DType::FP16),
                             Argument::tensor(0x7f0000001000, DType::FP16), arg)
                  .ok());
  EXPECT_EQ(arg.dtype, KJIT_DTYPE_FP16);
  EXPECT_EQ(arg.flags, KJIT_ARG_FLAG_POINTER);
  EXPECT_EQ(arg.bits, 0x7f0000001000u);
  EXPECT_EQ(arg.bits_size, 8u);
  EXPECT_EQ(arg.kind, KJIT_ARG_POINTER);
  EXPECT_EQ(arg.uint_value, 0x7f0000001000u);

  ASSERT_TRUE(encodeArgument({SigType::Kind::ConstPointer, DType::FP32},
                             Argument::tensor(64, DType::FP32, true), arg)
                  .ok());
  EXPECT_EQ(arg.flags, KJIT_ARG_FLAG_POINTER | KJIT_ARG_FLAG_CONST);

  // None: the "*i8" null pointer the binder folds.
  ASSERT_TRUE(encodeArgument({SigType::Kind::NullPointer, DType::I8},
                             Argument::none(), arg)
                  .ok());
  EXPECT_EQ(arg.dtype, KJIT_DTYPE_I8);
  EXPECT_EQ(arg.flags, KJIT_ARG_FLAG_POINTER | KJIT_ARG_FLAG_NULL);
  EXPECT_EQ(arg.bits, 0u);
  EXPECT_EQ(arg.bits_size, 8u);
  EXPECT_EQ(arg.kind, KJIT_ARG_NONE);
}

TEST(ArgEncoding, RefusesWhatTheBinderRefuses) {
  EXPECT_EQ(error(scalar(DType::I8), Argument::integer(128)),
            "integer 128 does not fit parameter type i8");
  EXPECT_EQ(error(scalar(DType::U32), Argument::integer(-1)),
            "integer -1 does not fit parameter type u32");
  EXPECT_EQ(error(scalar(DType::I1), Argument::integer(2)),
            "integer 2 does not fit parameter type i1");
  EXPECT_EQ(error(scalar(DType::I64), Argument::integer(Int128(1) << 70)),
            "integer 1180591620717411303424 does not fit in 64 bits (kjit "
            "accepts -2^63 to 2^64-1)");
  EXPECT_EQ(error(scalar(DType::FP16), Argument::none()),
            "expected a number (parameter type fp16), got None");
  EXPECT_EQ(error(pointer(DType::FP32), Argument::tensor(64, DType::FP16)),
            "expected a tensor of fp32 (parameter type *fp32), got a tensor "
            "of fp16");
  EXPECT_EQ(error(pointer(DType::FP32), Argument::fp(1.0)),
            "expected a tensor of fp32 or None (parameter type *fp32), got a "
            "float (1)");
  EXPECT_EQ(error({SigType::Kind::NullPointer, DType::I8},
                  Argument::tensor(64, DType::I8)),
            "expected None (parameter type *i8, a null pointer folded into "
            "the code), got a tensor of i8");
  kjit_arg arg = blank();
  absl::Status fp8 =
      encodeArgument(scalar(DType::FP8E5), Argument::fp(1.0), arg);
  EXPECT_EQ(fp8.code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(error(scalar(DType::FP8E5), Argument::fp(1.0)),
            "a scalar of type fp8e5 cannot be passed: the runtime has no "
            "encoding for fp8 scalars");
}

} // namespace
