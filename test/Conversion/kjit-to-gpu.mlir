// RUN: kjit-opt %s --split-input-file --kjit-convert-to-gpu | FileCheck %s
// RUN: kjit-opt %s --split-input-file --kjit-convert-to-gpu='num-warps=8 maxnreg=64 fp-fusion=false' | FileCheck %s --check-prefix=OPTS
// RUN: not kjit-opt %s --split-input-file --kjit-convert-to-gpu=num-warps=33 2>&1 | FileCheck %s --check-prefix=WARPS
// WARPS: error: kjit-convert-to-gpu: num-warps must be 1 to 32, got 33

// kjit-convert-to-gpu: one minimal case per rule (docs/CudaTarget.md). The
// kernels are written as kjit-specialize leaves them.

// The kernel becomes a gpu.func kernel in a gpu.module of a container
// module; its parameters are the launch arguments: pointers in the global
// address space, D pointers with llvm.align = 16, a bool as i8 converted
// inside. The block size is 32 * num_warps; maxnreg only when asked.
// CHECK-LABEL: module attributes {gpu.container_module, kjit.kernel_name = "params", kjit.shared_bytes = 0 : i64}
// CHECK:       gpu.module @kjit_device {
// CHECK:         gpu.func @params(%[[X:.*]]: !llvm.ptr<1> {llvm.align = 16 : i64}, %[[Y:.*]]: !llvm.ptr<1>, %[[N:.*]]: i32, %[[FLAG:.*]]: i8, %[[H:.*]]: f16) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
// CHECK:           %[[BIT:.*]] = arith.trunci %[[FLAG]] : i8 to i1
// CHECK:           arith.select %[[BIT]]
// OPTS-LABEL:  gpu.func @params(
// OPTS-SAME:     kernel attributes {known_block_size = array<i32: 256, 1, 1>, nvvm.maxnreg = 64 : i32}
kjit.kernel @params(%x: !kjit.ptr<f32> {kjit.const, kjit.divisibility = 16 : i64},
                    %y: !kjit.ptr<f32>, %n: i32, %flag: i1, %h: f16) {
  %c0 = arith.constant 0 : i32
  %i = arith.select %flag, %n, %c0 : i32
  %v = kjit.load %x[%i] : !kjit.ptr<f32>, i32 -> f32
  kjit.store %v, %y[%i] : f32, !kjit.ptr<f32>, i32
  kjit.return
}

// -----

// A vector access is aligned to 16 bytes only through a D parameter at an
// offset proven a multiple of the vector length (here pid * 1024 + tid * 4
// + a loop variable stepping by 4 * threads); otherwise it keeps the
// element's alignment and NVPTX splits it.
// CHECK-LABEL: gpu.func @vectors(
// CHECK-SAME:    %[[A:[^:]*]]: !llvm.ptr<1> {llvm.align = 16 : i64}, %[[B:[^:]*]]: !llvm.ptr<1>,
// CHECK:         %[[PID:.*]] = gpu.block_id x
// CHECK:         arith.index_cast %[[PID]] : index to i32
// CHECK:         scf.for
// CHECK:           %[[PA:.*]] = llvm.getelementptr %[[A]][%{{.*}}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
// CHECK:           llvm.load %[[PA]] {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK:           %[[PB:.*]] = llvm.getelementptr %[[B]][%{{.*}}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
// CHECK:           llvm.load %[[PB]] {alignment = 4 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK:           llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// An odd offset: element alignment even through a D pointer.
// CHECK:         llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> vector<4xf32>
kjit.kernel @vectors(%a: !kjit.ptr<f32> {kjit.const, kjit.divisibility = 16 : i64},
                     %b: !kjit.ptr<f32> {kjit.const},
                     %out: !kjit.ptr<f32> {kjit.divisibility = 16 : i64}) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c4 = arith.constant 4 : i32
  %c1024 = arith.constant 1024 : i32
  %pid = kjit.program_id x
  %tid_index = gpu.thread_id x
  %threads_index = gpu.block_dim x
  %tid = arith.index_cast %tid_index : index to i32
  %threads = arith.index_cast %threads_index : index to i32
  %start = arith.muli %pid, %c1024 : i32
  %lane = arith.muli %tid, %c4 : i32
  %sweep = arith.muli %threads, %c4 : i32
  scf.for %round = %c0 to %c1024 step %sweep : i32 {
    %base = arith.addi %start, %round : i32
    %offset = arith.addi %base, %lane : i32
    %va = kjit.load %a[%offset] : !kjit.ptr<f32>, i32 -> vector<4xf32>
    %vb = kjit.load %b[%offset] : !kjit.ptr<f32>, i32 -> vector<4xf32>
    %sum = arith.addf %va, %vb : vector<4xf32>
    kjit.store %sum, %out[%offset] : vector<4xf32>, !kjit.ptr<f32>, i32
  }
  %odd = arith.addi %lane, %c1 : i32
  %vodd = kjit.load %a[%odd] : !kjit.ptr<f32>, i32 -> vector<4xf32>
  kjit.store %vodd, %out[%lane] : vector<4xf32>, !kjit.ptr<f32>, i32
  kjit.return
}

