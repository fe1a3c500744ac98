//===- Passes.td - kjit passes -----------------------------*- tablegen -*-===//
//
// The target-independent passes over kernel IR: dependency finding and
// global tracking (docs/Dependencies.md), specialization
// (docs/Specialization.md) and the preparation every target pipeline runs
// before its lowering (docs/HostTarget.md). Each runs the same way in the
// runtime, in kjit-opt, and in mlir-opt through the pass plugin. The
// lowerings are in include/kjit/Target/<Name>/Passes.td; the hook passes, which
// call the process's plugins, in lib/HookPasses (linked by the tools only).
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
      lowering turns into an alignment (`llvm.align`) or an assumption;
    - a parameter whose launch signature type is not what its type (and
      `kjit.const`, `kjit.unsigned`) say gets `kjit.signature_type =
      #kjit.signature<...>`, the type the launch passes: a read-only tensor
      passed to a plain pointer (`#kjit.signature<const !kjit.ptr<f32>>`),
      None (`#kjit.signature<!kjit.ptr<i8>>`), an unsigned integer
      (`#kjit.signature<ui64>`). The host lowering writes the launch
      signature from it.

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
    arguments that are None (`name=none`). The compile pipeline
    (`kjit::buildKernelPipeline`) creates the pass with a record already in
    memory instead (`kjit::createKjitSpecializeWithRecord`).
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

def KjitKeepKernel : Pass<"kjit-keep-kernel", "mlir::ModuleOp"> {
  let summary = "Erase every kernel but one";
  let description = [{
    A compile builds one kernel: the module's other kernels are erased (they
    may not even be specialized). Device functions and globals stay; the
    lowering gives functions internal linkage, so code generation drops the
    ones nothing calls.

    ```mlir
    // kjit-opt --kjit-keep-kernel=kernel=add
    // Before
    kjit.kernel @add(...) { ... }
    kjit.kernel @sub(...) { ... }
    // After
    kjit.kernel @add(...) { ... }
    ```

    A kernel name the module does not have is an error.
  }];
  let options = [
    Option<"kernelName", "kernel", "std::string", /*default=*/"\"\"",
           "The kernel to keep">
  ];
}

def KjitBakeGlobals : Pass<"kjit-bake-globals", "mlir::ModuleOp"> {
  let summary = "Replace global reads by the globals' current values";
  let description = [{
    A compiled kernel bakes in the values of the module globals it reads
    (the runtime checks at launch that they have not changed since): every
    `kjit.get_global` becomes an `arith.constant` of the global's value as
    the module holds it now. The `kjit.global` operations stay (the
    lowering drops them).

    ```mlir
    kjit.global @SCALE : f32 = 5.000000e-01
    // Before
    %s = kjit.get_global @SCALE : f32
    // After
    %s = arith.constant 5.000000e-01 : f32
    ```
  }];
  let dependentDialects = ["kjit::KjitDialect", "mlir::arith::ArithDialect"];
}

def KjitExpandMasks : Pass<"kjit-expand-masks", "mlir::ModuleOp"> {
  let summary = "Turn masked loads and stores into branches around unmasked ones";
  let description = [{
    For targets without predicated memory accesses (the host): a masked
    `kjit.load` becomes an `scf.if` that loads without the mask when the
    mask is true and yields `other` (or zero) otherwise; a masked
    `kjit.store` becomes an `scf.if` around an unmasked store. A masked-off
    address is never read or written.

    ```mlir
    // Before
    %v = kjit.load %x[%i] mask %m other %o : !kjit.ptr<f32>, i32 -> f32
    kjit.store %v, %y[%i] mask %m : f32, !kjit.ptr<f32>, i32
    // After
    %v = scf.if %m -> (f32) {
      %l = kjit.load %x[%i] : !kjit.ptr<f32>, i32 -> f32
      scf.yield %l : f32
    } else {
      scf.yield %o : f32
    }
    scf.if %m {
      kjit.store %v, %y[%i] : f32, !kjit.ptr<f32>, i32
    }
    ```

    The patterns are `kjit::populateExpandMasksPatterns`; the pass applies
    them without folding, so it changes nothing else.
  }];
  let dependentDialects = [
    "kjit::KjitDialect", "mlir::arith::ArithDialect", "mlir::scf::SCFDialect"
  ];
}

def KjitStripAsserts : Pass<"kjit-strip-asserts", "mlir::ModuleOp"> {
  let summary = "Erase device asserts; refuse one that always fails";
  let description = [{
    Outside debug mode (`debug=true` at launch, or `KJIT_DEBUG=1`) device
    asserts are not checked: every `kjit.assert` is erased. The values only
    the assert used become dead and canonicalization removes them.

    In either mode an assert that every thread reaches (in the entry block
    of a kernel) and whose condition folded to false, once
    the specialization's constants and the block size are in, is an error
    at its location: the launch could only fail it (debug) or run a kernel
    that broke its own precondition (otherwise). `erase=false` (debug mode)
    only checks.

    ```mlir
    // Before
    %ok = arith.cmpi slt, %i, %n : i32
    kjit.assert %ok, "index out of range"
    // After
    %ok = arith.cmpi slt, %i, %n : i32
    ```
  }];
  let dependentDialects = ["kjit::KjitDialect"];
  let options = [
    Option<"erase", "erase", "bool", /*default=*/"true",
           "erase the asserts (false: only refuse one that always fails)">
  ];
}

