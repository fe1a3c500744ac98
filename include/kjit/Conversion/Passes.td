//===- Passes.td - kjit conversion passes ------------------*- tablegen -*-===//
//
// Lowerings from kernel IR to a target's dialects (as Triton and CIRCT keep
// their conversions apart from their transforms). The target-independent
// preparation they expect (kjit-bake-globals, kjit-expand-masks,
// kjit-strip-asserts) is in include/kjit/Transforms/Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_CONVERSION_PASSES_TD
#define KJIT_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def KjitConvertHostToLLVM
    : Pass<"kjit-convert-host-to-llvm", "mlir::ModuleOp"> {
  let summary = "Lower prepared kernel IR to the LLVM dialect for the host";
  let description = [{
    Lowers a module whose kernels have been specialized (no `kjit.cast`
    left) and prepared (globals baked in by `kjit-bake-globals`, masked
    accesses expanded by `kjit-expand-masks`) to the LLVM dialect, following
    the host kernel ABI of `include/kjit-c/HostKernel.h`. A `kjit.get_global`
    or a masked `kjit.load`/`kjit.store` that is still there is an error
    naming the operation and the pass that removes it.

    - every kernel and device function takes the SIMT thread
      (`kjit_host_thread *`) as its last argument; program and thread ids
      are loads from it; barriers, prints and failed asserts are calls
      through its runtime table, so the compiled object has no undefined
      symbols of kjit's; asserts that are still there are checked
      (`kjit-strip-asserts` removes them outside debug mode);
    - workgroup memory (`memref.global` in `#gpu.address_space<workgroup>`)
      becomes thread-local globals, reached through out-of-line accessors;
    - `kjit.divisibility = 16` becomes `llvm.align = 16` on pointers and an
      `llvm.intr.assume` on integers;
    - the ABI symbols: for each kernel `K` an exported
      `kjit_host_entry_K(thread, args)`, a `kjit_host_flags_K` constant
      saying whether it uses barriers and a `kjit_host_signature_K` string
      with the signature types of its launch arguments (each parameter's
      `kjit.signature_type`, or the spelling of its type); and
      `kjit_host_abi_version`.

    ```mlir
    // Before (specialized and prepared)
    kjit.kernel @add(%x: !kjit.ptr<f32> {kjit.const, kjit.divisibility = 16 : i64},
                     %n: i32) { ... }
    // After
    llvm.func internal @add(%x: !llvm.ptr {llvm.align = 16 : i64}, %n: i32,
                            %thread: !llvm.ptr)
    llvm.func @kjit_host_entry_add(%thread: !llvm.ptr, %args: !llvm.ptr)
    llvm.mlir.global external constant @kjit_host_flags_add(0 : i32)
    llvm.mlir.global external constant @kjit_host_signature_add("*kfp32,i32\00")
    llvm.mlir.global external constant @kjit_host_abi_version(1 : i32)
    ```

    Workgroup memory above 1 MiB is an error. With `debug-checks`,
    divisors, workgroup indices and accesses through pointer parameters
    are checked (the latter make the object ABI version 2). With
    `fp-fusion` (the default) float `arith.mulf`/`addf`/`subf` get
    `fastmath<contract>`, which the LLVM ops keep, so that the code
    generator may form FMAs; without it no operation keeps `contract`.
  }];
  let options = [
    Option<"fpFusion", "fp-fusion", "bool", /*default=*/"true",
           "Allow a float multiply and add to fuse into one rounding (the "
           "enable_fp_fusion launch option)">,
    Option<"debugChecks", "debug-checks", "bool", /*default=*/"false",
           "Debug mode: check integer divisors, workgroup memory indices "
           "and accesses through pointer parameters (bounds known to the "
           "backend) and report a failed check like a failed assert, with "
           "the source location (docs/HostTarget.md)">
  ];
  let dependentDialects = [
    "kjit::KjitDialect", "mlir::LLVM::LLVMDialect",
    "mlir::cf::ControlFlowDialect", "mlir::arith::ArithDialect"
  ];
}

