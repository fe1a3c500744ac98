//===- TestCompiler.cpp - a compiler library without LLVM, for TSan -------===//
//
// libkjit-test-compiler.so exports the compiler service's factory
// (kjit_compiler_create_service) and compiles nothing: its analysis is
// canned, and a compile works a while on the record's key and returns bytes
// that name the kernel and its constexpr C ("count C=3 ..."), which the
// test clock backend (test/Plugins/Inputs/TestClockBackend.c) turns into a
// scripted device time. It links no LLVM, so the ThreadSanitizer tree can
// run the autotuner's parallel compiles through it (docs/Autotuning.md,
// "Compiling configurations in parallel").
//
//===----------------------------------------------------------------------===//

#include "kjit/Model/Specialization.h"
#include "kjit/Runtime/CompilerService.h"

#include <cstdint>
#include <string>

namespace {

using namespace kjit::rt;

/// `@name(%o: !kjit.ptr<i32>, %n: i32, %C: i32 {kjit.constexpr})`.
KernelAnalysis kernelNamed(const std::string &name) {
  KernelAnalysis kernel;
  kernel.manifest.name = name;
  KernelParam out;
  out.name = "o";
  out.type = ParamType::pointer(DType::I32);
  KernelParam n;
  n.name = "n";
  n.type = ParamType::scalar(DType::I32);
  KernelParam c;
  c.name = "C";
  c.type = ParamType::scalar(DType::I32);
  c.isConstexpr = true;
  kernel.manifest.params = {out, n, c};
  kernel.dependencyKey = "test-compiler:" + name;
  kernel.sourceDigests = {{name, "test-compiler:" + name}};
  return kernel;
}

class TestService final : public CompilerService {
public:
  absl::StatusOr<ModuleAnalysis> analyze(std::string_view text,
                                         std::string_view) override {
    ModuleAnalysis analysis;
    analysis.kernels = {kernelNamed("count"), kernelNamed("scale")};
    analysis.bytecode = std::string(text);
    return analysis;
  }

  absl::StatusOr<CompiledArtifact>
  compile(const CompileRequest &request) override {
    if (!request.record)
      return absl::InternalError("a compile request without a record");
    const SpecializationRecord &record = *request.record;
    // Work a while, so that compiles on several threads overlap.
    uint64_t hash = 14695981039346656037ull;
    for (int round = 0; round < 2000; ++round)
      for (char c : record.key)
        hash = (hash ^ uint8_t(c)) * 1099511628211ull;
    int64_t c = 0;
    for (const auto &[name, value] : record.constants())
      if (name == "C")
        c = int64_t(value.asInt());
    CompiledArtifact artifact;
    artifact.format = "test-clock";
    artifact.bytes = record.name + " C=" + std::to_string(c) + " " +
                     std::to_string(hash) + " " + record.key;
    artifact.metadataJson = R"({"target":"test-clock"})";
    return artifact;
  }

  std::vector<TargetDescription> targets() const override {
    return {{"test-clock", "test-clock"}};
  }

  absl::Status extend(const CompilerExtensions &) override {
    return absl::OkStatus();
  }
};

} // namespace

extern "C" __attribute__((visibility("default"))) kjit::rt::CompilerService *
kjit_compiler_create_service(uint32_t version, const char **error) {
  if (version != kjit::rt::kCompilerServiceVersion) {
    *error = "the runtime and the test compiler library are of different "
             "kjit builds";
    return nullptr;
  }
  return new TestService();
}
