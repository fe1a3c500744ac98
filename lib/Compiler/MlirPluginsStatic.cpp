//===- MlirPluginsStatic.cpp - MLIR plugins in the bundle: refused --------===//
//
// The bundle's compiler module holds a static copy of MLIR whose symbols are
// hidden (docs/Bundle.md). A plugin built against Debian's libMLIR.so would
// bring a second MLIR into the process (or fail to load where there is
// none, as on the GPU machine), register its passes there, and hand the
// compiler objects of another MLIR: a crash, not an error. So it is refused.

#include "MlirPlugins.h"

namespace kjit {

absl::StatusOr<std::vector<DialectPluginCallback>>
loadMlirPlugins(const std::vector<std::string> &passPlugins,
                const std::vector<std::string> &dialectPlugins) {
  if (passPlugins.empty() && dialectPlugins.empty())
    return std::vector<DialectPluginCallback>();
  const std::string &first =
      passPlugins.empty() ? dialectPlugins.front() : passPlugins.front();
  return absl::FailedPreconditionError(
      "cannot load MLIR plugin '" + first +
      "': this compiler library (the device bundle's) links MLIR statically "
      "with hidden symbols, so no plugin built against a shared libMLIR can "
      "join it; use the compiler library of a build over Debian's libMLIR.so "
      "(KJIT_COMPILER_LIBRARY)");
}

} // namespace kjit