def KjitFoldBlockSize : Pass<"kjit-fold-block-size", "mlir::ModuleOp"> {
  let summary = "Make the block size a constant: 32 * num-warps threads in x";
  let description = [{
    Every backend runs a program as `(32 * num_warps, 1, 1)` threads, and
    `num_warps` is part of the specialization key, so a compiled kernel
    only ever runs with the block size it was compiled for: `gpu.block_dim`
    becomes that constant (x: `32 * num-warps`, y and z: 1) and
    `gpu.thread_id` y and z become 0, in kernels and device functions alike.
    A loop strided by the block size, as a kernel sweeps its block, then has
    a constant trip count, and the canonicalizer turns a loop of one trip
    into straight-line code before LLVM sees it.

    ```mlir
    // Before (num-warps=4)
    %threads = gpu.block_dim x
    scf.for %r = %c0 to %c512 step %threads { ... }
    // After
    %threads = arith.constant 128 : index
    scf.for %r = %c0 to %c512 step %threads { ... }
    ```
  }];
  let options = [
    Option<"numWarps", "num-warps", "int64_t", /*default=*/"4",
           "Warps per program (1 to 32): the block is 32 * num-warps threads">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def KjitLowerMatrix : Pass<"kjit-lower-matrix", "mlir::ModuleOp"> {
  let summary = "Lower the matrix-unit operations to portable kernel IR";
  let description = [{
    Rewrites `kjit.tensor_desc`, `kjit.tile_load`, `kjit.mma`,
    `kjit.mma_coords` and `kjit.mma_store` (docs/MatrixUnits.md) into
    operations every target already lowers: workgroup memory, barriers,
    masked `kjit.load`/`kjit.store`, arith, vector and scf.

    - each `kjit.tile_load` gets its own workgroup buffer (a
      `memref.global`, row-major); the program waits at a barrier (earlier
      readers of the buffer are done), its threads copy the tile element by
      element, zero outside the matrix, and wait again;
    - `kjit.mma` becomes, for each element of the thread's fragment, a loop
      over K in f32;
    - `kjit.mma_coords` and `kjit.mma_store` become the index formulas of
      the fragment layout, the store one masked `kjit.store` per element
      (or per pair of elements where the launch proves pairs aligned); a
      16-bit block wholly inside C whose rows are proven 16-byte aligned
      goes through a workgroup staging tile instead, each warp exchanging
      its rows between `kjit.warp_barrier`s and storing 16 bytes a thread.

    The host target runs it as is; the cuda target runs the same lowering
    with its own `kjit.mma` (kjit-cuda-lower-matrix). A kernel that uses a
    warpgroup operation needs whole warpgroups: `num-warps` a multiple of 4.

    ```mlir
    // Before
    %t = kjit.tile_load %d[%r, %c]
        : !kjit.tensor_desc<64x64xbf16> -> !kjit.tile<64x64xbf16>
    // After
    %buffer = memref.get_global @kjit_tile
        : memref<64x64xbf16, #gpu.address_space<workgroup>>
    gpu.barrier
    scf.for %i = %tid to %c4096 step %threads { ... kjit.load ... memref.store ... }
    gpu.barrier
    ```
  }];
  let options = [
    Option<"numWarps", "num-warps", "int64_t", /*default=*/"4",
           "Warps per program (1 to 32); warpgroup operations need a "
           "multiple of 4">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::gpu::GPUDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect",
                           "mlir::vector::VectorDialect"];
}

def KjitCheckNonePointers : Pass<"kjit-check-none-pointers", "mlir::ModuleOp"> {
  let summary = "Refuse kernels that dereference a pointer bound to None";
  let description = [{
    A pointer parameter bound to None becomes a `kjit.null` (specialization
    marks it with the parameter's name). A `kjit.load` or `kjit.store`
    through it is undefined behaviour that LLVM deletes, so the launch would
    silently compute nothing; Triton refuses such a kernel at compile time
    and so does this pass: it reports every access whose base is such a
    null, also in a device function the null is passed to, naming the
    parameter. Run it after canonicalization, so that accesses in branches
    a constexpr removed (`if HAS_BIAS`) and masks that are constant false do
    not count.

    ```mlir
    // x bound to None: error: parameter 'x' of '@add' is None, but this
    // 'kjit.load' dereferences it
    %p = kjit.null {kjit.none_param = "x"} : !kjit.ptr<f32>
    %v = kjit.load %p[%i] : !kjit.ptr<f32>, i32 -> f32
    ```
  }];
  let dependentDialects = ["kjit::KjitDialect"];
}

#endif // KJIT_TRANSFORMS_PASSES_TD
