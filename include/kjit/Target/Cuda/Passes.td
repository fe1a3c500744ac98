//===- Passes.td - the cuda target's passes ----------------*- tablegen -*-===//
//
// The cuda target's lowering from prepared kernel IR to the gpu dialect and
// its check after the upstream NVVM lowering (lib/Target/Cuda/KjitToGPU).
// The target-independent preparation it expects is in
// include/kjit/Transforms/Passes.td. Generated into Passes.h.inc
// (registerKjitCudaPasses) and docs/generated/KjitCudaTargetPasses.md.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_TARGET_CUDA_PASSES_TD
#define KJIT_TARGET_CUDA_PASSES_TD

include "mlir/Pass/PassBase.td"

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
      mode), `kjit.warp_barrier` is `nvvm.bar.warp.sync` of every lane,
      `kjit.null` a null `!llvm.ptr<1>`;
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
    "mlir::NVVM::NVVMDialect", "mlir::func::FuncDialect",
    "mlir::scf::SCFDialect", "mlir::cf::ControlFlowDialect",
    "mlir::arith::ArithDialect"
  ];
}

def KjitCudaLowerMatrix : Pass<"kjit-cuda-lower-matrix", "mlir::ModuleOp"> {
  let summary = "Lower the matrix-unit operations for the cuda target";
  let description = [{
    kjit-lower-matrix's lowering (include/kjit/Transforms/Passes.td) with
    the cuda target's tile layouts, copies and multiplies
    (docs/MatrixUnits.md):

    - tile buffers live in the kernel's dynamic shared memory, each
      1024-byte aligned; the module's `kjit.shared_dynamic_bytes` (the
      compile's `shared_dynamic_bytes`) is what each launch provides;
    - on sm_90 and newer a tile whose rows are whole 64-element groups takes
      the 128-byte swizzle; other rows are padded by 16 bytes, so that the
      eight rows one `ldmatrix` reads start in different banks;
    - a loop that loads tiles keeps `num-stages - 1` iterations' copies in
      flight with cp.async (sm_80+) where every copy is provably 16-byte
      aligned (base, row stride and column count specialized `D` or
      constant, the column coordinate a multiple of 8); with wgmma in
      flight an iteration starts its copies after its multiplies and a
      second barrier. Otherwise a tile is copied where it is loaded, 16
      bytes per thread and step when the launch proves it aligned, element
      by element when not;
    - `kjit.mma` on sm_90a with swizzled tiles is K/16 `wgmma.mma_async`
      m64nNk16 of the warpgroup from shared memory (each thread fences its
      synchronous copies for the async proxy; cp.async's are published by
      their wait and the barrier); elsewhere each warp computes its 16
      rows with `ldmatrix.x4`, `ldmatrix.x4.trans` and
      `mma.sync.aligned.m16n8k16.row.col.f32` (bf16 or f16);
    - `kjit.mma_store` of 16-bit elements, where a warpgroup's block lies
      wholly inside C and its rows are provably 16-byte aligned, stages
      each warp's 16 rows through shared memory 64 columns at a time
      (`bar.warp.sync` around the exchange) and stores 16 bytes of a row a
      thread.

    `mma.sync` needs sm_80 or newer: an older `chip` is refused at the
    operation.
  }];
  let options = [
    Option<"numWarps", "num-warps", "int64_t", /*default=*/"4",
           "Warps per program (1 to 32); warpgroup operations need a "
           "multiple of 4">,
    Option<"numStages", "num-stages", "int64_t", /*default=*/"3",
           "Iterations whose tiles a pipelined loop keeps in flight (1: "
           "none, each tile copied when it is loaded)">,
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "The target GPU (sm_XY), which must have mma.sync (sm_80+)">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::gpu::GPUDialect",
                           "mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::NVVM::NVVMDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::vector::VectorDialect"];
}

def KjitFinalizeNVVM : Pass<"kjit-finalize-nvvm", "mlir::gpu::GPUModuleOp"> {
  let summary = "Check and tidy a gpu.module after convert-gpu-to-nvvm";
  let description = [{
    Runs on a `gpu.module` that `convert-gpu-to-nvvm` lowered:

    - erases the `_mlir_ciface_*` wrappers the lowering adds to every
      `func.func` (nothing calls them; they would only cost ptxas time);
    - makes the global of `gpu.dynamic_shared_memory` (a zero-length
      shared array, which NVPTX would demote to a static byte) external and
      1024-byte aligned: PTX's `.extern .shared` array that a launch's
      dynamic shared memory backs;
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

#endif // KJIT_TARGET_CUDA_PASSES_TD
