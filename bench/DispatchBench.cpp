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

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
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

/// The null backend's file: KJIT_BENCH_NULL_BACKEND names it in a copy of
/// the build (the device bundle's lib/), where the build path does not
/// exist.
const char *nullBackendPath() {
  const char *path = std::getenv("KJIT_BENCH_NULL_BACKEND");
  return path && *path ? path : KJIT_NULL_BACKEND;
}

/// The time stamps the null backend's last pollution took (it writes them
/// here: KJIT_BENCH_NULL_CYCLES_AT).
uint64_t polluteCycles = 0;

Module &module() {
  static std::shared_ptr<Module> instance = [] {
    const char *path = nullBackendPath();
    char at[32];
    std::snprintf(at, sizeof at, "%llx",
                  (unsigned long long)(uintptr_t)&polluteCycles);
    setenv("KJIT_BENCH_NULL_CYCLES_AT", at, 1);
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

uint64_t timeStamp() {
  uint32_t lo, hi;
  asm volatile("lfence\n\trdtsc" : "=a"(lo), "=d"(hi)::"memory");
  return (uint64_t(hi) << 32) | lo;
}

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

/// Launches `name` with `args` (or, with `others`, `args` and each of
/// `others` in turn: every launch's arguments then differ from the one
/// before).
void dispatch(benchmark::State &state, const char *name,
              std::vector<Argument> args,
              std::vector<KeywordArgument> keywords = {},
              size_t disturbBytes = 0,
              std::vector<std::vector<Argument>> others = {}) {
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
  // With KJIT_BENCH_NULL_POLLUTE=1 the backend's launch evicts the caches
  // and reports the time stamps it spent doing so: a launch's stamps less
  // those are the runtime's own path with cold caches (runtime_cycles, the
  // median over the iterations; interrupts make the mean useless).
  const char *pollute = std::getenv("KJIT_BENCH_NULL_POLLUTE");
  const bool timed = pollute && std::string_view(pollute) == "1";
  std::vector<uint64_t> cycles;
  if (timed) // reserved: the loop's allocations are counted
    cycles.reserve(size_t(state.max_iterations));
  uint64_t launches = 0;
  long before = kjit::rt::testing::allocationCount.load();
  for (auto _ : state) {
    if (disturbBytes)
      disturbCaches(disturbBytes);
    uint64_t start = timed ? timeStamp() : 0;
    const size_t set = others.empty() ? 0 : ++launches % (others.size() + 1);
    auto result =
        kernel->launch(config, set ? others[set - 1] : args, keywords);
    benchmark::DoNotOptimize(result);
    if (timed)
      cycles.push_back(timeStamp() - start - polluteCycles);
  }
  long allocations = kjit::rt::testing::allocationCount.load() - before;
  state.counters["allocs_per_launch"] =
      double(allocations) / double(state.iterations());
  if (!cycles.empty()) {
    std::nth_element(cycles.begin(), cycles.begin() + cycles.size() / 2,
                     cycles.end());
    state.counters["runtime_cycles"] = double(cycles[cycles.size() / 2]);
  }
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

// Three sets of eight arguments in turn (other addresses and scalars of
// the same specialization): the binder never finds its last inputs again,
// no launch is the thread's last one again, and every launch binds in
// full. (With two sets in turn every third launch would be made again:
// docs/Dispatch.md, "The last launch again".)
void eightArgumentsVarying(benchmark::State &state) {
  Argument q = Argument::tensor(uintptr_t(buffer) + 64, DType::FP32);
  Argument r = Argument::tensor(uintptr_t(buffer) + 128, DType::FP32);
  dispatch(state, "eight", eightValues(), {}, 0,
           {{q, q, q, q, Argument::integer(4112), Argument::integer(33),
             Argument::fp(0.25), Argument::integer(1)},
            {r, r, r, r, Argument::integer(4128), Argument::integer(49),
             Argument::fp(0.125), Argument::integer(1)}});
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
BENCHMARK(eightArgumentsVarying)->UseRealTime();
BENCHMARK(eightArgumentsNumWarps)->UseRealTime();
BENCHMARK(eightArgumentsNumWarpsDisturbed)->Arg(64)->Arg(1024)->UseRealTime();
BENCHMARK(disturbOnly)->Arg(64)->Arg(1024)->UseRealTime();

BENCHMARK_MAIN();
