//===- TargetTest.cpp - the target registry ------------------------------===//
//
// The built-in host target, registering another target, and the compile
// entry point's answer to a target nobody registered.
//
//===----------------------------------------------------------------------===//

#include "kjit/Compiler/CompilerAPI.h"
#include "kjit/Compiler/Target.h"

#include "mlir/IR/BuiltinOps.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace {

/// A target that lowers nothing; only its name matters here.
class FakeTarget final : public kjit::Target {
public:
  explicit FakeTarget(std::string name) : name_(std::move(name)) {}
  llvm::StringRef name() const override { return name_; }
  llvm::StringRef artifactFormat() const override { return "fake"; }
  void buildPipeline(mlir::OpPassManager &,
                     const kjit::TargetOptions &) const override {}
  llvm::Expected<kjit::TargetArtifact>
  emitArtifact(mlir::ModuleOp, const kjit::TargetOptions &) const override {
    return llvm::createStringError("fake targets emit nothing");
  }

private:
  std::string name_;
};

TEST(TargetTest, HostIsBuiltIn) {
  const kjit::Target *host = kjit::lookupTarget("host");
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->name(), "host");
  EXPECT_EQ(host->artifactFormat(), "elf-shared-object");
  EXPECT_EQ(kjit::lookupTarget("cuda"), nullptr);
  std::vector<std::string> names = kjit::getRegisteredTargetNames();
  EXPECT_NE(std::find(names.begin(), names.end(), "host"), names.end());
}

TEST(TargetTest, RegisterOnceByName) {
  EXPECT_TRUE(kjit::registerTarget(std::make_unique<FakeTarget>("aaa-fake")));
  EXPECT_FALSE(kjit::registerTarget(std::make_unique<FakeTarget>("aaa-fake")));
  EXPECT_FALSE(kjit::registerTarget(std::make_unique<FakeTarget>("host")));
  const kjit::Target *fake = kjit::lookupTarget("aaa-fake");
  ASSERT_NE(fake, nullptr);
  EXPECT_EQ(fake->artifactFormat(), "fake");
  // Sorted, for error messages.
  std::vector<std::string> names = kjit::getRegisteredTargetNames();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(names.front(), "aaa-fake");
}

TEST(TargetTest, CompileNamesTheRegisteredTargets) {
  const kjit_compiler_api *api = kjit_compiler_get_api();
  kjit_compile_request request = {};
  const char ir[] = "";
  request.ir = ir;
  request.ir_size = 0;
  request.source_name = "empty.mlir";
  request.kernel = "k";
  request.record_json = "{}";
  request.globals_json = "";
  request.target = "tpu";
  char *artifact = nullptr, *metadata = nullptr, *error = nullptr;
  size_t size = 0;
  ASSERT_NE(api->compile(&request, &artifact, &size, &metadata, &error), 0);
  ASSERT_NE(error, nullptr);
  std::string message = error;
  api->release(error);
  EXPECT_NE(message.find("unknown target 'tpu' (registered: "),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("host"), std::string::npos) << message;
}

} // namespace
