//===- SpecializationTest.cpp - records, manifests, JSON and repr ---------===//
//
// The specialization record's repr, its JSON form and exact round trip, and
// every message of its reader; the kernel manifest's verifier and JSON; and
// truncated/garbled input, which must give an error and never crash.
//
//===----------------------------------------------------------------------===//

#include "kjit/Model/Specialization.h"
#include "kjit/Model/Binder.h"
#include "kjit/Model/KernelManifest.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace kjit::rt;

namespace {

KernelParam param(std::string name, ParamType type = ParamType::any()) {
  KernelParam p;
  p.name = std::move(name);
  p.type = type;
  return p;
}

KernelManifest manifestOf(std::vector<KernelParam> params,
                          std::string name = "add") {
  KernelManifest m;
  m.name = std::move(name);
  m.params = std::move(params);
  return m;
}

SpecializationRecord recordOf(const KernelManifest &m,
                              const std::vector<Argument> &args,
                              const std::vector<KeywordArgument> &kw = {}) {
  absl::StatusOr<BindPlan> plan = BindPlan::create(m);
  EXPECT_TRUE(plan.ok()) << plan.status();
  Binding b = plan->makeBinding();
  absl::Status s = plan->bind(args, kw, b);
  EXPECT_TRUE(s.ok()) << s;
  return plan->makeRecord(b);
}

/// The small record most reader tests edit.
SpecializationRecord smallRecord() {
  KernelParam b = param("B");
  b.isConstexpr = true;
  return recordOf(
      manifestOf({param("x", ParamType::pointer(DType::FP32)),
                  param("n", ParamType::scalar(DType::I32)), param("p"), b}),
      {Argument::tensor(0x1000, DType::FP32), Argument::integer(1),
       Argument::none(), Argument::integer(1024)});
}

const char kSmallJson[] =
    R"({"version":1,"name":"add","params":["x","n","p","B"],)"
    R"("signature":{"x":"*fp32","n":"i32","p":"*i8"},)"
    R"("spec":{"x":"D","n":"1","p":"N"},"constants":{"n":1,"p":null,"B":1024},)"
    R"("attrs":{"divisibility_16":["x"],"equal_to_1":["n"]},)"
    R"("options":{"num_warps":4,"num_ctas":1,"num_stages":3,"maxnreg":null,)"
    R"("ptx_version":null,"enable_fp_fusion":true,"enable_reflect_ftz":true,)"
    R"("launch_cooperative_grid":false,"launch_pdl":false,"debug":false,)"
    R"("sanitize_overflow":false},)"
    R"("key":"x:*fp32:D,n:i32:1,p:*i8:N=none,B=1024|debug=false,)"
    R"(enable_fp_fusion=true,enable_reflect_ftz=true,)"
    R"(launch_cooperative_grid=false,launch_pdl=false,maxnreg=none,)"
    R"(num_ctas=1,num_stages=3,num_warps=4,ptx_version=none,)"
    R"(sanitize_overflow=false"})";

void expectSameRecord(const SpecializationRecord &a,
                      const SpecializationRecord &b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.key, b.key);
  EXPECT_EQ(a.options, b.options);
  ASSERT_EQ(a.params.size(), b.params.size());
  for (size_t i = 0; i < a.params.size(); ++i) {
    const SpecializedParam &p = a.params[i];
    const SpecializedParam &q = b.params[i];
    EXPECT_EQ(p.name, q.name);
    EXPECT_EQ(p.isConstexpr, q.isConstexpr) << p.name;
    if (p.isConstexpr) {
      EXPECT_EQ(p.value, q.value) << p.name;
    } else {
      EXPECT_EQ(p.type, q.type) << p.name;
      EXPECT_EQ(p.specKey, q.specKey) << p.name;
      EXPECT_EQ(p.backendAttrs, q.backendAttrs) << p.name;
    }
  }
  EXPECT_EQ(a.backendAttributes, b.backendAttributes);
}

//===----------------------------------------------------------------------===//
// repr, views, JSON form
//===----------------------------------------------------------------------===//

