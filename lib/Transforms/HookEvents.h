//===- HookEvents.h - what the hook passes tell plugins ---------*- C++ -*-===//
//
// Shared by kjit-cache-hook and kjit-compiled-hook: the compile information
// a plugin receives, built from IR alone.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_TRANSFORMS_HOOKEVENTS_H
#define KJIT_LIB_TRANSFORMS_HOOKEVENTS_H

#include "kjit/Dialect/Kjit/IR/Kjit.h"
#include "kjit/Plugin/PluginHost.h"

#include <string>

namespace kjit {

/// The compile information of one kernel, owning its strings.
struct KernelCompileInfo {
  std::string name;
  std::string key;
  std::string repr;
  std::string json;
};

/// Builds it from a kernel: its recorded key (kjit-find-dependencies) or
/// a freshly computed one, `name(x: *fp32, n: i32)` and a JSON record with
/// name, key, signature, constants and target.
mlir::FailureOr<KernelCompileInfo> describeKernel(KernelOp kernel,
                                                  llvm::StringRef target);

/// The hooks' view of `info`; it borrows info's strings.
plugin::CompileInfo toCompileInfo(const KernelCompileInfo &info,
                                  llvm::StringRef target);

} // namespace kjit

#endif // KJIT_LIB_TRANSFORMS_HOOKEVENTS_H
