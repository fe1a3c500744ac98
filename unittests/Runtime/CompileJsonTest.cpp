//===- CompileJsonTest.cpp - the compile_json schema, pinned --------------===//
//
// Plugins parse compile_json; its shape is an interface. These tests pin the
// exact document for a launch's record and for the hook passes' IR-only
// description, and check that the document parses with the record inside.
//
//===----------------------------------------------------------------------===//

#include "kjit/Model/CompileJson.h"
#include "kjit/Model/Binder.h"
#include "kjit/Model/Json.h"

#include <gtest/gtest.h>

using namespace kjit::rt;

namespace {

SpecializationRecord launchRecord() {
  KernelManifest m;
  m.name = "add";
  KernelParam x;
  x.name = "x";
  x.type = ParamType::pointer(DType::FP32);
  KernelParam n;
  n.name = "n";
  n.type = ParamType::scalar(DType::I32);
  KernelParam block;
  block.name = "BLOCK";
  block.type = ParamType::any();
  block.isConstexpr = true;
  m.params = {x, n, block};
  absl::StatusOr<BindPlan> plan = BindPlan::create(m);
  EXPECT_TRUE(plan.ok()) << plan.status();
  Binding binding = plan->makeBinding();
  Argument args[] = {Argument::tensor(0x1000, DType::FP32),
                     Argument::integer(7), Argument::integer(256)};
  EXPECT_TRUE(plan->bind(args, {}, binding).ok());
  return plan->makeRecord(binding);
}

TEST(CompileJson, LaunchDocumentIsPinned) {
  SpecializationRecord record = launchRecord();
  CompileDescription d;
  d.kernel = "add";
  d.key = "k123";
  d.target = "host";
  d.device = 1;
  d.isWarmup = true;
  d.record = &record;
  EXPECT_EQ(compileJson(d),
            "{\"schema\":\"kjit.compile/1\",\"kernel\":\"add\",\"key\":"
            "\"k123\",\"target\":\"host\",\"device\":1,\"warmup\":true,"
            "\"signature\":{\"x\":\"*fp32\",\"n\":\"i32\"},\"record\":" +
                toJson(record) + "}");
}

TEST(CompileJson, IrOnlyDocumentIsPinned) {
  CompileDescription d;
  d.kernel = "add";
  d.key = "deps";
  d.target = "host";
  d.signature = {{"x", "*kfp32"}, {"n", "i32"}};
  EXPECT_EQ(compileJson(d),
            "{\"schema\":\"kjit.compile/1\",\"kernel\":\"add\",\"key\":"
            "\"deps\",\"target\":\"host\",\"device\":0,\"warmup\":false,"
            "\"signature\":{\"x\":\"*kfp32\",\"n\":\"i32\"},\"record\":null}");
}

TEST(CompileJson, DocumentParsesWithTheRecordInside) {
  SpecializationRecord record = launchRecord();
  CompileDescription d;
  d.kernel = "add";
  d.record = &record;
  absl::StatusOr<JsonValue> parsed = parseJson(compileJson(d));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const JsonValue *inner = parsed->find("record");
  ASSERT_NE(inner, nullptr);
  EXPECT_TRUE(inner->isObject());
  ASSERT_NE(inner->find("name"), nullptr);
  EXPECT_EQ(inner->find("name")->text(), "add");
  ASSERT_NE(parsed->find("schema"), nullptr);
  EXPECT_EQ(parsed->find("schema")->text(), "kjit.compile/1");
}

} // namespace