TEST(Record, Repr) {
  SpecializationRecord r =
      recordOf(manifestOf({param("x", ParamType::pointer(DType::FP32)),
                           param("n", ParamType::scalar(DType::I32))},
                          "name"),
               {Argument::tensor(0x1000, DType::FP32), Argument::integer(7)});
  EXPECT_EQ(repr(r), "name[num_warps=4, num_ctas=1, num_stages=3, "
                     "enable_fp_fusion=true](x: *fp32, n: i32)");
  std::vector<KeywordArgument> kw = {
      {"enable_fp_fusion", Argument::boolean(false)},
      {"num_warps", Argument::integer(8)}};
  KernelParam block = param("BLOCK");
  block.isConstexpr = true;
  SpecializationRecord withConstexpr = recordOf(
      manifestOf({param("x"), block}, "k"),
      {Argument::tensor(0x1000, DType::BF16, true), Argument::fp(0.5)}, kw);
  EXPECT_EQ(repr(withConstexpr),
            "k[num_warps=8, num_ctas=1, num_stages=3, "
            "enable_fp_fusion=false](x: *kbf16, BLOCK: constexpr = 0.5)");
}

TEST(Record, ViewsForTheSpecializationPass) {
  SpecializationRecord r = smallRecord();
  using Sig = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(r.signature(), (Sig{{"x", "*fp32"}, {"n", "i32"}, {"p", "*i8"}}));
  EXPECT_EQ(r.divisibleBy16(), std::vector<std::string>{"x"});
  EXPECT_EQ(r.equalTo1(), std::vector<std::string>{"n"});
  auto constants = r.constants();
  ASSERT_EQ(constants.size(), 3u);
  EXPECT_EQ(constants[0].first, "n");
  EXPECT_EQ(constants[0].second, Argument::integer(1));
  EXPECT_EQ(constants[1].first, "p");
  EXPECT_TRUE(constants[1].second.isNone());
  EXPECT_EQ(constants[2].first, "B");
  EXPECT_EQ(constants[2].second, Argument::integer(1024));
  ASSERT_NE(r.find("p"), nullptr);
  EXPECT_EQ(r.find("p")->type.kind, SigType::Kind::NullPointer);
  EXPECT_EQ(r.find("q"), nullptr);
}

TEST(Record, JsonForm) { EXPECT_EQ(toJson(smallRecord()), kSmallJson); }

// A backend's own attributes (plugin ABI 1.3): in attrs after the runtime's
// two, in the key after the spec key, and read back exactly (also one that
// holds nowhere, which a record must still name).
TEST(Record, BackendAttributes) {
  SpecializationRecord record = smallRecord();
  record.backendAttributes = {"pointer_range_32", "small_int"};
  record.params[0].backendAttrs = 1; // x: pointer_range_32
  record.key = canonicalKey(record);
  EXPECT_EQ(record.key.substr(0, record.key.find(',')),
            "x:*fp32:D+pointer_range_32");
  std::string json = toJson(record);
  EXPECT_NE(json.find(R"("equal_to_1":["n"],"pointer_range_32":["x"],)"
                      R"("small_int":[]})"),
            std::string::npos)
      << json;
  absl::StatusOr<SpecializationRecord> read = specializationFromJson(json);
  ASSERT_TRUE(read.ok()) << read.status();
  expectSameRecord(record, *read);
}