// -----

// Masked accesses: nothing is read or written when the mask is false; the
// load's result is then `other`, or zero. Bools are bytes in memory.
// CHECK-LABEL: gpu.func @masks(
// CHECK:         %[[LOADED:.*]] = scf.if %{{.*}} -> (f32) {
// CHECK:           %[[V:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK:           scf.yield %[[V]] : f32
// CHECK:         } else {
// CHECK:           scf.yield %{{.*}} : f32
// CHECK:         }
// CHECK:         %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<2xf32>
// CHECK:         scf.if %{{.*}} -> (vector<2xf32>) {
// CHECK:         } else {
// CHECK:           scf.yield %[[ZERO]] : vector<2xf32>
// CHECK:         scf.if %{{.*}} {
// CHECK:           llvm.store %[[LOADED]], %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<1>
// CHECK:         }
// CHECK:         %[[BYTE:.*]] = llvm.load %{{.*}} {alignment = 1 : i64} : !llvm.ptr<1> -> i8
// CHECK:         %[[BOOL:.*]] = arith.trunci %[[BYTE]] : i8 to i1
// CHECK:         %[[BACK:.*]] = arith.extui %[[BOOL]] : i1 to i8
// CHECK:         llvm.store %[[BACK]], %{{.*}} {alignment = 1 : i64} : i8, !llvm.ptr<1>
kjit.kernel @masks(%x: !kjit.ptr<f32> {kjit.const}, %y: !kjit.ptr<f32>,
                   %flags: !kjit.ptr<i1>, %n: i32) {
  %pid = kjit.program_id x
  %in = arith.cmpi slt, %pid, %n : i32
  %minus = arith.constant -1.0 : f32
  %v = kjit.load %x[%pid] mask %in other %minus : !kjit.ptr<f32>, i32 -> f32
  %w = kjit.load %x[%pid] mask %in : !kjit.ptr<f32>, i32 -> vector<2xf32>
  kjit.store %v, %y[%pid] mask %in : f32, !kjit.ptr<f32>, i32
  %f = kjit.load %flags[%pid] : !kjit.ptr<i1>, i32 -> i1
  kjit.store %f, %flags[%n] : i1, !kjit.ptr<i1>, i32
  kjit.return
}

// -----

// Device functions are func.funcs (private ones internal); a call of a
// noinline one carries the call-site no_inline that the NVVM lowering keeps.
// CHECK-LABEL: gpu.module @kjit_device
// CHECK:         func.func private @helper(%{{.*}}: f32) -> f32 attributes {llvm.linkage = #llvm.linkage<internal>} {
// CHECK:           return %{{.*}} : f32
// CHECK:         func.func @inlinable(%{{.*}}: !llvm.ptr<1>) -> !llvm.ptr<1> {
// CHECK:         gpu.func @calls(
// CHECK:           func.call @helper(%{{.*}}) {no_inline} : (f32) -> f32
// CHECK:           func.call @inlinable(%{{.*}}) : (!llvm.ptr<1>) -> !llvm.ptr<1>
// CHECK:           gpu.return
kjit.func noinline private @helper(%v: f32) -> f32 {
  %r = arith.mulf %v, %v : f32
  kjit.return %r : f32
}
kjit.func @inlinable(%p: !kjit.ptr<f32>) -> !kjit.ptr<f32> {
  kjit.return %p : !kjit.ptr<f32>
}
kjit.kernel @calls(%x: !kjit.ptr<f32>) {
  %c0 = arith.constant 0 : i32
  %v = kjit.load %x[%c0] : !kjit.ptr<f32>, i32 -> f32
  %r = kjit.call @helper(%v) : (f32) -> f32
  %p = kjit.call @inlinable(%x) : (!kjit.ptr<f32>) -> !kjit.ptr<f32>
  kjit.store %r, %p[%c0] : f32, !kjit.ptr<f32>, i32
  kjit.return
}

