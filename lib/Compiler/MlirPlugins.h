//===- MlirPlugins.h - out-of-tree MLIR plugins in the compiler -*- C++ -*-===//
//
// Loads the MLIR pass and dialect plugins a runtime names
// (CompilerExtensions) into the MLIR the compiler module runs on. Two
// implementations, one per compiler module: MlirPlugins.cpp in
// libkjit-compiler.so over Debian's libMLIR.so, where a plugin built against
// that libMLIR.so shares its registries; MlirPluginsStatic.cpp in the
// bundle's module, whose MLIR is a static copy with hidden symbols, which no
// plugin can reach: it refuses them (docs/Runtime.md "MLIR pass plugins").
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_COMPILER_MLIRPLUGINS_H
#define KJIT_LIB_COMPILER_MLIRPLUGINS_H

#include "absl/status/statusor.h"

#include <functional>
#include <string>
#include <vector>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace kjit {

/// What a dialect plugin adds to a context's registry.
using DialectPluginCallback = std::function<void(mlir::DialectRegistry &)>;

/// Loads `passPlugins` (their passes join the pass registry) and
/// `dialectPlugins` (their callbacks are returned, for every context's
/// registry). An error names the plugin and gives MLIR's reason.
absl::StatusOr<std::vector<DialectPluginCallback>>
loadMlirPlugins(const std::vector<std::string> &passPlugins,
                const std::vector<std::string> &dialectPlugins);

} // namespace kjit

#endif // KJIT_LIB_COMPILER_MLIRPLUGINS_H
