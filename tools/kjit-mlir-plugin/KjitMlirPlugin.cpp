//===- KjitMlirPlugin.cpp - kjit passes and dialect for mlir-opt ----------===//
//
// Loads kjit into upstream mlir-opt:
//
//   mlir-opt --load-dialect-plugin=libKjitMlirPlugin.so
//            --load-pass-plugin=libKjitMlirPlugin.so
//            --pass-pipeline='builtin.module(kjit-find-dependencies)' k.mlir
//
// (one command line, shown on three).
//
// MLIR's plugin interface is C++ and toolchain-locked: the plugin links the
// same libMLIR.so as mlir-opt. It is not kjit's stable plugin ABI
// (include/kjit-c), which never carries MLIR objects.
//
//===----------------------------------------------------------------------===//

#include "HookPasses.h"
#include "kjit/Compiler/Pipeline.h"
#include "kjit/Conversion/Passes.h"
#include "kjit/Dialect/Kjit/IR/Kjit.h"
#include "kjit/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Compiler.h"

extern "C" LLVM_ATTRIBUTE_VISIBILITY_DEFAULT mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "kjit", LLVM_VERSION_STRING, []() {
            kjit::registerKjitPasses();
            kjit::registerKjitConversionPasses();
            kjit::registerKjitHookPasses();
            kjit::registerKernelPipelines();
          }};
}

extern "C" LLVM_ATTRIBUTE_VISIBILITY_DEFAULT mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "kjit", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            registry->insert<kjit::KjitDialect>();
          }};
}
