//===- ArgSpecTest.cpp - kjit-run's argument syntax -----------------------===//

#include "ArgSpec.h"
#include "Npy.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <string>

using kjit::rt::ArgKind;
using kjit::rt::Argument;
using kjit::rt::DType;
using kjit::rt::Int128;
using namespace kjit::run;

namespace {

/// The error message of parsing `--arg x=TEXT` (empty if it parsed).
std::string argError(std::string_view text) {
  absl::StatusOr<ArgValue> value = parseArgValue("x", text);
  if (value.ok())
    return "";
  EXPECT_EQ(value.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(value.status().message());
}

Argument scalar(std::string_view text) {
  absl::StatusOr<ArgValue> value = parseArgValue("x", text);
  EXPECT_TRUE(value.ok()) << text << ": " << value.status();
  EXPECT_FALSE(value.ok() && value->isTensor()) << text;
  return value.ok() ? value->scalar : Argument::callable(nullptr);
}

TensorSpec tensor(std::string_view text) {
  absl::StatusOr<ArgValue> value = parseArgValue("x", text);
  EXPECT_TRUE(value.ok()) << text << ": " << value.status();
  if (!value.ok() || !value->isTensor()) {
    ADD_FAILURE() << text << " is not a tensor";
    return TensorSpec();
  }
  return *value->tensor;
}

//===----------------------------------------------------------------------===//
// Dtype names
//===----------------------------------------------------------------------===//

TEST(DTypeName, CanonicalFrameworkAndShortNames) {
  struct Case {
    const char *name;
    DType dtype;
  };
  const Case cases[] = {
      {"fp32", DType::FP32},
      {"f32", DType::FP32},
      {"float32", DType::FP32},
      {"fp16", DType::FP16},
      {"f16", DType::FP16},
      {"half", DType::FP16},
      {"float16", DType::FP16},
      {"bf16", DType::BF16},
      {"bfloat16", DType::BF16},
      {"fp64", DType::FP64},
      {"f64", DType::FP64},
      {"double", DType::FP64},
      {"i1", DType::I1},
      {"bool", DType::I1},
      {"i8", DType::I8},
      {"int32", DType::I32},
      {"i64", DType::I64},
      {"u8", DType::U8},
      {"ui8", DType::U8},
      {"uint16", DType::U16},
      {"ui64", DType::U64},
      {"fp8e5", DType::FP8E5},
      {"torch.float32", DType::FP32},
  };
  for (const Case &c : cases)
    EXPECT_EQ(parseDTypeName(c.name), c.dtype) << c.name;
  // Ambiguous between torch and numpy, so refused.
  EXPECT_EQ(parseDTypeName("float"), std::nullopt);
  EXPECT_EQ(parseDTypeName("int"), std::nullopt);
  EXPECT_EQ(parseDTypeName("f33"), std::nullopt);
}

//===----------------------------------------------------------------------===//
// Scalars
//===----------------------------------------------------------------------===//

TEST(Scalar, Integers) {
  EXPECT_EQ(scalar("42"), Argument::integer(42));
  EXPECT_EQ(scalar("-7"), Argument::integer(-7));
  EXPECT_EQ(scalar("+7"), Argument::integer(7));
  EXPECT_EQ(scalar("0"), Argument::integer(0));
  EXPECT_EQ(scalar("0x1F"), Argument::integer(31));
  EXPECT_EQ(scalar("0Xff"), Argument::integer(255));
  EXPECT_EQ(scalar("-0x10"), Argument::integer(-16));
  const Int128 two64 = static_cast<Int128>(1) << 64;
  EXPECT_EQ(scalar("18446744073709551615"), Argument::integer(two64 - 1));
  // Beyond 64 bits stays exact, for the binder to reject with its value.
  EXPECT_EQ(scalar("18446744073709551616"), Argument::integer(two64));
  EXPECT_EQ(scalar("0x10000000000000000"), Argument::integer(two64));
  EXPECT_EQ(scalar("-170141183460469231731687303715884105728"),
            Argument::integer(
                static_cast<Int128>(static_cast<unsigned __int128>(1) << 127)));
  EXPECT_EQ(scalar("0x7fffffffffffffffffffffffffffffff"),
            Argument::integer(static_cast<Int128>(
                (static_cast<unsigned __int128>(1) << 127) - 1)));
  EXPECT_EQ(scalar("-0x80000000000000000000000000000000").asInt(),
            static_cast<Int128>(static_cast<unsigned __int128>(1) << 127));
}

TEST(Scalar, FloatsBoolsNoneDTypes) {
  EXPECT_EQ(scalar("1.5"), Argument::fp(1.5));
  EXPECT_EQ(scalar("1e-5"), Argument::fp(1e-5));
  EXPECT_EQ(scalar("1E3"), Argument::fp(1000.0));
  EXPECT_EQ(scalar(".5"), Argument::fp(0.5));
  EXPECT_EQ(scalar("5."), Argument::fp(5.0));
  EXPECT_EQ(scalar("+2.5"), Argument::fp(2.5));
  EXPECT_EQ(scalar("-0.0"), Argument::fp(-0.0));
  EXPECT_TRUE(std::signbit(scalar("-0.0").asFloat()));
  EXPECT_EQ(scalar("inf"), Argument::fp(INFINITY));
  EXPECT_EQ(scalar("-inf"), Argument::fp(-INFINITY));
  EXPECT_EQ(scalar("nan").kind(), ArgKind::Float);
  EXPECT_TRUE(std::isnan(scalar("nan").asFloat()));
  EXPECT_EQ(scalar("true"), Argument::boolean(true));
  EXPECT_EQ(scalar("True"), Argument::boolean(true));
  EXPECT_EQ(scalar("false"), Argument::boolean(false));
  EXPECT_EQ(scalar("False"), Argument::boolean(false));
  EXPECT_EQ(scalar("none"), Argument::none());
  EXPECT_EQ(scalar("None"), Argument::none());
  EXPECT_EQ(scalar("dtype:fp16"), Argument::dtypeValue(DType::FP16));
  EXPECT_EQ(scalar("dtype:f32"), Argument::dtypeValue(DType::FP32));
  EXPECT_EQ(scalar("dtype:bfloat16"), Argument::dtypeValue(DType::BF16));
}

TEST(Scalar, Errors) {
  EXPECT_EQ(argError(""), "argument 'x': empty value");
  EXPECT_EQ(argError("abc"),
            "argument 'x': cannot parse 'abc' (expected an integer, a float, "
            "true, false, none or dtype:NAME)");
  EXPECT_EQ(argError("-"), "argument 'x': cannot parse '-' (expected an "
                           "integer, a float, true, false, none or "
                           "dtype:NAME)");
  EXPECT_EQ(argError("+-1"), "argument 'x': cannot parse '+-1' (expected an "
                             "integer, a float, true, false, none or "
                             "dtype:NAME)");
  EXPECT_EQ(argError("12abc"),
            "argument 'x': trailing characters 'abc' after '12'");
  EXPECT_EQ(argError("1.5x"),
            "argument 'x': trailing characters 'x' after '1.5'");
  EXPECT_EQ(argError("1 "), "argument 'x': trailing characters ' ' after '1'");
  EXPECT_EQ(argError("0x"), "argument 'x': '0x' has no hex digits");
  EXPECT_EQ(argError("0x1g"),
            "argument 'x': trailing characters 'g' after '0x1'");
  EXPECT_EQ(argError("170141183460469231731687303715884105728"),
            "argument 'x': integer '170141183460469231731687303715884105728' "
            "does not fit in 128 bits");
  EXPECT_EQ(argError("0x80000000000000000000000000000000"),
            "argument 'x': integer '0x80000000000000000000000000000000' does "
            "not fit in 128 bits");
  EXPECT_EQ(argError("0x100000000000000000000000000000000"),
            "argument 'x': integer '0x100000000000000000000000000000000' "
            "does not fit in 128 bits");
  EXPECT_EQ(argError("1e999"),
            "argument 'x': float '1e999' is out of range of a double");
  EXPECT_EQ(argError("dtype:"),
            "argument 'x': missing dtype name after 'dtype:'");
  EXPECT_EQ(argError("dtype:f33"), "argument 'x': unknown dtype 'f33'");
  EXPECT_EQ(argError("TRUE"), "argument 'x': cannot parse 'TRUE' (expected "
                              "an integer, a float, true, false, none or "
                              "dtype:NAME)");
}

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

TEST(Tensor, Forms) {
  TensorSpec random = tensor("f32[4096]:random");
  EXPECT_EQ(random.dtype, DType::FP32);
  EXPECT_EQ(random.shape, (Shape{4096}));
  EXPECT_EQ(random.init, TensorInit::Random);
  EXPECT_EQ(random.seed, kDefaultSeed);
  EXPECT_FALSE(random.readOnly);

  TensorSpec zeros = tensor("fp16[64,128]:zeros");
  EXPECT_EQ(zeros.dtype, DType::FP16);
  EXPECT_EQ(zeros.shape, (Shape{64, 128}));
  EXPECT_EQ(zeros.init, TensorInit::Zeros);

  EXPECT_EQ(tensor("i32[10]:arange").init, TensorInit::Arange);
  EXPECT_EQ(tensor("f32[8]:ones").init, TensorInit::Ones);
  EXPECT_EQ(tensor("f32[4096]:random(seed=7)").seed, 7u);
  EXPECT_EQ(tensor("f32[4]:random( seed = 0x10 )").seed, 16u);
  EXPECT_EQ(tensor("f32[4]:random(seed=18446744073709551615)").seed,
            UINT64_MAX);

  TensorSpec fill = tensor("u8[16]:fill(3)");
  EXPECT_EQ(fill.init, TensorInit::Fill);
  EXPECT_EQ(fill.fillValue, Argument::integer(3));
  EXPECT_EQ(tensor("f32[2]:fill(-1.5)").fillValue, Argument::fp(-1.5));
  EXPECT_EQ(tensor("f32[2]:fill(-inf)").fillValue, Argument::fp(-INFINITY));
  EXPECT_EQ(tensor("f32[2]:fill(2)").fillValue, Argument::integer(2));
  EXPECT_EQ(tensor("i1[2]:fill(true)").fillValue, Argument::boolean(true));
  EXPECT_EQ(tensor("bool[2]:fill(1)").fillValue, Argument::integer(1));
  EXPECT_EQ(tensor("i8[2]:fill(-128)").fillValue, Argument::integer(-128));
  EXPECT_EQ(tensor("u64[2]:fill(0xffffffffffffffff)").fillValue,
            Argument::integer(static_cast<Int128>(UINT64_MAX)));
  EXPECT_EQ(tensor("u8[2]:fill(true)").fillValue, Argument::boolean(true));

  TensorSpec npy = tensor("f32:npy(path/to/file.npy)");
  EXPECT_EQ(npy.init, TensorInit::Npy);
  EXPECT_EQ(npy.npyPath, "path/to/file.npy");
  EXPECT_EQ(npy.shape, std::nullopt);
  EXPECT_EQ(tensor("f32[4096]:npy(a.npy)").shape, (Shape{4096}));
  // A ':' inside the parentheses belongs to the path.
  EXPECT_EQ(tensor("f32:npy(c:/data/a.npy):const").npyPath, "c:/data/a.npy");
  EXPECT_EQ(tensor("f32:npy(a(1).npy)").npyPath, "a(1).npy");

  EXPECT_TRUE(tensor("f32[4096]:random:const").readOnly);
  EXPECT_TRUE(tensor("const:f32[4]:zeros").readOnly);
  EXPECT_TRUE(tensor("f32[4]:const:zeros").readOnly);

  EXPECT_EQ(tensor("bool[3]:zeros").dtype, DType::I1);
  EXPECT_EQ(tensor("float32[2]:zeros").dtype, DType::FP32);
  EXPECT_EQ(tensor("f32[]:ones").shape, Shape{});
  EXPECT_EQ(tensor("f32[ 64 , 128 ]:zeros").shape, (Shape{64, 128}));
  EXPECT_EQ(tensor("f32[0]:zeros").shape, (Shape{0}));
  EXPECT_EQ(tensor("fp8e5[4]:zeros").dtype, DType::FP8E5);
}

TEST(Tensor, Errors) {
  const std::string inits = "zeros, ones, arange, random, random(seed=N), "
                            "fill(VALUE) or npy(FILE)";
  EXPECT_EQ(argError("f33[4]:zeros"), "argument 'x': unknown dtype 'f33'");
  EXPECT_EQ(argError("[4]:zeros"), "argument 'x': missing dtype before '[4]'");
  EXPECT_EQ(argError(":zeros"), "argument 'x': missing dtype in ':zeros'");
  EXPECT_EQ(argError("const"), "argument 'x': cannot parse 'const' (expected "
                               "an integer, a float, true, false, none or "
                               "dtype:NAME)");
  EXPECT_EQ(argError("const:"), "argument 'x': missing dtype in 'const:'");
  EXPECT_EQ(argError("f32[4:zeros"),
            "argument 'x': bad shape '[4' (expected [D0,D1,...])");
  EXPECT_EQ(argError("f32[4]]:zeros"),
            "argument 'x': bad shape '[4]]' (expected [D0,D1,...])");
  EXPECT_EQ(argError("f32[4]x:zeros"),
            "argument 'x': bad shape '[4]x' (expected [D0,D1,...])");
  EXPECT_EQ(argError("f32[-3]:zeros"),
            "argument 'x': bad shape '[-3]': negative dimension -3");
  EXPECT_EQ(argError("f32[4,-1]:zeros"),
            "argument 'x': bad shape '[4,-1]': negative dimension -1");
  EXPECT_EQ(argError("f32[4,]:zeros"),
            "argument 'x': bad shape '[4,]': empty dimension");
  EXPECT_EQ(argError("f32[,]:zeros"),
            "argument 'x': bad shape '[,]': empty dimension");
  EXPECT_EQ(argError("f32[4x]:zeros"),
            "argument 'x': bad shape '[4x]': dimension '4x' is not an integer");
  EXPECT_EQ(argError("f32[+4]:zeros"),
            "argument 'x': bad shape '[+4]': dimension '+4' is not an integer");
  EXPECT_EQ(argError("f32[-x]:zeros"),
            "argument 'x': bad shape '[-x]': dimension '-x' is not an integer");
  EXPECT_EQ(argError("f32[99999999999999999999]:zeros"),
            "argument 'x': bad shape '[99999999999999999999]': dimension "
            "'99999999999999999999' is too large");
  EXPECT_EQ(argError("f32[4294967296,4294967296]:zeros"),
            "argument 'x': shape [4294967296,4294967296] has too many "
            "elements");
  EXPECT_EQ(argError("f32[4]"), "argument 'x': missing initializer after "
                                "'f32[4]' (expected :" +
                                    inits + ")");
  EXPECT_EQ(argError("f32[4]:const"), "argument 'x': missing initializer "
                                      "after 'f32[4]' (expected :" +
                                          inits + ")");
  EXPECT_EQ(argError("f32[4]:"),
            "argument 'x': empty initializer in 'f32[4]:'");
  EXPECT_EQ(argError("f32[4]:rand"),
            "argument 'x': unknown initializer 'rand' (expected " + inits +
                ")");
  EXPECT_EQ(argError("f32[4]:zeros:ones"),
            "argument 'x': more than one initializer ('zeros' and 'ones')");
  EXPECT_EQ(argError("const:f32[4]:zeros:const"),
            "argument 'x': 'const' given twice");
  EXPECT_EQ(argError("f32[4]:zeros(1)"),
            "argument 'x': 'zeros' takes no arguments");
  EXPECT_EQ(argError("f32[4]:arange()"),
            "argument 'x': 'arange' takes no arguments");
  EXPECT_EQ(argError("f32[4]:random(7)"),
            "argument 'x': random takes (seed=N) with N an unsigned 64-bit "
            "integer, not '(7)'");
  EXPECT_EQ(argError("f32[4]:random(seed=-1)"),
            "argument 'x': random takes (seed=N) with N an unsigned 64-bit "
            "integer, not '(seed=-1)'");
  EXPECT_EQ(argError("f32[4]:random(seed=0x10000000000000000)"),
            "argument 'x': random takes (seed=N) with N an unsigned 64-bit "
            "integer, not '(seed=0x10000000000000000)'");
  EXPECT_EQ(argError("f32[4]:random(seed=1.5)"),
            "argument 'x': random takes (seed=N) with N an unsigned 64-bit "
            "integer, not '(seed=1.5)'");
  EXPECT_EQ(argError("f32[4]:random(seed=0x)"),
            "argument 'x': random takes (seed=N) with N an unsigned 64-bit "
            "integer, not '(seed=0x)'");
  EXPECT_EQ(argError("f32[4]:random(seed=1)x"),
            "argument 'x': trailing characters 'x' after 'random(seed=1)'");
  EXPECT_EQ(argError("f32[4]:random)"),
            "argument 'x': unbalanced ')' in 'f32[4]:random)'");
  EXPECT_EQ(argError("f32[4]:npy(a"),
            "argument 'x': unbalanced '(' in 'f32[4]:npy(a'");
  EXPECT_EQ(argError("f32[4]:fill"),
            "argument 'x': fill needs a value: fill(VALUE)");
  EXPECT_EQ(argError("f32[4]:fill()"),
            "argument 'x': fill needs a value: fill(VALUE)");
  EXPECT_EQ(argError("f32[4]:fill(none)"),
            "argument 'x': fill value must be a number, true or false, not "
            "'none'");
  EXPECT_EQ(argError("f32[4]:fill(dtype:fp16)"),
            "argument 'x': fill value must be a number, true or false, not "
            "'dtype:fp16'");
  EXPECT_EQ(argError("f32[4]:fill(abc)"),
            "argument 'x': cannot parse 'abc' (expected an integer, a float, "
            "true, false, none or dtype:NAME)");
  EXPECT_EQ(argError("u8[4]:fill(300)"),
            "argument 'x': fill value 300 is out of range for u8 [0, 255]");
  EXPECT_EQ(argError("u8[4]:fill(-1)"),
            "argument 'x': fill value -1 is out of range for u8 [0, 255]");
  EXPECT_EQ(argError("i8[4]:fill(-129)"),
            "argument 'x': fill value -129 is out of range for i8 [-128, 127]");
  EXPECT_EQ(argError("i64[4]:fill(0x8000000000000000)"),
            "argument 'x': fill value 9223372036854775808 is out of range for "
            "i64 [-9223372036854775808, 9223372036854775807]");
  EXPECT_EQ(argError("i1[2]:fill(2)"),
            "argument 'x': fill value 2 is out of range for i1 [0, 1]");
  EXPECT_EQ(argError("i32[4]:fill(1.5)"),
            "argument 'x': fill value 1.5 is not an integer, as i32 needs");
  EXPECT_EQ(argError("i32[4]:fill(2.0)"),
            "argument 'x': fill value 2.0 is not an integer, as i32 needs");
  EXPECT_EQ(argError("f32[4]:npy()"),
            "argument 'x': npy needs a file: npy(FILE)");
  EXPECT_EQ(argError("f32[4]:npy"),
            "argument 'x': npy needs a file: npy(FILE)");
  EXPECT_EQ(argError("f32:zeros"),
            "argument 'x': missing shape after 'f32' (write f32[D0,D1,...]; "
            "only npy(FILE) may omit it)");
  EXPECT_EQ(argError("fp8e5[4]:random"),
            "argument 'x': initializer 'random' is not supported for fp8e5 "
            "(kjit-run has no fp8 conversions; use zeros)");
  EXPECT_EQ(argError("fp8e4nv:npy(a.npy)"),
            "argument 'x': initializer 'npy' is not supported for fp8e4nv "
            "(kjit-run has no fp8 conversions; use zeros)");
}

//===----------------------------------------------------------------------===//
// NAME=VALUE options
//===----------------------------------------------------------------------===//

TEST(Option, Arg) {
  absl::StatusOr<NamedArg> arg = parseArgOption("x_ptr=f32[4]:zeros:const");
  ASSERT_TRUE(arg.ok()) << arg.status();
  EXPECT_EQ(arg->name, "x_ptr");
  ASSERT_TRUE(arg->value.isTensor());
  EXPECT_TRUE(arg->value.tensor->readOnly);
  absl::StatusOr<NamedArg> n = parseArgOption("N=4096");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->value.scalar, Argument::integer(4096));
  // Only the first '=' separates.
  absl::StatusOr<NamedArg> path = parseArgOption("x=f32:npy(a=b.npy)");
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(path->value.tensor->npyPath, "a=b.npy");

  EXPECT_EQ(parseArgOption("x").status().message(),
            "--arg 'x': expected NAME=VALUE");
  EXPECT_EQ(parseArgOption("=3").status().message(),
            "--arg '=3': expected NAME=VALUE");
  EXPECT_EQ(parseArgOption("1x=3").status().message(),
            "--arg '1x=3': '1x' is not a valid name");
  EXPECT_EQ(parseArgOption("a.b=3").status().message(),
            "--arg 'a.b=3': 'a.b' is not a valid name");
  EXPECT_EQ(parseArgOption("a b=3").status().message(),
            "--arg 'a b=3': 'a b' is not a valid name");
  EXPECT_EQ(parseArgOption("n=").status().message(),
            "argument 'n': empty value");
  EXPECT_EQ(parseArgOption("n=f33[2]:zeros").status().message(),
            "argument 'n': unknown dtype 'f33'");
}

TEST(Option, Global) {
  absl::StatusOr<NamedGlobal> dotted = parseGlobalOption("mod.BLOCK=128");
  ASSERT_TRUE(dotted.ok()) << dotted.status();
  EXPECT_EQ(dotted->name, "mod.BLOCK");
  EXPECT_EQ(dotted->value, Argument::integer(128));
  EXPECT_EQ(parseGlobalOption("T=dtype:fp16")->value,
            Argument::dtypeValue(DType::FP16));
  EXPECT_EQ(parseGlobalOption("EPS=1e-5")->value, Argument::fp(1e-5));
  EXPECT_EQ(parseGlobalOption("ON=false")->value, Argument::boolean(false));
  EXPECT_EQ(parseGlobalOption("P=none")->value, Argument::none());

  EXPECT_EQ(parseGlobalOption("G=f32[4]:zeros").status().message(),
            "global 'G': 'f32[4]:zeros' is a tensor; a global value is an "
            "integer, a float, true, false, none or dtype:NAME");
  EXPECT_EQ(parseGlobalOption("G=abc").status().message(),
            "global 'G': cannot parse 'abc' (expected an integer, a float, "
            "true, false, none or dtype:NAME)");
  EXPECT_EQ(parseGlobalOption("G=dtype:f33").status().message(),
            "global 'G': unknown dtype 'f33'");
  EXPECT_EQ(parseGlobalOption("G").status().message(),
            "--global 'G': expected NAME=VALUE");
  EXPECT_EQ(parseGlobalOption("a.=1").status().message(),
            "--global 'a.=1': 'a.' is not a valid global name (NAME, or "
            "MODULE::NAME for a global of a nested module)");
  EXPECT_EQ(parseGlobalOption(".a=1").status().message(),
            "--global '.a=1': '.a' is not a valid global name (NAME, or "
            "MODULE::NAME for a global of a nested module)");
}

//===----------------------------------------------------------------------===//
// Building buffers
//===----------------------------------------------------------------------===//

HostBuffer build(std::string_view text) {
  absl::StatusOr<HostBuffer> buffer = buildTensor("x", tensor(text));
  EXPECT_TRUE(buffer.ok()) << text << ": " << buffer.status();
  return buffer.ok() ? std::move(*buffer) : HostBuffer();
}

std::string buildError(std::string_view text) {
  absl::StatusOr<HostBuffer> buffer = buildTensor("x", tensor(text));
  EXPECT_FALSE(buffer.ok()) << text;
  return buffer.ok() ? "" : std::string(buffer.status().message());
}

bool sameBytes(const HostBuffer &a, const HostBuffer &b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.data(), b.data(), a.sizeInBytes()) == 0;
}

