//===- WrongVersion.cpp - a plugin of another plugin API version ----------===//
//
// Both entry points answer MLIR_PLUGIN_API_VERSION + 1, as a plugin built
// for another MLIR would: MLIR refuses it with its own message
// (test/kjit-run/pass-plugin.test).
//
//===----------------------------------------------------------------------===//

#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION + 1, "WrongVersion", "1", [] {}};
}

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION + 1, "WrongVersion", "1",
          [](mlir::DialectRegistry *) {}};
}
