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
  }];
  let dependentDialects = [
    "kjit::KjitDialect", "mlir::LLVM::LLVMDialect",
    "mlir::cf::ControlFlowDialect"
  ];
}

#endif // KJIT_CONVERSION_PASSES_TD
