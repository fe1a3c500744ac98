//===- TargetTest.cpp - the target registry ------------------------------===//
//
// The built-in host target, registering another target, and the compiler
// module's answers to a target nobody registered and to another build.
//
//===----------------------------------------------------------------------===//

#include "kjit/Compiler/Target.h"
#include "kjit/Runtime/CompilerService.h"

#include "mlir/IR/BuiltinOps.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <dlfcn.h>
#include <memory>
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

/// The factory of the compiler module the runtime opens.
kjit_compiler_create_service_fn factory() {
  void *handle = dlopen(KJIT_COMPILER_MODULE, RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return nullptr;
  return reinterpret_cast<kjit_compiler_create_service_fn>(
      dlsym(handle, kCompilerServiceEntry));
}

TEST(TargetTest, CompileNamesTheRegisteredTargets) {
  kjit_compiler_create_service_fn create = factory();
  ASSERT_NE(create, nullptr) << dlerror();
  const char *error = nullptr;
  std::unique_ptr<kjit::rt::CompilerService> service(
      create(kjit::rt::kCompilerServiceVersion, &error));
  ASSERT_NE(service, nullptr) << error;
  EXPECT_EQ(service->targets().front().name, "host");
  kjit::rt::SpecializationRecord record;
  record.name = "k";
  kjit::rt::CompileRequest request;
  request.record = &record;
  request.target = "tpu";
  absl::StatusOr<kjit::rt::CompiledArtifact> result = service->compile(request);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(result.status().message(),
            "unknown target 'tpu' (registered: host)");

  std::vector<std::string> formats = {"ptx"};
  request.target = "host";
  request.acceptedFormats = formats;
  result = service->compile(request);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(),
            "target 'host' produces 'elf-shared-object', which the backend "
            "does not accept (it accepts: ptx)");
}

TEST(TargetTest, TheModuleRefusesAnotherBuildsRuntime) {
  kjit_compiler_create_service_fn create = factory();
  ASSERT_NE(create, nullptr) << dlerror();
  const char *error = nullptr;
  EXPECT_EQ(create(kjit::rt::kCompilerServiceVersion + 1, &error), nullptr);
  ASSERT_NE(error, nullptr);
  EXPECT_STREQ(error, "the runtime and the compiler library are of different "
                      "kjit builds (compiler service versions differ)");
}

} // namespace