TEST(Record, RoundTrip) {
  KernelParam y = param("y", ParamType::pointer(DType::FP8E4NV));
  y.isConst = true;
  KernelParam m = param("m");
  m.doNotSpecialize = true;
  std::vector<KernelParam> params = {
      param("x", ParamType::pointer(DType::FP32)),
      y,
      m,
      param("u"),
      param("f", ParamType::scalar(DType::FP64)),
      param("p"),
      param("b")};
  const char *constexprs[] = {"C0", "C1", "C2", "C3", "C4", "C5",
                              "C6", "C7", "C8", "C9", "C10"};
  for (const char *name : constexprs) {
    KernelParam c = param(name);
    c.isConstexpr = true;
    params.push_back(c);
  }
  std::vector<Argument> args = {
      Argument::tensor(0x1000, DType::FP32),
      Argument::tensor(0x1001, DType::FP8E4NV),
      Argument::integer(7),
      Argument::integer((static_cast<Int128>(1) << 64) - 1),
      Argument::fp(0.1),
      Argument::none(),
      Argument::boolean(false),
      Argument::none(),
      Argument::boolean(true),
      Argument::integer(-(static_cast<Int128>(1) << 63)),
      Argument::integer((static_cast<Int128>(1) << 64) - 1),
      Argument::fp(0.1),
      Argument::fp(-0.0),
      Argument::fp(std::numeric_limits<double>::infinity()),
      Argument::fp(-std::numeric_limits<double>::infinity()),
      Argument::fp(std::numeric_limits<double>::quiet_NaN()),
      Argument::dtypeValue(DType::FP8E5B16),
      Argument::fp(1e300)};
  std::vector<KeywordArgument> kw = {{"maxnreg", Argument::integer(96)},
                                     {"debug", Argument::boolean(true)},
                                     {"num_stages", Argument::integer(0)}};
  SpecializationRecord r = recordOf(manifestOf(params, "rt"), args, kw);
  std::string json = toJson(r);
  absl::StatusOr<SpecializationRecord> read = specializationFromJson(json);
  ASSERT_TRUE(read.ok()) << read.status() << "\n" << json;
  expectSameRecord(r, *read);
  EXPECT_EQ(toJson(*read), json);
  EXPECT_EQ(repr(*read), repr(r));
  // Non-finite floats travel as their bits.
  EXPECT_NE(json.find(R"("C6":{"float_bits":"0x7ff0000000000000"})"),
            std::string::npos);
  // Whitespace is not significant.
  std::string spaced;
  bool inString = false;
  for (char c : json) {
    spaced += c;
    inString ^= c == '"';
    if (!inString && (c == ',' || c == ':'))
      spaced += "\n ";
  }
  absl::StatusOr<SpecializationRecord> fromSpaced =
      specializationFromJson(spaced);
  ASSERT_TRUE(fromSpaced.ok()) << fromSpaced.status();
  expectSameRecord(r, *fromSpaced);
}

//===----------------------------------------------------------------------===//
// Reader errors
//===----------------------------------------------------------------------===//

struct Edit {
  const char *from;
  const char *to;
  const char *message;
};

