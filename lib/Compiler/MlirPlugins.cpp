//===- MlirPlugins.cpp - MLIR plugins over the shared libMLIR -------------===//
//
// libkjit-compiler.so links Debian's libMLIR.so, and so does a plugin built
// against Debian's MLIR: the dynamic loader gives both the one copy, so the
// plugin's passes and dialects land in the registries the compiler uses.

#include "MlirPlugins.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Support/Error.h"

namespace kjit {

absl::StatusOr<std::vector<DialectPluginCallback>>
loadMlirPlugins(const std::vector<std::string> &passPlugins,
                const std::vector<std::string> &dialectPlugins) {
  for (const std::string &path : passPlugins) {
    llvm::Expected<mlir::PassPlugin> plugin = mlir::PassPlugin::load(path);
    if (!plugin)
      return absl::FailedPreconditionError(
          "cannot load MLIR pass plugin '" + path +
          "': " + llvm::toString(plugin.takeError()));
    plugin->registerPassRegistryCallbacks();
  }
  std::vector<DialectPluginCallback> callbacks;
  for (const std::string &path : dialectPlugins) {
    llvm::Expected<mlir::DialectPlugin> plugin =
        mlir::DialectPlugin::load(path);
    if (!plugin)
      return absl::FailedPreconditionError(
          "cannot load MLIR dialect plugin '" + path +
          "': " + llvm::toString(plugin.takeError()));
    callbacks.push_back(
        [plugin = std::move(*plugin)](mlir::DialectRegistry &registry) {
          plugin.registerDialectRegistryCallbacks(registry);
        });
  }
  return callbacks;
}

} // namespace kjit