// -----

// enable_fp_fusion: float multiplies, adds and subtracts may contract (the
// default); without fusion nothing may, not even what the source allowed.
// CHECK-LABEL: gpu.func @fusion(
// CHECK:         arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK:         arith.addf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK:         arith.subf %{{.*}}, %{{.*}} fastmath<nnan,contract> : f32
// CHECK:         arith.divf %{{.*}}, %{{.*}} : f32
// OPTS-LABEL:  gpu.func @fusion(
// OPTS:          arith.mulf %{{.*}}, %{{.*}} : f32
// OPTS:          arith.addf %{{.*}}, %{{.*}} : f32
// OPTS:          arith.subf %{{.*}}, %{{.*}} fastmath<nnan> : f32
// OPTS:          arith.addf %{{.*}}, %{{.*}} fastmath<reassoc,nnan,ninf,nsz,arcp,afn> : f32
kjit.kernel @fusion(%x: !kjit.ptr<f32>, %a: f32, %b: f32) {
  %c0 = arith.constant 0 : i32
  %m = arith.mulf %a, %b : f32
  %s = arith.addf %m, %b : f32
  %d = arith.subf %s, %a fastmath<nnan> : f32
  %q = arith.divf %d, %a : f32
  %f = arith.addf %q, %a fastmath<fast> : f32
  kjit.store %f, %x[%c0] : f32, !kjit.ptr<f32>, i32
  kjit.return
}

// -----

// Program ids, prints in the host backend's format, asserts (kept by the
// conversion; the pipeline strips them outside debug mode), null pointers,
// workgroup memory moved into the gpu.module and counted, a warp barrier
// (bar.warp.sync of every lane).
// CHECK-LABEL: module attributes {gpu.container_module, kjit.kernel_name = "misc", kjit.shared_bytes = 1024 : i64}
// CHECK:         memref.global "private" @tile : memref<256xf32, #gpu.address_space<workgroup>>
// CHECK:         gpu.func @misc(
// CHECK:           gpu.grid_dim y
// CHECK:           gpu.printf "pid (%u, %u, %u) tid (%u, 0, 0) n=%%d: %lld %g 0x%llx %llu\0A"
// CHECK:           cf.assert %{{.*}}, "n is positive"
// CHECK:           llvm.mlir.zero : !llvm.ptr<1>
// CHECK:           memref.get_global @tile
// CHECK:           gpu.barrier
// CHECK:           %[[LANES:.*]] = arith.constant -1 : i32
// CHECK:           nvvm.bar.warp.sync %[[LANES]] : i32
// CHECK-NOT:     kjit.
memref.global "private" @tile : memref<256xf32, #gpu.address_space<workgroup>>
kjit.kernel @misc(%x: !kjit.ptr<f32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %ny = kjit.num_programs y
  %f = arith.constant 1.5 : f32
  %ok = arith.cmpi sgt, %n, %c0 : i32
  kjit.print "n=%d: " %ny, %f, %x, %ok : i32, f32, !kjit.ptr<f32>, i1
  kjit.assert %ok, "n is positive"
  %null = kjit.null : !kjit.ptr<f32>
  %tile = memref.get_global @tile : memref<256xf32, #gpu.address_space<workgroup>>
  %i0 = arith.constant 0 : index
  %v = memref.load %tile[%i0] : memref<256xf32, #gpu.address_space<workgroup>>
  gpu.barrier
  kjit.warp_barrier
  kjit.store %v, %null[%c0] : f32, !kjit.ptr<f32>, i32
  kjit.return
}

// -----