TEST(RecordReader, EveryMessage) {
  const std::string prefix = "specialization record: ";
  Edit edits[] = {
      {R"({"version":1,)", R"([{"version":1,)",
       "JSON error at offset 694: unexpected end of input, expected ',' or ']' "
       "in an array"},
      {R"("version":1)", R"("version":2)",
       "field 'version': unsupported format version 2 (this build reads 1)"},
      {R"("version":1)", R"("version":"1")",
       "field 'version': expected a number, got a string"},
      {R"("name":"add")", R"("name":"")",
       "field 'name': the kernel name is empty"},
      {R"("name":"add")", R"("name":5)",
       "field 'name': expected a string, got a number"},
      {R"("name":"add",)", R"("name":"add","extra":1,)",
       "unknown member \"extra\""},
      {R"(,"key":"x:)", R"(,"kex":"x:)", "unknown member \"kex\""},
      {R"(["x","n","p","B"])", R"(["x","n","p","B",3])",
       "field 'params[4]': expected a string, got a number"},
      {R"(["x","n","p","B"])", R"(["x","x","p","B"])",
       "field 'params[1]': duplicate parameter \"x\""},
      {R"(["x","n","p","B"])", R"(["","n","p","B"])",
       "field 'params[0]': empty parameter name"},
      {R"(["x","n","p","B"])", R"({"x":1})",
       "field 'params': expected an array, got an object"},
      {R"("signature":{"x")", R"("signature":{"q":"i32","x")",
       "field 'signature': unknown parameter \"q\""},
      {R"("x":"*fp32")", R"("x":"*fp33")",
       "field 'signature.x': unknown type \"*fp33\""},
      {R"("x":"*fp32")", R"("x":"*float32")",
       "field 'signature.x': unknown type \"*float32\""},
      {R"("x":"*fp32")", R"("x":32)",
       "field 'signature.x': expected a string, got a number"},
      {R"("signature":{"x":"*fp32","n":"i32","p":"*i8"})", R"("signature":[])",
       "field 'signature': expected an object, got an array"},
      {R"("p":"N"})", R"("p":"N","B":"N"})",
       "field 'spec.B': a constexpr parameter has no spec key"},
      {R"("x":"D")", R"("x":"X")",
       "field 'spec.x': expected \"D\", \"1\" or \"N\""},
      {R"("x":"D")", R"("x":1)",
       "field 'spec.x': expected \"D\", \"1\" or \"N\""},
      {R"("x":"D")", R"("x":"1")",
       "field 'spec.x': spec key 1 is impossible for type *fp32"},
      // Only integers take 1 (and D); a bool and a float take neither.
      {R"("n":"i32")", R"("n":"i1")",
       "field 'spec.n': spec key 1 is impossible for type i1"},
      {R"("n":"i32")", R"("n":"fp16")",
       "field 'spec.n': spec key 1 is impossible for type fp16"},
      {R"("n":"i32","p":"*i8"},"spec":{"x":"D","n":"1")",
       R"("n":"fp8e5","p":"*i8"},"spec":{"x":"D","n":"D")",
       "field 'spec.n': spec key D is impossible for type fp8e5"},
      {R"("n":"1","p":"N")", R"("n":"1","p":"N","z":"N")",
       "field 'spec': unknown parameter \"z\""},
      {R"(,"B":1024})", R"(})",
       "field 'constants': missing the value of constexpr parameter \"B\" "
       "(every parameter is in the signature or the constants)"},
      {R"("constants":{"n":1,)", R"("constants":{)",
       "field 'constants': parameter \"n\" has spec key 1 but no constant 1"},
      {R"("constants":{"n":1,)", R"("constants":{"n":2,)",
       "field 'constants.n': the constant of a non-constexpr parameter must "
       "be null (a None *i8) or 1 (spec key 1)"},
      {R"("constants":{"n":1,)", R"("constants":{"n":1,"x":null,)",
       "field 'constants.x': the constant of a non-constexpr parameter must "
       "be null (a None *i8) or 1 (spec key 1)"},
      {R"("p":"N"})", R"("p":"D"})",
       "field 'constants.p': a None pointer cannot have spec key D"},
      {R"("B":1024})", R"("B":"fp33"})",
       "field 'constants.B': unknown dtype \"fp33\""},
      {R"("B":1024})", R"("B":"float32"})",
       "field 'constants.B': unknown dtype \"float32\""},
      {R"("B":1024})", R"("B":[1]})",
       "field 'constants.B': expected null, a bool, a number, a dtype name "
       "or a float_bits object, got an array"},
      {R"("B":1024})", R"("B":{"float_bits":"0x12"}})",
       "field 'constants.B.float_bits': expected 0x and 16 hex digits, got "
       "\"0x12\""},
      {R"("B":1024})", R"("B":{"float_bits":"0x7FF0000000000000"}})",
       "field 'constants.B.float_bits': expected 0x and 16 hex digits, got "
       "\"0x7FF0000000000000\""},
      {R"("B":1024})", R"("B":{"float_bits":7}})",
       "field 'constants.B.float_bits': expected a string, got a number"},
      {R"("B":1024})", R"("B":{"bits":1}})",
       "field 'constants.B': unknown member \"bits\""},
      {R"("B":1024})", R"("B":1e999})",
       "field 'constants.B': number 1e999 is out of range for a double"},
      {R"("B":1024})", R"("B":340282366920938463463374607431768211456})",
       "field 'constants.B': integer 340282366920938463463374607431768211456 "
       "does not fit in 128 bits"},
      {R"("divisibility_16":["x"])", R"("divisibility_16":[])",
       "field 'attrs.divisibility_16': does not match the spec keys "
       "(expected [\"x\"])"},
      {R"("equal_to_1":["n"])", R"("equal_to_1":["n","x"])",
       "field 'attrs.equal_to_1': does not match the spec keys (expected "
       "[\"n\"])"},
      {R"("equal_to_1":["n"])", R"("equal_to_1":[1])",
       "field 'attrs.equal_to_1': expected strings, got a number"},
      {R"("equal_to_1":["n"])", R"("equal_to_1":"n")",
       "field 'attrs.equal_to_1': expected an array, got a string"},
      // Any other member of attrs is a backend's attribute (plugin ABI 1.3).
      {R"("equal_to_1":["n"]})", R"("equal_to_1":["n"],"Pointer-Range":[]})",
       "field 'attrs.Pointer-Range': a backend attribute's name is "
       "[a-z0-9_]+ of at most 64 bytes"},
      {R"("equal_to_1":["n"]})", R"("equal_to_1":["n"],"r32":"x"})",
       "field 'attrs.r32': expected an array, got a string"},
      {R"("equal_to_1":["n"]})", R"("equal_to_1":["n"],"r32":[1]})",
       "field 'attrs.r32': expected strings, got a number"},
      {R"("equal_to_1":["n"]})", R"("equal_to_1":["n"],"r32":["q"]})",
       "field 'attrs.r32': unknown parameter \"q\""},
      {R"("equal_to_1":["n"]})", R"("equal_to_1":["n"],"r32":["B"]})",
       "field 'attrs.r32': names constexpr parameter \"B\""},
      {R"("equal_to_1":["n"]})", R"("equal_to_1":["n"],"r32":["x","x"]})",
       "field 'attrs.r32': names parameter \"x\" twice"},
      {R"("equal_to_1":["n"]})",
       R"("equal_to_1":["n"],"a0":[],"a1":[],"a2":[],"a3":[],"a4":[],)"
       R"("a5":[],"a6":[],"a7":[],"a8":[]})",
       "field 'attrs.a8': more than 8 backend attributes"},
      {R"("equal_to_1":["n"]})", R"("equal_to_1":["n"],"r32":["x"]})",
       "field 'key': does not match the record's contents (expected "
       "\"x:*fp32:D+r32,n:i32:1,p:*i8:N=none,B=1024|debug=false,"
       "enable_fp_fusion=true,enable_reflect_ftz=true,launch_cooperative_"
       "grid=false,launch_pdl=false,maxnreg=none,num_ctas=1,num_stages=3,"
       "num_warps=4,ptx_version=none,sanitize_overflow=false\")"},
      {R"(,"equal_to_1":["n"]})", R"(})",
       "field 'attrs': missing member 'equal_to_1'"},
      {R"("num_warps":4,)", R"("num_warps":3,)",
       "field 'options.num_warps': launch option 'num_warps' must be a power "
       "of two, got 3"},
      {R"("num_warps":4,)", R"("num_warps":4.0,)",
       "field 'options.num_warps': launch option 'num_warps' expects an "
       "integer, got a float (4)"},
      {R"("num_warps":4,)", R"("num_warps":"fp32",)",
       "field 'options.num_warps': launch option 'num_warps' expects an "
       "integer, got a dtype (fp32)"},
      {R"(,"debug":false)", R"()", "field 'options': missing member 'debug'"},
      {R"("debug":false)", R"("debug":false,"warp_size":32)",
       "field 'options': unknown member \"warp_size\""},
      {R"("key":"x:*fp32:D,)", R"("key":"x:*fp32:N,)",
       "field 'key': does not match the record's contents (expected "
       "\"x:*fp32:D,n:i32:1,p:*i8:N=none,B=1024|debug=false,"
       "enable_fp_fusion=true,enable_reflect_ftz=true,launch_cooperative_"
       "grid=false,launch_pdl=false,maxnreg=none,num_ctas=1,num_stages=3,"
       "num_warps=4,ptx_version=none,sanitize_overflow=false\")"},
  };
  for (const Edit &e : edits) {
    std::string json = kSmallJson;
    size_t at = json.find(e.from);
    ASSERT_NE(at, std::string::npos) << e.from;
    json.replace(at, std::strlen(e.from), e.to);
    absl::StatusOr<SpecializationRecord> r = specializationFromJson(json);
    ASSERT_FALSE(r.ok()) << json;
    EXPECT_EQ(std::string(r.status().message()), prefix + e.message) << json;
  }
  // Whole-document cases.
  absl::StatusOr<SpecializationRecord> r = specializationFromJson("[]");
  EXPECT_EQ(r.status().message(), prefix + "expected an object, got an array");
  r = specializationFromJson("{}");
  EXPECT_EQ(r.status().message(), prefix + "missing member 'version'");
  r = specializationFromJson("");
  EXPECT_EQ(r.status().message(),
            prefix +
                "JSON error at offset 0: unexpected end of input, expected a "
                "value");
}

