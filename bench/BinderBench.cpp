//===- BinderBench.cpp - binding + key on the cache-hit path --------------===//
//
// Times what a launch that hits the cache pays before the driver call:
// binding the arguments, computing the spec keys and the key hash, and one
// cache lookup, for kernels of 1, 8 and 32 parameters. The target is 50 ns
// for 8 parameters (a 60-line prototype of binding, spec keys, hash and
// lookup took about 19 ns here; docs/Specialization.md has the figures of
// this benchmark). Each benchmark also reports
// `allocs_per_iter`, counted by replacing the global operator new in this
// binary (unittests/Runtime/AllocCounter.h); it must be 0.
//
// Run: build-dir/bin/kjit-bench-binder --benchmark_repetitions=5
//        --benchmark_report_aggregates_only=true
//
//===----------------------------------------------------------------------===//

#include "AllocCounter.h"
#include "BinderKernels.h"

#include "kjit/Model/Binder.h"

#include "absl/container/flat_hash_map.h"

#include <benchmark/benchmark.h>

#include <cstdlib>

using namespace kjit::rt;

namespace {

using Cache = absl::flat_hash_map<SpecializationKey, int, KeyHash, KeyEq>;

struct Fixture {
  explicit Fixture(int params)
      : kernel(kjit::rt::testing::makeBenchKernel(params)),
        plan(*BindPlan::create(kernel.manifest)), binding(plan.makeBinding()) {
    if (!plan.bind(kernel.args, binding).ok())
      std::abort();
    cache.emplace(SpecializationKey(binding.key()), 1);
  }

  kjit::rt::testing::BenchKernel kernel;
  BindPlan plan;
  Binding binding;
  Cache cache;
};

void reportAllocations(benchmark::State &state, long before) {
  long allocations = kjit::rt::testing::allocationCount.load() - before;
  state.counters["allocs_per_iter"] = benchmark::Counter(
      static_cast<double>(allocations), benchmark::Counter::kAvgIterations);
}

/// Positional arguments: bind + spec keys + hash (the key words are the
/// equality data), no lookup.
void BM_BindAndKey(benchmark::State &state) {
  Fixture f(static_cast<int>(state.range(0)));
  long before = kjit::rt::testing::allocationCount.load();
  for (auto _ : state) {
    absl::Status s = f.plan.bind(f.kernel.args, f.binding);
    benchmark::DoNotOptimize(s);
    benchmark::DoNotOptimize(f.binding.key().hash);
  }
  reportAllocations(state, before);
}
BENCHMARK(BM_BindAndKey)->Arg(1)->Arg(8)->Arg(32);

/// The same plus the lookup that finds the cached entry.
void BM_BindKeyAndLookup(benchmark::State &state) {
  Fixture f(static_cast<int>(state.range(0)));
  long before = kjit::rt::testing::allocationCount.load();
  for (auto _ : state) {
    absl::Status s = f.plan.bind(f.kernel.args, f.binding);
    auto it = f.cache.find(f.binding.key());
    benchmark::DoNotOptimize(s);
    benchmark::DoNotOptimize(it);
  }
  reportAllocations(state, before);
}
BENCHMARK(BM_BindKeyAndLookup)->Arg(1)->Arg(8)->Arg(32);

/// 8 parameters, three by keyword, plus two launch options.
void BM_BindWithKeywords(benchmark::State &state) {
  Fixture f(8);
  std::vector<Argument> positional(f.kernel.args.begin(),
                                   f.kernel.args.begin() + 5);
  std::vector<KeywordArgument> keywords = {
      {"p5", f.kernel.args[5]},
      {"p6", f.kernel.args[6]},
      {"p7", f.kernel.args[7]},
      {"num_warps", Argument::integer(8)},
      {"num_stages", Argument::integer(2)}};
  long before = kjit::rt::testing::allocationCount.load();
  for (auto _ : state) {
    absl::Status s = f.plan.bind(positional, keywords, f.binding);
    benchmark::DoNotOptimize(s);
    benchmark::DoNotOptimize(f.binding.key().hash);
  }
  reportAllocations(state, before);
}
BENCHMARK(BM_BindWithKeywords);

} // namespace

BENCHMARK_MAIN();