// Math that is one exact PTX instruction becomes an LLVM intrinsic (so that
// it needs no libdevice) on the types the intrinsics take: a float and a
// 1-D vector. On a 2-D vector the intrinsic would not verify; the operation
// stays for convert-gpu-to-nvvm, which unrolls it (found by fuzzing).
// CHECK-LABEL: kjit.kernel_name = "exact"
// CHECK:         llvm.intr.fabs(%{{.*}}) : (f32) -> f32
// CHECK:         llvm.intr.sqrt(%{{.*}}) : (vector<4xf32>) -> vector<4xf32>
// CHECK:         math.absf %{{.*}} : vector<2x2xf32>
kjit.kernel @exact(%x: !kjit.ptr<f32>) {
  %c0 = arith.constant 0 : i32
  %v = kjit.load %x[%c0] : !kjit.ptr<f32>, i32 -> f32
  %a = math.absf %v : f32
  %b4 = vector.broadcast %a : f32 to vector<4xf32>
  %s4 = math.sqrt %b4 : vector<4xf32>
  %b22 = vector.broadcast %a : f32 to vector<2x2xf32>
  %a22 = math.absf %b22 : vector<2x2xf32>
  %e4 = vector.extract %s4[1] : f32 from vector<4xf32>
  %e22 = vector.extract %a22[0, 1] : f32 from vector<2x2xf32>
  %sum = arith.addf %e4, %e22 : f32
  kjit.store %sum, %x[%c0] : f32, !kjit.ptr<f32>, i32
  kjit.return
}

// -----

// A pointer chosen by `arith.select` is a select of the converted pointers;
// the bit counts become LLVM's intrinsics, defined at zero (no libdevice
// has them); vector.step becomes a constant.
// CHECK-LABEL: kjit.kernel_name = "chosen"
// CHECK:         %[[P:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : !llvm.ptr<1>
// CHECK:         llvm.load %{{.*}} : !llvm.ptr<1> -> i32
// CHECK:         "llvm.intr.ctlz"(%{{.*}}) <{is_zero_poison = false}> : (i32) -> i32
// CHECK:         "llvm.intr.cttz"(%{{.*}}) <{is_zero_poison = false}> : (i32) -> i32
// CHECK:         llvm.intr.ctpop(%{{.*}}) : (vector<4xi32>) -> vector<4xi32>
// CHECK:         arith.constant dense<[0, 1, 2, 3]> : vector<4xindex>
// CHECK-NOT:     vector.step
kjit.kernel @chosen(%x: !kjit.ptr<i32>, %y: !kjit.ptr<i32>, %c: i1) {
  %c0 = arith.constant 0 : i32
  %p = arith.select %c, %x, %y : !kjit.ptr<i32>
  %v = kjit.load %p[%c0] : !kjit.ptr<i32>, i32 -> i32
  %lz = math.ctlz %v : i32
  %tz = math.cttz %lz : i32
  %v4 = vector.broadcast %tz : i32 to vector<4xi32>
  %pop = math.ctpop %v4 : vector<4xi32>
  %step = vector.step : vector<4xindex>
  %lanes = arith.index_cast %step : vector<4xindex> to vector<4xi32>
  %sum = arith.addi %pop, %lanes : vector<4xi32>
  %e = vector.extract %sum[3] : i32 from vector<4xi32>
  kjit.store %e, %x[%c0] : i32, !kjit.ptr<i32>, i32
  kjit.return
}

// -----

// Pointers passed to other blocks: the branches and the block arguments
// take the converted type (found by fuzzing: "failed to legalize 'cf.br'").
// CHECK-LABEL: kjit.kernel_name = "blocks"
// CHECK:         cf.br ^bb1(%{{.*}}, %{{.*}}, %{{.*}} : !llvm.ptr<1>, !llvm.ptr<1>, i32)
// CHECK:       ^bb1(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i32):
// CHECK:         cf.cond_br %{{.*}}, ^bb1({{.*}} : !llvm.ptr<1>, !llvm.ptr<1>, i32), ^bb2({{.*}} : !llvm.ptr<1>)
// CHECK:       ^bb2(%{{.*}}: !llvm.ptr<1>):
kjit.kernel @blocks(%out: !kjit.ptr<i32>, %x: !kjit.ptr<i32>, %y: !kjit.ptr<i32>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  cf.br ^bb1(%x, %y, %c0 : !kjit.ptr<i32>, !kjit.ptr<i32>, i32)
^bb1(%a: !kjit.ptr<i32>, %b: !kjit.ptr<i32>, %i: i32):
  %go = arith.cmpi slt, %i, %n : i32
  %next = arith.addi %i, %c1 : i32
  cf.cond_br %go, ^bb1(%b, %a, %next : !kjit.ptr<i32>, !kjit.ptr<i32>, i32), ^bb2(%a : !kjit.ptr<i32>)
^bb2(%p: !kjit.ptr<i32>):
  %v = kjit.load %p[%c0] : !kjit.ptr<i32>, i32 -> i32
  kjit.store %v, %out[%c0] : i32, !kjit.ptr<i32>, i32
  kjit.return
}
