//===- HookPasses.td - passes that call the loaded plugins -*- tablegen -*-===//
//
// The hook passes run the cache and compiled hooks of the plugins loaded into
// the process (kjit::plugin::PluginHost::global(), filled by --load-plugin or
// KJIT_PLUGINS), on IR alone. They have process-global effects, so they live
// in this tool-side library (KjitHookPasses, linked by kjit-opt and the
// mlir-opt plugin), not in libkjit-compiler: the runtime runs the hooks
// itself around its compiles.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_HOOKPASSES_TD
#define KJIT_HOOKPASSES_TD

include "mlir/Pass/PassBase.td"

def KjitCacheHook : Pass<"kjit-cache-hook", "mlir::ModuleOp"> {
  let summary = "Ask the loaded plugins' cache hooks whether to compile";
  let description = [{
    Calls the cache hook of every loaded plugin (`--load-plugin`,
    `KJIT_PLUGINS`) for each kernel, with its key (the recorded `kjit.key`
    or a freshly computed one), a readable repr `name(x: *fp32, n: i32)` and
    a JSON compile record. A kernel that any hook answers "skip" for is not
    compiled: it leaves the module, with a remark.

    ```mlir
    // kjit-opt --load-plugin=libskip.so --kjit-cache-hook
    // Before
    kjit.kernel @add(...) { ... }
    // After (remark: a cache hook skipped compiling '@add')
    module {}
    ```
  }];
  let options = [
    Option<"kernelName", "kernel", "std::string", /*default=*/"\"\"",
           "Only this kernel (default: every kernel)">,
    Option<"target", "target", "std::string", /*default=*/"\"host\"",
           "Target name the hooks see">
  ];
}

def KjitCompiledHook : Pass<"kjit-compiled-hook", "mlir::ModuleOp"> {
  let summary = "Show the compiled module to the loaded plugins";
  let description = [{
    Calls the compiled hook of every loaded plugin for each kernel of the
    module, with the module at this point of the pipeline as the artifact
    (format `mlir-bytecode`). The IR is not changed (before and after are
    the same).
  }];
  let options = [
    Option<"kernelName", "kernel", "std::string", /*default=*/"\"\"",
           "Only this kernel (default: every kernel)">,
    Option<"target", "target", "std::string", /*default=*/"\"host\"",
           "Target name the hooks see">
  ];
}

#endif // KJIT_HOOKPASSES_TD
