//===- Passes.td - the host target's passes ----------------*- tablegen -*-===//
//
// The host target's lowering from prepared kernel IR to the LLVM dialect
// (lib/Target/Host/HostToLLVM). The target-independent preparation it
// expects (kjit-bake-globals, kjit-expand-masks, kjit-strip-asserts) is in
// include/kjit/Transforms/Passes.td. Generated into Passes.h.inc
// (registerKjitHostPasses) and docs/generated/KjitHostTargetPasses.md.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_TARGET_HOST_PASSES_TD
#define KJIT_TARGET_HOST_PASSES_TD

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
      with the signature types of its launch arguments, as the runtime
      spells them (each parameter's `kjit.signature_type`, or its type);
      and
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

#endif // KJIT_TARGET_HOST_PASSES_TD