TEST(Build, Initializers) {
  HostBuffer random = build("f32[257]:random");
  HostBuffer reference = HostBuffer::allocate(DType::FP32, {257}).value();
  fillRandom(reference, 0);
  EXPECT_TRUE(sameBytes(random, reference)); // default seed 0
  EXPECT_TRUE(sameBytes(build("f32[257]:random(seed=0)"), random));
  EXPECT_FALSE(sameBytes(build("f32[257]:random(seed=1)"), random));
  EXPECT_EQ(random.address() % HostBuffer::kAlignment, 0u);

  EXPECT_EQ(formatBuffer(build("fp16[3]:ones")), "fp16[3] [1, 1, 1]");
  EXPECT_EQ(formatBuffer(build("i1[3]:ones")), "i1[3] [true, true, true]");
  EXPECT_EQ(formatBuffer(build("i32[2,2]:arange")), "i32[2,2] [0, 1, 2, 3]");
  EXPECT_EQ(formatBuffer(build("u8[3]:fill(3)")), "u8[3] [3, 3, 3]");
  EXPECT_EQ(formatBuffer(build("bf16[2]:fill(-1.5)")), "bf16[2] [-1.5, -1.5]");
  EXPECT_EQ(formatBuffer(build("f64[2]:fill(true)")), "fp64[2] [1, 1]");
  EXPECT_EQ(formatBuffer(build("f32[2]:zeros")), "fp32[2] [0, 0]");
  EXPECT_EQ(formatBuffer(build("f32[]:fill(7)")), "fp32[] [7]");
  EXPECT_EQ(formatBuffer(build("fp8e5[2]:zeros")), "fp8e5[2] [0x00, 0x00]");
  EXPECT_EQ(build("f32[0]:random").numElements(), 0);
}

