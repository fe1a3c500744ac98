//===- HookEvents.h - what the hook passes tell plugins ---------*- C++ -*-===//
//
// Shared by kjit-cache-hook and kjit-compiled-hook: the compile information
// a plugin receives, built from IR alone.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_HOOKPASSES_HOOKEVENTS_H
#define KJIT_LIB_HOOKPASSES_HOOKEVENTS_H

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
/// a freshly computed one, `name(x: *fp32, n: i32)` and the compile_json
/// of include/kjit/Model/CompileJson.h (with a null record).
mlir::FailureOr<KernelCompileInfo> describeKernel(KernelOp kernel,
                                                  llvm::StringRef target);

/// Calls `fn` with the hooks' view of every kernel of `module` (only the one
/// named `kernelName` when it is not empty). `fn` may erase the kernel it is
/// given. Fails, after an error, when a kernel cannot be described.
mlir::LogicalResult forEachKernelEvent(
    mlir::ModuleOp module, llvm::StringRef kernelName, llvm::StringRef target,
    llvm::function_ref<void(KernelOp, const plugin::CompileInfo &)> fn);

} // namespace kjit

#endif // KJIT_LIB_HOOKPASSES_HOOKEVENTS_H
