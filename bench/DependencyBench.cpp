//===- DependencyBench.cpp - dependency analysis on generated modules -----===//
//
// Analysis time for modules of 100, 1,000 and 10,000 device functions under
// one kernel, in two shapes:
//   chain: f_i calls f_{i-1}                  (deep: a 10,000-long call chain)
//   dag:   f_i calls f_{i-1} and f_{i/2}      (shared callees, many paths)
// and three states:
//   cold:      a new analysis hashes every function
//   persisted: a new analysis over IR that carries records from an earlier
//              run (what a second kjit-opt run sees): hashes every function,
//              reuses the records
//   memoized:  the same analysis asked again: lookups only
// The counter `s_per_function` (seconds per function, SI-prefixed: 1.2u =
// 1.2 us) shows whether growth is linear.
//
//===----------------------------------------------------------------------===//

#include "kjit/Analysis/Dependencies.h"
#include "kjit/Compiler/Registration.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <benchmark/benchmark.h>

#include <memory>
#include <string>

namespace {

enum Shape { Chain = 0, Dag = 1 };
enum State { Cold = 0, Persisted = 1, Memoized = 2 };

std::string generateModule(int numFunctions, Shape shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "kjit.global @G : i32 = 7\n";
  os << "kjit.func @f0(%x: i32) -> i32 {\n"
        "  %g = kjit.get_global @G : i32\n"
        "  %r = arith.addi %x, %g : i32\n"
        "  kjit.return %r : i32\n}\n";
  for (int i = 1; i < numFunctions; ++i) {
    os << "kjit.func @f" << i << "(%x: i32) -> i32 {\n";
    os << "  %c = arith.constant " << i << " : i32\n";
    os << "  %y = arith.muli %x, %c : i32\n";
    os << "  %a = kjit.call @f" << i - 1 << "(%y) : (i32) -> i32\n";
    if (shape == Dag)
      os << "  %b = kjit.call @f" << i / 2 << "(%a) : (i32) -> i32\n"
         << "  kjit.return %b : i32\n}\n";
    else
      os << "  kjit.return %a : i32\n}\n";
  }
  os << "kjit.kernel @k(%x: i32) {\n  %r = kjit.call @f" << numFunctions - 1
     << "(%x) : (i32) -> i32\n  kjit.return\n}\n";
  return text;
}

void analyse(benchmark::State &state) {
  int numFunctions = state.range(0);
  auto shape = static_cast<Shape>(state.range(1));
  auto mode = static_cast<State>(state.range(2));

  mlir::DialectRegistry registry;
  kjit::registerKjitDialects(registry);
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(
      generateModule(numFunctions, shape), mlir::ParserConfig(&context));
  if (!module) {
    state.SkipWithError("cannot parse the generated module");
    return;
  }
  if (mode == Persisted) {
    kjit::DependencyAnalysis first(module.get());
    auto records = first.getAllRecords();
    if (failed(records)) {
      state.SkipWithError("analysis failed");
      return;
    }
    for (auto [fn, record] : *records)
      kjit::DependencyAnalysis::persist(fn, *record);
  }
  auto warm = std::make_unique<kjit::DependencyAnalysis>(module.get());
  if (mode == Memoized && failed(warm->getAllRecords())) {
    state.SkipWithError("analysis failed");
    return;
  }

  for (auto _ : state) {
    if (mode == Memoized) {
      benchmark::DoNotOptimize(warm->getAllRecords());
      continue;
    }
    kjit::DependencyAnalysis analysis(module.get());
    auto records = analysis.getAllRecords();
    if (failed(records)) {
      state.SkipWithError("analysis failed");
      return;
    }
    benchmark::DoNotOptimize(records);
  }
  state.counters["s_per_function"] = benchmark::Counter(
      static_cast<double>(numFunctions + 1) * state.iterations(),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void shapes(benchmark::internal::Benchmark *b) {
  b->ArgNames({"functions", "dag", "state"});
  for (int state : {Cold, Persisted, Memoized})
    for (int shape : {Chain, Dag})
      for (int n : {100, 1000, 10000})
        b->Args({n, shape, state});
}

} // namespace

BENCHMARK(analyse)->Apply(shapes)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
