//===- Passes.td - kjit passes -----------------------------*- tablegen -*-===//
//
// The passes that look at kernels: dependency finding and global tracking
// (docs/Dependencies.md). Each runs the same way in the runtime, in kjit-opt,
// and in mlir-opt through the pass plugin.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_TRANSFORMS_PASSES_TD
#define KJIT_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def KjitFindDependencies : Pass<"kjit-find-dependencies", "mlir::ModuleOp"> {
  let summary = "Record each function's cache key and the globals it reads";
  let description = [{
    Computes, for every function of the module (kjit kernels and device
    functions, or any FunctionOpInterface op such as func.func), the content
    hash of its canonical IR and start line together with the content hash
    and `noinline` flag of every function it transitively calls; the globals
    it and its callees read, with their values; and the cache key built from
    both. The results are attached to each function:

    ```mlir
    // Before
    kjit.global @SCALE : f32 = 5.000000e-01
    kjit.kernel @k(%x: !kjit.ptr<f32>) {
      %s = kjit.get_global @SCALE : f32
      ...
    }
    // After
    kjit.kernel @k(%x: !kjit.ptr<f32>) attributes {
        kjit.content_hash = "3f1c...", kjit.key = "a94e...",
        kjit.used_globals = [
          {name = @SCALE, value = 5.000000e-01 : f32}
        ]} {
      ...
    }
    ```

    A function that already carries a record whose content hash still
    matches keeps it unchanged (its key and values are those of its first
    analysis). When a caller reads a global with a value different from the
    one a callee's kept record holds, the pass fails with an error naming
    the global, both values, the caller and the callee.
  }];
  let dependentDialects = ["kjit::KjitDialect"];
}

def KjitTrackGlobals : Pass<"kjit-track-globals", "mlir::ModuleOp"> {
  let summary = "Check recorded global values against the module's globals";
  let description = [{
    The launch-time global check, as a pass. For every function with a
    record (see `kjit-find-dependencies`), compares the recorded value of
    each global it reads with the module's current value. A changed value
    is an error, with the reference runtime's message:

    ```
    error: Global variable SCALE has changed since we compiled this kernel,
           from 5.000000e-01 to 2.000000e+00
    ```

    With `on-change=recompile` the stale records are dropped and recomputed
    from the current values instead, which gives the function a new key.
    Functions without a record get one, so that the snapshot is taken.
  }];
  let options = [
    Option<"onChange", "on-change", "std::string", /*default=*/"\"error\"",
           "What a changed global does: 'error' (the default, as the "
           "reference runtime) or 'recompile' (re-analyse with the new "
           "values)">
  ];
  let dependentDialects = ["kjit::KjitDialect"];
}

def KjitSpecialize : Pass<"kjit-specialize", "mlir::ModuleOp"> {
  let summary = "Apply a launch's specialization to a kernel";
  let description = [{
    Rewrites one kernel for one specialization (types, spec keys and
    constexpr values, as the binder derives them from a launch):

    - `!kjit.any` parameters take the bound type; each `kjit.cast` of them
      becomes the parameter itself, or is rejected if it names another type;
    - constexpr parameters are folded into constants and leave the signature
      (they are not passed at launch);
    - parameters with the `1` spec key are folded into the constant 1 and
      parameters bound to None into `kjit.null`;
    - parameters with the `D` spec key get `kjit.divisibility = 16`, which
      lowering turns into an alignment (`llvm.align`) or an assumption.

    ```mlir
    // kjit-opt --kjit-specialize="kernel=add spec=x:*fp32:D,n:i32:1,BLOCK=1024"
    // Before
    kjit.kernel @add(%x: !kjit.ptr<f32>, %n: i32,
                     %BLOCK: i32 {kjit.constexpr}) { ... %BLOCK ... %n ... }
    // After (and --canonicalize folds the constants through the body)
    kjit.kernel @add(%x: !kjit.ptr<f32> {kjit.divisibility = 16 : i64},
                     %n: i32) { %c1024 = arith.constant 1024 : i32 ... }
    ```

    The specialization comes from a JSON record as the runtime writes it
    (`record=FILE`, see docs/Specialization.md) or inline: the `spec`
    entries are `name:TYPE[:D|1|N]` for each non-constexpr
    parameter (TYPE as in signatures: i32, fp32, *fp16, *kfp32) and
    `name=VALUE` for constexprs (an integer, a float, true, false) and for
    arguments that are None (`name=none`).
  }];
  let options = [
    Option<"kernelName", "kernel", "std::string", /*default=*/"\"\"",
           "The kernel to specialize">,
    ListOption<"entries", "spec", "std::string",
               "One entry per parameter: name:TYPE[:D|1|N] or name=VALUE">,
    Option<"recordPath", "record", "std::string", /*default=*/"\"\"",
           "A specialization record (JSON, as the runtime writes it) "
           "instead of `spec`; it names its kernel">
  ];
  let dependentDialects = ["kjit::KjitDialect", "mlir::arith::ArithDialect"];
}