//===----------------------------------------------------------------------===//
// Garbled input: always an error or a record that round-trips, never a crash
//===----------------------------------------------------------------------===//

template <typename Read, typename Write>
void garble(const std::string &valid, Read read, Write write,
            std::string_view prefix) {
  // Every truncation is an error (the document's closing brace is last).
  for (size_t n = 0; n < valid.size(); ++n) {
    auto r = read(valid.substr(0, n));
    ASSERT_FALSE(r.ok()) << n;
    EXPECT_EQ(std::string(r.status().message()).rfind(prefix, 0), 0u)
        << r.status();
  }
  // Every single-byte replacement is an error or reads back to a document
  // that writes the same way again.
  const char replacements[] = {'"', '{', '}', '[', ']', ',',  ':',    '0',
                               '9', '-', 'e', 'x', ' ', '\\', '\xff', '\0'};
  size_t accepted = 0;
  for (size_t i = 0; i < valid.size(); ++i) {
    for (char c : replacements) {
      std::string text = valid;
      text[i] = c;
      auto r = read(text);
      if (!r.ok())
        continue;
      ++accepted;
      std::string again = write(*r);
      auto r2 = read(again);
      ASSERT_TRUE(r2.ok()) << again;
      EXPECT_EQ(write(*r2), again);
    }
  }
  // Deterministic random garbage, including deletions and insertions.
  std::mt19937 rng(1234);
  for (int round = 0; round < 2000; ++round) {
    std::string text = valid;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      size_t at = rng() % text.size();
      switch (rng() % 3) {
      case 0:
        text[at] = static_cast<char>(rng());
        break;
      case 1:
        text.erase(at, 1 + rng() % 8);
        break;
      default:
        text.insert(at, 1, static_cast<char>(rng()));
      }
    }
    auto r = read(text);
    if (r.ok()) {
      ++accepted;
      std::string again = write(*r);
      EXPECT_TRUE(read(again).ok()) << again;
    }
  }
  // Some edits (a digit in a constexpr value, whitespace) are benign.
  EXPECT_GT(accepted, 0u);
}

