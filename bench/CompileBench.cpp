//===- CompileBench.cpp - the compiler service's compile, timed -----------===//
//
// kjit-bench-compile: what a cache miss costs before the backend's
// finalize, kernel by kernel, in one process, as the runtime calls it: the
// compiler library opened with dlopen, each module analysed once, then
// CompilerService::compile for each (kernel, specialization record) in
// turn, round after round. The first round's first compile pays the
// process's one-time set-up (LLVM's targets, the first context); every
// later one is a "later kernel" (docs/CudaBackend.md, "A later kernel's
// compile and finalize"). Also checks that every compile of a job gives
// the same artifact bytes as its first, and writes the first artifacts to
// DIR/<job number>.<format> with --artifacts-out (to compare them with a
// fresh process's, `kjit-opt --kjit-cuda-pipeline='... artifact=FILE'`).
//
//   kjit-bench-compile [--compiler LIB] [--target cuda] [--arch sm_90]
//       [--ptx 80] [--libdevice PATH] [--rounds N] [--artifacts-out DIR]
//       KERNEL.mlir=RECORD.json...
//
// Records come from `kjit-run ... --warmup --record-out R.json` (on the
// host backend: a record does not depend on the target).
//
//===----------------------------------------------------------------------===//

#include "kjit/Runtime/CompilerService.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using namespace kjit::rt;

namespace {

std::string readFile(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    std::fprintf(stderr, "kjit-bench-compile: cannot read %s\n", path.c_str());
    std::exit(2);
  }
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

double nowMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string message(const absl::Status &status) {
  return std::string(status.message());
}

struct Job {
  std::string name;
  ModuleAnalysis analysis;
  SpecializationRecord record;
  std::vector<double> ms;
  std::string firstArtifact;
  int differing = 0;
};

} // namespace

int main(int argc, char **argv) {
  std::string compilerPath = KJIT_COMPILER_LIBRARY, target = "cuda",
              arch = "sm_90", ptx = "80", libdevice, artifactsOut;
  int rounds = 10;
  std::vector<std::pair<std::string, std::string>> inputs;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *flag) -> const char * {
      size_t n = std::strlen(flag);
      if (arg.compare(0, n, flag) == 0 && arg.size() > n && arg[n] == '=')
        return argv[i] + n + 1;
      return nullptr;
    };
    if (const char *v = value("--compiler"))
      compilerPath = v;
    else if (const char *v = value("--target"))
      target = v;
    else if (const char *v = value("--arch"))
      arch = v;
    else if (const char *v = value("--ptx"))
      ptx = v;
    else if (const char *v = value("--libdevice"))
      libdevice = v;
    else if (const char *v = value("--rounds"))
      rounds = std::max(1, std::atoi(v));
    else if (const char *v = value("--artifacts-out"))
      artifactsOut = v;
    else if (size_t eq = arg.find('=');
             arg[0] != '-' && eq != std::string::npos)
      inputs.emplace_back(arg.substr(0, eq), arg.substr(eq + 1));
    else {
      std::fprintf(
          stderr,
          "usage: %s [--compiler=LIB] [--target=cuda|host] [--arch=ARCH] "
          "[--ptx=NN] [--libdevice=PATH] [--rounds=N] [--artifacts-out=DIR] "
          "KERNEL.mlir=RECORD.json...\n",
          argv[0]);
      return 2;
    }
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "kjit-bench-compile: no KERNEL.mlir=RECORD.json\n");
    return 2;
  }

  void *library = dlopen(compilerPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    std::fprintf(stderr, "kjit-bench-compile: %s\n", dlerror());
    return 1;
  }
  auto create = reinterpret_cast<kjit_compiler_create_service_fn>(
      dlsym(library, kCompilerServiceEntry));
  const char *error = nullptr;
  std::unique_ptr<CompilerService> service(
      create ? create(kCompilerServiceVersion, &error) : nullptr);
  if (!service) {
    std::fprintf(stderr, "kjit-bench-compile: %s\n",
                 error ? error : "no compiler service entry");
    return 1;
  }

  std::vector<std::pair<std::string, std::string>> options;
  if (target == "cuda") {
    options.emplace_back("ptx", ptx);
    if (!libdevice.empty())
      options.emplace_back("libdevice", libdevice);
  }
  std::vector<std::string> formats = {target == "cuda" ? "ptx" : "object"};
  for (const TargetDescription &t : service->targets())
    if (t.name == target)
      formats = {t.artifactFormat};

  std::vector<Job> jobs;
  for (const auto &[mlir, recordPath] : inputs) {
    Job job;
    job.name = mlir.substr(mlir.rfind('/') + 1) + "=" +
               recordPath.substr(recordPath.rfind('/') + 1);
    absl::StatusOr<ModuleAnalysis> analysis =
        service->analyze(readFile(mlir), mlir);
    if (!analysis.ok()) {
      std::fprintf(stderr, "kjit-bench-compile: %s\n",
                   message(analysis.status()).c_str());
      return 1;
    }
    absl::StatusOr<SpecializationRecord> record =
        specializationFromJson(readFile(recordPath));
    if (!record.ok()) {
      std::fprintf(stderr, "kjit-bench-compile: %s: %s\n", recordPath.c_str(),
                   message(record.status()).c_str());
      return 1;
    }
    job.analysis = std::move(*analysis);
    job.record = std::move(*record);
    jobs.push_back(std::move(job));
  }

  for (int round = 0; round < rounds; ++round)
    for (Job &job : jobs) {
      CompileRequest request;
      request.bytecode = job.analysis.bytecode;
      request.sourceName = job.name;
      request.record = &job.record;
      request.target = target;
      request.acceptedFormats = formats;
      request.arch = arch;
      request.backendOptions = options;
      double start = nowMs();
      absl::StatusOr<CompiledArtifact> artifact = service->compile(request);
      double ms = nowMs() - start;
      if (!artifact.ok()) {
        std::fprintf(stderr, "kjit-bench-compile: %s: %s\n", job.name.c_str(),
                     message(artifact.status()).c_str());
        return 1;
      }
      job.ms.push_back(ms);
      if (round == 0)
        job.firstArtifact = std::move(artifact->bytes);
      else if (artifact->bytes != job.firstArtifact)
        ++job.differing;
    }

  int differing = 0;
  std::printf("%-36s %9s %9s %9s %s\n", "kernel=record", "first ms",
              "median ms", "min ms", "(later compiles)");
  for (size_t j = 0; j < jobs.size(); ++j) {
    Job &job = jobs[j];
    // The process's very first compile is not a later kernel's.
    std::vector<double> later(job.ms.begin() + (j == 0 ? 1 : 0), job.ms.end());
    std::sort(later.begin(), later.end());
    double median = later.empty() ? 0 : later[later.size() / 2];
    double min = later.empty() ? 0 : later.front();
    std::printf("%-36s %9.2f %9.2f %9.2f (n=%zu)\n", job.name.c_str(),
                job.ms.front(), median, min, later.size());
    differing += job.differing;
    if (!artifactsOut.empty()) {
      std::string path =
          artifactsOut + "/" + std::to_string(j) + "." + formats.front();
      std::ofstream out(path, std::ios::binary);
      out << job.firstArtifact;
      if (!out.flush()) {
        std::fprintf(stderr, "kjit-bench-compile: cannot write %s\n",
                     path.c_str());
        return 1;
      }
    }
  }
  std::printf("artifacts that differ from their job's first: %d\n", differing);
  return differing ? 1 : 0;
}