def KjitCacheHook : Pass<"kjit-cache-hook", "mlir::ModuleOp"> {
  let summary = "Ask the loaded plugins' cache hooks whether to compile";
  let description = [{
    Calls the cache hook of every loaded plugin (`--load-plugin`,
    `KJIT_PLUGINS`) for each kernel, with its key (the recorded `kjit.key`
    or a freshly computed one), a readable repr `name(x: *fp32, n: i32)` and
    a JSON compile record. A kernel that any hook answers "skip" for is not
    compiled: it leaves the module, with a remark.
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
    (format `mlir-bytecode`). The IR is not changed.
  }];
  let options = [
    Option<"kernelName", "kernel", "std::string", /*default=*/"\"\"",
           "Only this kernel (default: every kernel)">,
    Option<"target", "target", "std::string", /*default=*/"\"host\"",
           "Target name the hooks see">
  ];
}

def KjitConvertHostToLLVM
    : Pass<"kjit-convert-host-to-llvm", "mlir::ModuleOp"> {
  let summary = "Lower specialized kernel IR to the LLVM dialect for the host";
  let description = [{
    Lowers a module whose kernels have been specialized (no `kjit.cast`
    left) to the LLVM dialect, following the host kernel ABI of
    `include/kjit-c/HostKernel.h`:

    - every kernel and device function takes the SIMT thread
      (`kjit_host_thread *`) as its last argument; program and thread ids
      are loads from it; barriers, prints and failed asserts are calls
      through its runtime table, so the compiled object has no undefined
      symbols of kjit's;
    - global reads are replaced by the globals' values (baked in);
    - masked loads and stores become branches around unmasked accesses;
    - workgroup memory (`memref.global` in `#gpu.address_space<workgroup>`)
      becomes thread-local globals;
    - `kjit.divisibility = 16` becomes `llvm.align = 16` on pointers and an
      `llvm.intr.assume` on integers;
    - each kernel `K` gets an exported `kjit_host_entry_K(thread, args)` and
      a `kjit_host_flags_K` constant saying whether it uses barriers.

    ```mlir
    // After, for `kjit.kernel @add(%x: !kjit.ptr<f32> {kjit.divisibility = 16}, ...)`
    llvm.func internal @add(%x: !llvm.ptr {llvm.align = 16 : i64}, ..., %thread: !llvm.ptr)
    llvm.func @kjit_host_entry_add(%thread: !llvm.ptr, %args: !llvm.ptr)
    llvm.mlir.global external constant @kjit_host_flags_add(0 : i32)
    ```
  }];
  let options = [
    Option<"debug", "debug", "bool", /*default=*/"false",
           "Keep device asserts (debug=true or KJIT_DEBUG=1 at launch)">
  ];
  let dependentDialects = [
    "kjit::KjitDialect", "mlir::LLVM::LLVMDialect", "mlir::arith::ArithDialect",
    "mlir::scf::SCFDialect", "mlir::cf::ControlFlowDialect"
  ];
}

#endif // KJIT_TRANSFORMS_PASSES_TD