TEST(RecordReader, GarbledInput) {
  garble(
      kSmallJson, [](std::string_view t) { return specializationFromJson(t); },
      [](const SpecializationRecord &r) { return toJson(r); },
      "specialization record: ");
}

//===----------------------------------------------------------------------===//
// Kernel manifest
//===----------------------------------------------------------------------===//

KernelManifest richManifest() {
  KernelParam x = param("x", ParamType::pointer(DType::FP32));
  KernelParam y = param("y", ParamType::pointer(DType::U8));
  y.isConst = true;
  y.doNotSpecializeOnAlignment = true;
  KernelParam n = param("n", ParamType::scalar(DType::I64));
  n.doNotSpecialize = true;
  KernelParam a = param("a");
  a.isConst = true;
  KernelParam block = param("BLOCK", ParamType::scalar(DType::I32));
  block.isConstexpr = true;
  block.defaultValue = Argument::integer(1024);
  KernelParam eps = param("eps", ParamType::scalar(DType::FP32));
  eps.defaultValue = Argument::fp(1e-6);
  KernelParam flag = param("flag", ParamType::scalar(DType::I1));
  flag.defaultValue = Argument::boolean(true);
  KernelParam out = param("out", ParamType::pointer(DType::BF16));
  out.defaultValue = Argument::none();
  return manifestOf({x, y, n, a, block, eps, flag, out}, "rich");
}

TEST(Manifest, JsonForm) {
  KernelParam n = param("n", ParamType::scalar(DType::I32));
  n.defaultValue = Argument::integer(16);
  KernelParam p = param("p", ParamType::pointer(DType::FP16));
  p.isConst = true;
  p.defaultValue = Argument::none();
  EXPECT_EQ(
      manifestToJson(manifestOf({param("x"), n, p})),
      R"({"version":1,"name":"add","params":[)"
      R"({"name":"x","type":"any","constexpr":false,"do_not_specialize":false,)"
      R"("do_not_specialize_on_alignment":false,"const":false},)"
      R"({"name":"n","type":"i32","constexpr":false,"do_not_specialize":false,)"
      R"("do_not_specialize_on_alignment":false,"const":false,"default":16},)"
      R"({"name":"p","type":"*fp16","constexpr":false,)"
      R"("do_not_specialize":false,"do_not_specialize_on_alignment":false,)"
      R"("const":true,"default":null}]})");
}