def KjitConvertToGPU : Pass<"kjit-convert-to-gpu", "mlir::ModuleOp"> {
  let summary = "Lower prepared kernel IR to the gpu dialect for the cuda target";
  let description = [{
    Moves the module's kernels, device functions and workgroup memory into a
    `gpu.module @kjit_device` (the module becomes a `gpu.container_module`)
    and lowers kjit to what `convert-gpu-to-nvvm` takes: a specialized
    module (no `kjit.cast` left) whose globals are baked in
    (`kjit-bake-globals`; a `kjit.get_global` that is still there is an
    error). docs/CudaTarget.md explains each rule.

    - `kjit.kernel` becomes a `gpu.func ... kernel` of the same name whose
      parameters are exactly the launch arguments in order: `!kjit.ptr<T>`
      is `!llvm.ptr<1>` (global memory), `i1` is passed as `i8` and
      converted inside; `known_block_size` is `32 * num-warps` threads
      (`.maxntid`), and `maxnreg` gives `nvvm.maxnreg` (`.maxnreg`);
    - `kjit.func` becomes `func.func` (private ones internal); `kjit.call`
      a `func.call`, with the call-site `no_inline` when the callee is
      `noinline`, so that it stays a real call (`call.uni`);
    - `kjit.load`/`kjit.store` become a GEP and `llvm.load`/`llvm.store`;
      masked ones sit in an `scf.if` (a masked-off address is never read).
      The alignment is what can be proven: 16 bytes for a vector access
      through a parameter specialized `D` (`kjit.divisibility = 16`, also
      `llvm.align = 16` on the parameter) at an offset that is a multiple of
      the vector length, else the element size;
    - `kjit.program_id`/`kjit.num_programs` are `gpu.block_id`/`gpu.grid_dim`
      as i32, `kjit.print` is `gpu.printf` in the host's format,
      `kjit.assert` is `cf.assert` (the pipeline strips asserts outside debug
      mode), `kjit.null` a null `!llvm.ptr<1>`;
    - with `fp-fusion` float `arith.mulf`/`addf`/`subf` get
      `fastmath<contract>`; without it they get nothing, so NVPTX emits
      `mul.rn`/`add.rn`, which ptxas does not fuse.

    The module gets `kjit.kernel_name` and `kjit.shared_bytes` (the static
    workgroup memory), which the artifact's metadata reports.
  }];
  let options = [
    Option<"numWarps", "num-warps", "int64_t", /*default=*/"4",
           "Warps per program: the kernel's block size is 32 * num-warps">,
    Option<"maxNReg", "maxnreg", "int64_t", /*default=*/"0",
           "Register limit per thread of the kernel entry (0: none)">,
    Option<"fpFusion", "fp-fusion", "bool", /*default=*/"true",
           "Allow a multiply and an add to fuse into one rounding">,
  ];
  let dependentDialects = [
    "kjit::KjitDialect", "mlir::LLVM::LLVMDialect", "mlir::gpu::GPUDialect",
    "mlir::func::FuncDialect", "mlir::scf::SCFDialect",
    "mlir::cf::ControlFlowDialect", "mlir::arith::ArithDialect"
  ];
}

def KjitFinalizeNVVM : Pass<"kjit-finalize-nvvm", "mlir::gpu::GPUModuleOp"> {
  let summary = "Check and tidy a gpu.module after convert-gpu-to-nvvm";
  let description = [{
    Runs on a `gpu.module` that `convert-gpu-to-nvvm` lowered:

    - erases the `_mlir_ciface_*` wrappers the lowering adds to every
      `func.func` (nothing calls them; they would only cost ptxas time);
    - without `libdevice`, refuses a module that declares a libdevice
      function (`__nv_expf` for `math.exp`, ...), naming it: otherwise the
      PTX would hold an `.extern .func __nv_...` that only fails when ptxas
      or the driver loads it.
  }];
  let options = [
    Option<"libdevice", "libdevice", "bool", /*default=*/"false",
           "Whether libdevice will be linked (nvvm-attach-target l=...)">,
  ];
}

#endif // KJIT_CONVERSION_PASSES_TD
