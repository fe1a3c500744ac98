//===- DispatchBench.cpp - the cost of a launch on a cache hit ------------===//
//
// Kernel::launch on a cache hit with a backend whose launch does nothing
// (bench/NullBackend.c, registered as "host" before the runtime looks for
// one): binding, key, cache lookup, globals check, hook checks and the ABI
// call, for kernels of 1 and 8 arguments, on one and two threads, and
// after other memory has disturbed the caches. The counter
// `allocs_per_launch` counts operator new calls (it must be 0).
//
//===----------------------------------------------------------------------===//

#include "AllocCounter.h"

#include "kjit/Plugin/PluginHost.h"
#include "kjit/Runtime/Runtime.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace kjit::rt;

namespace {

constexpr const char *kKernels = R"mlir(
kjit.kernel @one(%x: !kjit.ptr<f32>) {
  kjit.return
}
kjit.kernel @eight(%a: !kjit.ptr<f32>, %b: !kjit.ptr<f32>, %c: !kjit.ptr<f32>,
                   %d: !kjit.ptr<f32>, %n: i32, %m: i32, %s: f32, %k: i64) {
  kjit.return
}
)mlir";

Module &module() {
  static std::shared_ptr<Module> instance = [] {
    // KJIT_BENCH_NULL_BACKEND: the plugin's path in a copy of the build
    // (the device bundle's lib/), where the build path does not exist.
    const char *path = std::getenv("KJIT_BENCH_NULL_BACKEND");
    if (!path || !*path)
      path = KJIT_NULL_BACKEND;
    if (!Runtime::global().plugins().loadPlugin(path).ok())
      std::abort();
    auto loaded = Module::fromText(kKernels, "dispatch.mlir");
    if (!loaded.ok()) {
      std::fprintf(stderr, "%s\n",
                   std::string(loaded.status().message()).c_str());
      std::abort();
    }
    return *loaded;
  }();
  return *instance;
}

alignas(64) float buffer[64];

/// Reads `bytes` of a 4 MiB buffer, one load per cache line: what a real
/// launch loop's driver call does to the caches between two launches,
/// roughly (the GPU's cuLaunchKernel is not available here).
void disturbCaches(size_t bytes) {
  static std::vector<char> other(4 << 20, 1);
  static size_t offset = 0;
  char sum = 0;
  for (size_t i = 0; i < bytes; i += 64)
    sum += other[(offset + i) % other.size()];
  offset = (offset + bytes) % other.size();
  benchmark::DoNotOptimize(sum);
}

void dispatch(benchmark::State &state, const char *name,
              std::vector<Argument> args,
              std::vector<KeywordArgument> keywords = {},
              size_t disturbBytes = 0) {
  Kernel *kernel = *module().kernel(name);
  LaunchConfig config;
  config.grid = {128, 1, 1};
  // Compile (or find) the entry outside the timed loop.
  if (auto first = kernel->launch(config, args, keywords); !first.ok()) {
    std::fprintf(stderr, "launch of '%s': %s\n", name,
                 std::string(first.status().message()).c_str());
    state.SkipWithError("launch failed");
    return;
  }
  long before = kjit::rt::testing::allocationCount.load();
  for (auto _ : state) {
    if (disturbBytes)
      disturbCaches(disturbBytes);
    auto result = kernel->launch(config, args, keywords);
    benchmark::DoNotOptimize(result);
  }
  long allocations = kjit::rt::testing::allocationCount.load() - before;
  state.counters["allocs_per_launch"] =
      double(allocations) / double(state.iterations());
}

void oneArgument(benchmark::State &state) {
  dispatch(state, "one", {Argument::tensor(uintptr_t(buffer), DType::FP32)});
}

/// The eight arguments of kernel `eight`: four pointers, two i32, an f32
/// and an i64.
std::vector<Argument> eightValues() {
  Argument p = Argument::tensor(uintptr_t(buffer), DType::FP32);
  return {p,
          p,
          p,
          p,
          Argument::integer(4096),
          Argument::integer(17),
          Argument::fp(0.5),
          Argument::integer(1)};
}

void eightArguments(benchmark::State &state) {
  dispatch(state, "eight", eightValues());
}

// As kjit-gpu-dispatch launches (bench/gpu): num_warps as a keyword.
void eightArgumentsNumWarps(benchmark::State &state) {
  dispatch(state, "eight", eightValues(),
           {{"num_warps", Argument::integer(1)}});
}

// The same after reading range(0) KiB of other memory: in a launch loop on
// a GPU the driver's own work pushes the runtime's data out of the caches
// between two launches. Subtract disturbOnly at the same size for the
// launch's cost with caches so disturbed.
void eightArgumentsNumWarpsDisturbed(benchmark::State &state) {
  dispatch(state, "eight", eightValues(), {{"num_warps", Argument::integer(1)}},
           size_t(state.range(0)) << 10);
}

void disturbOnly(benchmark::State &state) {
  for (auto _ : state)
    disturbCaches(size_t(state.range(0)) << 10);
}

} // namespace

BENCHMARK(oneArgument)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(eightArguments)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(eightArgumentsNumWarps)->UseRealTime();
BENCHMARK(eightArgumentsNumWarpsDisturbed)->Arg(64)->Arg(1024)->UseRealTime();
BENCHMARK(disturbOnly)->Arg(64)->Arg(1024)->UseRealTime();

BENCHMARK_MAIN();