TEST(Manifest, RoundTrip) {
  KernelManifest m = richManifest();
  std::string json = manifestToJson(m);
  absl::StatusOr<KernelManifest> read = manifestFromJson(json);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->name, m.name);
  ASSERT_EQ(read->params.size(), m.params.size());
  for (size_t i = 0; i < m.params.size(); ++i) {
    const KernelParam &a = m.params[i];
    const KernelParam &b = read->params[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.type, b.type) << a.name;
    EXPECT_EQ(a.isConstexpr, b.isConstexpr) << a.name;
    EXPECT_EQ(a.doNotSpecialize, b.doNotSpecialize) << a.name;
    EXPECT_EQ(a.doNotSpecializeOnAlignment, b.doNotSpecializeOnAlignment);
    EXPECT_EQ(a.isConst, b.isConst) << a.name;
    EXPECT_EQ(a.defaultValue, b.defaultValue) << a.name;
  }
  EXPECT_EQ(manifestToJson(*read), json);
}

TEST(Manifest, ParamTypeNames) {
  EXPECT_EQ(parseParamType("any"), ParamType::any());
  EXPECT_EQ(parseParamType("*fp32"), ParamType::pointer(DType::FP32));
  EXPECT_EQ(parseParamType("*float32"), ParamType::pointer(DType::FP32));
  EXPECT_EQ(parseParamType("u64"), ParamType::scalar(DType::U64));
  EXPECT_FALSE(parseParamType("*kfp32"));
  EXPECT_FALSE(parseParamType("torch.float32"));
  EXPECT_FALSE(parseParamType(""));
  EXPECT_FALSE(parseParamType("*"));
  for (int i = 0; i < kNumDTypes; ++i) {
    auto dtype = static_cast<DType>(i);
    EXPECT_EQ(parseParamType(toString(ParamType::pointer(dtype))),
              ParamType::pointer(dtype));
    EXPECT_EQ(parseParamType(toString(ParamType::scalar(dtype))),
              ParamType::scalar(dtype));
  }
}

TEST(Manifest, VerifierMessages) {
  auto errorOf = [](const KernelManifest &m) {
    absl::Status s = verifyManifest(m);
    EXPECT_FALSE(s.ok());
    // The binder refuses the same manifest with the same message.
    absl::StatusOr<BindPlan> plan = BindPlan::create(m);
    EXPECT_FALSE(plan.ok());
    if (!plan.ok()) {
      EXPECT_EQ(plan.status().message(), s.message());
    }
    return std::string(s.message());
  };
  EXPECT_EQ(errorOf(manifestOf({}, "")),
            "kernel manifest has an empty kernel name");
  EXPECT_EQ(errorOf(manifestOf({param("x"), param("")})),
            "kernel 'add': parameter 1 has an empty name");
  EXPECT_EQ(errorOf(manifestOf({param("x"), param("x")})),
            "kernel 'add': duplicate parameter name 'x'");
  EXPECT_EQ(errorOf(manifestOf({param("num_warps")})),
            "kernel 'add': parameter 'num_warps' has the name of a launch "
            "option; a keyword argument of that name could not be told "
            "apart");
  KernelParam cp = param("p", ParamType::pointer(DType::FP32));
  cp.isConstexpr = true;
  EXPECT_EQ(errorOf(manifestOf({cp})),
            "kernel 'add': parameter 'p' is a pointer and cannot be constexpr");
  KernelParam cd = param("c");
  cd.isConstexpr = true;
  cd.doNotSpecialize = true;
  EXPECT_EQ(errorOf(manifestOf({cd})),
            "kernel 'add': parameter 'c' is constexpr and cannot be "
            "do_not_specialize");
  KernelParam cs = param("n", ParamType::scalar(DType::I32));
  cs.isConst = true;
  EXPECT_EQ(errorOf(manifestOf({cs})),
            "kernel 'add': parameter 'n' of type i32 is marked const, which "
            "only applies to pointers");
  EXPECT_EQ(errorOf(manifestOf({param("f", ParamType::scalar(DType::FP8E5))})),
            "kernel 'add': parameter 'f' has scalar type fp8e5; fp8 values "
            "cannot be passed as scalars");
  KernelParam d = param("d");
  d.defaultValue = Argument::integer(1);
  EXPECT_EQ(errorOf(manifestOf({d, param("e")})),
            "kernel 'add': parameter 'e' has no default but follows parameter "
            "'d', which has one");
  KernelParam dt = param("d");
  dt.defaultValue = Argument::tensor(0, DType::FP32);
  EXPECT_EQ(errorOf(manifestOf({dt})),
            "kernel 'add': the default of parameter 'd' must be an int, a "
            "float, a bool or None, got a tensor of fp32");
  KernelParam dd = param("d");
  dd.isConstexpr = true;
  dd.defaultValue = Argument::dtypeValue(DType::FP16);
  EXPECT_EQ(errorOf(manifestOf({dd})),
            "kernel 'add': the default of parameter 'd' must be an int, a "
            "float, a bool or None, got a dtype (fp16)");
  KernelParam dn = param("n", ParamType::scalar(DType::I32));
  dn.defaultValue = Argument::none();
  EXPECT_EQ(errorOf(manifestOf({dn})),
            "kernel 'add': the default of parameter 'n': expected an int "
            "(parameter type i32), got None");
  KernelParam dr = param("n", ParamType::scalar(DType::U8));
  dr.isConstexpr = true;
  dr.defaultValue = Argument::integer(256);
  EXPECT_EQ(errorOf(manifestOf({dr})),
            "kernel 'add': the default of parameter 'n': integer 256 does not "
            "fit parameter type u8");
}

