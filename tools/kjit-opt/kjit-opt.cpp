//===- kjit-opt.cpp - the kjit optimizer driver ---------------------------===//
//
// mlir-opt for kernel IR: parses, verifies, runs pass pipelines and prints.
// Registers the kjit dialect, the upstream dialects kernel bodies use and the
// kjit passes; all of mlir-opt's flags work (--split-input-file,
// --verify-diagnostics, --mlir-print-ir-after-all, ...).
//
//===----------------------------------------------------------------------===//

#include "kjit/Compiler/Registration.h"
#include "kjit/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  kjit::registerKjitDialects(registry);
  kjit::registerKjitPasses();
  // The generic transforms (canonicalize, cse, inline, symbol-dce, ...) that
  // pipelines over kernel IR use.
  mlir::registerTransformsPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "kjit optimizer: parse, verify and transform kernel IR\n",
      registry));
}