TEST(Build, TooLarge) {
  std::string message = buildError("f32[1000000000000000]:zeros");
  EXPECT_EQ(message.rfind("argument 'x': fp32[1000000000000000] needs "
                          "4000000000000000 bytes, more than this machine's ",
                          0),
            0u)
      << message;
}

class BuildNpy : public testing::Test {
protected:
  void SetUp() override {
    dir_ = testing::TempDir() + "kjit-run-argspec-" +
           std::to_string(::getpid()) + "-" +
           testing::UnitTest::GetInstance()->current_test_info()->name();
    std::string command = "mkdir -p '" + dir_ + "'";
    ASSERT_EQ(std::system(command.c_str()), 0);
  }
  void TearDown() override {
    std::string command = "rm -rf '" + dir_ + "'";
    (void)std::system(command.c_str());
  }
  std::string dir_;
};

TEST_F(BuildNpy, MatchingDTypeAndShape) {
  HostBuffer source = HostBuffer::allocate(DType::FP32, {3, 4}).value();
  fillRandom(source, 3);
  std::string path = dir_ + "/a.npy";
  ASSERT_TRUE(writeNpy(path, source).ok());

  EXPECT_TRUE(sameBytes(build("f32:npy(" + path + ")"), source));
  EXPECT_TRUE(sameBytes(build("f32[3,4]:npy(" + path + ")"), source));
  EXPECT_EQ(buildError("f32[12]:npy(" + path + ")"),
            "argument 'x': npy file '" + path + "' has shape [3,4], not [12]");
  EXPECT_EQ(buildError("fp64[3,4]:npy(" + path + ")"),
            "argument 'x': npy file '" + path +
                "' holds '<f4' (fp32), not "
                "fp64");
  EXPECT_EQ(buildError("bf16:npy(" + path + ")"),
            "argument 'x': npy file '" + path +
                "' holds '<f4' (fp32), not "
                "bf16");

  // bf16 goes through '<u2' raw bits; u16 reads the same file as integers.
  HostBuffer bf = HostBuffer::allocate(DType::BF16, {5}).value();
  fillRandom(bf, 4);
  std::string bfPath = dir_ + "/bf.npy";
  ASSERT_TRUE(writeNpy(bfPath, bf).ok());
  EXPECT_TRUE(sameBytes(build("bf16:npy(" + bfPath + ")"), bf));
  HostBuffer asU16 = build("u16[5]:npy(" + bfPath + ")");
  EXPECT_EQ(asU16.dtype(), DType::U16);
  EXPECT_EQ(std::memcmp(asU16.data(), bf.data(), 10), 0);

  std::string missing = dir_ + "/missing.npy";
  EXPECT_EQ(buildError("f32:npy(" + missing + ")"),
            "argument 'x': npy file '" + missing +
                "': cannot open: No such file or directory");
}

} // namespace