TEST(Manifest, ReaderMessages) {
  const std::string valid = manifestToJson(
      manifestOf({param("x", ParamType::pointer(DType::FP32)), param("n")}));
  Edit edits[] = {
      {R"("version":1)", R"("version":0)",
       "kernel manifest: field 'version': unsupported format version 0 (this "
       "build reads 1)"},
      {R"("name":"add",)", R"()", "kernel manifest: missing member 'name'"},
      {R"("params":[)", R"("params":[1,)",
       "kernel manifest: field 'params[0]': expected an object, got a "
       "number"},
      {R"("type":"*fp32")", R"("type":"*fp33")",
       "kernel manifest: field 'params[0].type': unknown type '*fp33'"},
      {R"("type":"*fp32")", R"("type":null)",
       "kernel manifest: field 'params[0].type': expected a string, got "
       "null"},
      {R"("type":"*fp32","constexpr":false)", R"("type":"*fp32","constexpr":0)",
       "kernel manifest: field 'params[0].constexpr': expected a bool, got a "
       "number"},
      {R"(,"const":false})", R"(})",
       "kernel manifest: field 'params[0]': missing member 'const'"},
      {R"("const":false})", R"("const":false,"kjit.default":1})",
       "kernel manifest: field 'params[0]': unknown member "
       "\"kjit.default\""},
      {R"("const":false})", R"("const":false,"default":[]})",
       "kernel manifest: field 'params[0].default': expected null, a bool, a "
       "number, a dtype name or a float_bits object, got an array"},
      {R"("type":"*fp32","constexpr":false)",
       R"("type":"*fp32","constexpr":true)",
       "kernel 'add': parameter 'x' is a pointer and cannot be constexpr"},
  };
  for (const Edit &e : edits) {
    std::string json = valid;
    size_t at = json.find(e.from);
    ASSERT_NE(at, std::string::npos) << e.from;
    json.replace(at, std::strlen(e.from), e.to);
    absl::StatusOr<KernelManifest> m = manifestFromJson(json);
    ASSERT_FALSE(m.ok()) << json;
    EXPECT_EQ(std::string(m.status().message()), e.message) << json;
  }
  absl::StatusOr<KernelManifest> m = manifestFromJson("{\"version\":1");
  EXPECT_EQ(m.status().message(),
            "kernel manifest: JSON error at offset 12: unexpected end of "
            "input, expected ',' or '}' in an object");
}

TEST(Manifest, GarbledInput) {
  garble(
      manifestToJson(richManifest()),
      [](std::string_view t) { return manifestFromJson(t); },
      [](const KernelManifest &m) { return manifestToJson(m); }, "");
}

} // namespace
