//===- ParseBench.cpp - cost of reading kernel IR -------------------------===//
//
// Parses and verifies each example kernel from memory. This is the work the
// runtime's warm path avoids by caching kernel manifests
// (include/kjit/Model/KernelManifest.h), so its size is the budget that
// manifest caching saves per process.
//
//===----------------------------------------------------------------------===//

#include "kjit/Compiler/Registration.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"

#include <benchmark/benchmark.h>

#include <string>

namespace {

void parseAndVerify(benchmark::State &state, const char *example) {
  std::string path = std::string(KJIT_EXAMPLES_DIR) + "/" + example;
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    state.SkipWithError(("cannot read " + path).c_str());
    return;
  }
  mlir::DialectRegistry registry;
  kjit::registerKjitDialects(registry);
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  llvm::StringRef text = (*buffer)->getBuffer();
  for (auto _ : state) {
    auto module = mlir::parseSourceString<mlir::ModuleOp>(
        text, mlir::ParserConfig(&context));
    if (!module) {
      state.SkipWithError(("cannot parse " + path).c_str());
      return;
    }
    benchmark::DoNotOptimize(module.get());
  }
  state.SetBytesProcessed(state.iterations() * text.size());
}

void contextCreation(benchmark::State &state) {
  mlir::DialectRegistry registry;
  kjit::registerKjitDialects(registry);
  for (auto _ : state) {
    mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
    context.loadAllAvailableDialects();
    benchmark::DoNotOptimize(&context);
  }
}

} // namespace

BENCHMARK_CAPTURE(parseAndVerify, vector_add, "vector_add.mlir")
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(parseAndVerify, saxpy, "saxpy.mlir")
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(parseAndVerify, softmax, "softmax.mlir")
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(parseAndVerify, matmul, "matmul.mlir")
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(parseAndVerify, scaled_residual, "scaled_residual.mlir")
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(contextCreation)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
