//===- WarmStart.cpp - one process that launches the vector add -----------===//
//
//   kjit-bench-warm-start FILE [TARGET]
//
// Creates a runtime from the environment (KJIT_CACHE_DIR) for TARGET
// (default: the build's), loads FILE (examples/vector_add.mlir), launches
// @add once on 4096 elements (BLOCK 1024), then a second specialization
// (BLOCK 512), checks both results, and prints:
//   first_launch_done_ns  CLOCK_MONOTONIC when the first launch finished;
//                         bench/disk-cache/warm-start.py subtracts its own
//                         clock at the spawn: process start to the first
//                         launch finished, which no process can time itself
//   fingerprint_ns        the backend's fingerprint, computed once per
//                         process before the clock of first_kernel_ns
//   first_kernel_ns       Module::load plus the first launch, with the
//                         backend (a CUDA context) already made: "the first
//                         kernel of a process found on disk"
//   later_kernel_ns       the second specialization's first launch: "each
//                         later kernel found on disk"
//   source, later_source  compiled, disk or memory
//   compiler              loaded or not-loaded
//
//===----------------------------------------------------------------------===//

#include "kjit/Runtime/Runtime.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

using namespace kjit::rt;

namespace {

int fail(const absl::Status &status) {
  std::fprintf(stderr, "kjit-bench-warm-start: %s\n",
               std::string(status.message()).c_str());
  return 1;
}

const char *source(const LaunchResult &result) {
  return result.compiled ? "compiled" : result.diskHit ? "disk" : "memory";
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: kjit-bench-warm-start FILE [TARGET]\n");
    return 2;
  }
  RuntimeOptions options;
  if (argc == 3)
    options.target = argv[2];
  auto runtime = Runtime::create(options);
  if (!runtime.ok())
    return fail(runtime.status());
  // The backend first (a CUDA context), as a process that already launched
  // other work has it.
  auto backend = (*runtime)->backend();
  if (!backend.ok())
    return fail(backend.status());
  // The backend's fingerprint, once per process (the cuda backend hashes its
  // libdevice): timed apart, as part of the backend's start.
  auto fingerprintStart = std::chrono::steady_clock::now();
  if (auto fingerprint = (*runtime)->fingerprint(**backend, 0);
      !fingerprint.ok())
    return fail(fingerprint.status());
  auto fingerprintTime = std::chrono::steady_clock::now() - fingerprintStart;

  const int n = 4096;
  std::vector<float> x(n), y(n), out(n);
  for (int i = 0; i < n; ++i) {
    x[i] = float(i);
    y[i] = 0.5f;
  }
  const kjit::plugin::BackendRef &ref = (*backend)->ref;
  const bool device = ref.hasDeviceMemory();
  uint64_t addresses[3] = {reinterpret_cast<uintptr_t>(x.data()),
                           reinterpret_cast<uintptr_t>(y.data()),
                           reinterpret_cast<uintptr_t>(out.data())};
  if (device) {
    for (uint64_t &address : addresses) {
      auto allocated = ref.allocate(0, n * sizeof(float));
      if (!allocated.ok())
        return fail(allocated.status());
      address = *allocated;
    }
    for (int i = 0; i < 2; ++i)
      if (absl::Status copied = ref.copyToDevice(
              0, addresses[i], i == 0 ? x.data() : y.data(), n * sizeof(float));
          !copied.ok())
        return fail(copied);
  }
  Argument args[] = {Argument::tensor(addresses[0], DType::FP32, true),
                     Argument::tensor(addresses[1], DType::FP32, true),
                     Argument::tensor(addresses[2], DType::FP32),
                     Argument::integer(n)};
  auto check = [&]() -> absl::Status {
    if (device)
      if (absl::Status back =
              ref.copyToHost(0, out.data(), addresses[2], n * sizeof(float));
          !back.ok())
        return back;
    for (int i = 0; i < n; ++i)
      if (out[i] != x[i] + y[i])
        return absl::InternalError("wrong result at " + std::to_string(i));
    return absl::OkStatus();
  };

  auto start = std::chrono::steady_clock::now();
  auto module = Module::load(**runtime, argv[1]);
  if (!module.ok())
    return fail(module.status());
  auto kernel = (*module)->kernel("add");
  if (!kernel.ok())
    return fail(kernel.status());
  LaunchConfig config;
  config.grid = {n / 1024, 1, 1};
  auto first = (*kernel)->launch(config, args);
  if (first.ok() && device)
    if (absl::Status synced = ref.synchronize(0, 0); !synced.ok())
      return fail(synced);
  struct timespec done;
  clock_gettime(CLOCK_MONOTONIC, &done);
  auto firstDone = std::chrono::steady_clock::now();
  if (!first.ok())
    return fail(first.status());
  if (absl::Status ok = check(); !ok.ok())
    return fail(ok);

  // A later kernel: another specialization (BLOCK 512), its own entry.
  KeywordArgument block[] = {{"BLOCK", Argument::integer(512)}};
  config.grid = {n / 512, 1, 1};
  auto laterStart = std::chrono::steady_clock::now();
  auto later = (*kernel)->launch(config, args, block);
  if (later.ok() && device)
    if (absl::Status synced = ref.synchronize(0, 0); !synced.ok())
      return fail(synced);
  auto laterDone = std::chrono::steady_clock::now();
  if (!later.ok())
    return fail(later.status());
  if (absl::Status ok = check(); !ok.ok())
    return fail(ok);
  if (device)
    for (uint64_t address : addresses)
      (void)ref.deallocate(0, address);

  auto ns = [](auto duration) {
    return (long long)std::chrono::duration_cast<std::chrono::nanoseconds>(
               duration)
        .count();
  };
  std::printf("first_launch_done_ns %lld\nfingerprint_ns %lld\n"
              "first_kernel_ns %lld\nlater_kernel_ns %lld\nsource %s\n"
              "later_source %s\ncompiler %s\n",
              (long long)done.tv_sec * 1000000000 + done.tv_nsec,
              ns(fingerprintTime), ns(firstDone - start),
              ns(laterDone - laterStart), source(*first), source(*later),
              (*runtime)->compilerLoaded() ? "loaded" : "not-loaded");
  return 0;
}
