//===- HookPasses.h - passes that call the loaded plugins -------*- C++ -*-===//
//
// The passes of HookPasses.td. Only tools include this (kjit-opt, the
// mlir-opt plugin); libkjit-compiler does not contain these passes.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_HOOKPASSES_HOOKPASSES_H
#define KJIT_LIB_HOOKPASSES_HOOKPASSES_H

#include "kjit/Plugin/PluginHost.h"

#include "mlir/Pass/Pass.h"

namespace kjit {

/// The plugin host the hook passes report to: the tool's own (kjit-opt
/// loads --load-plugin and KJIT_PLUGINS into it). It lives here, on the tool
/// side, because the hook passes run inside a tool: neither the compiler
/// library nor the runtime has a process-wide host.
plugin::PluginHost &hookPluginHost();

#define GEN_PASS_DECL
#include "HookPasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "HookPasses.h.inc"

} // namespace kjit

#endif // KJIT_LIB_HOOKPASSES_HOOKPASSES_H
