// kjit-lower-matrix: tile loads become workgroup buffers filled between two
// barriers, the multiply a loop over K per fragment element, coordinates
// and stores the fragment layout's index formulas.
// RUN: kjit-opt %s --kjit-lower-matrix=num-warps=4 --canonicalize | FileCheck %s
// RUN: not kjit-opt %s --kjit-lower-matrix=num-warps=2 2>&1 | FileCheck %s --check-prefix=WARPS
// RUN: not kjit-opt %s --kjit-lower-matrix=num-warps=64 2>&1 | FileCheck %s --check-prefix=RANGE

// WARPS: lower-matrix.mlir:[[@LINE+45]]:8: error: 'kjit.mma' op needs whole warpgroups: num_warps = 2 is not a multiple of 4
// RANGE: error: kjit-lower-matrix: num-warps must be 1 to 32, got 64

// CHECK-DAG: memref.global "private" @[[$TA:kjit_tile[_0-9]*]] : memref<1024xf16, #gpu.address_space<workgroup>> {alignment = 16 : i64}
// CHECK-DAG: memref.global "private" @[[$TB:kjit_tile[_0-9]*]] : memref<128xf16, #gpu.address_space<workgroup>> {alignment = 16 : i64}
// CHECK-LABEL: kjit.kernel @mma
// CHECK-NOT: kjit.tensor_desc
// CHECK: %[[A:.*]] = memref.get_global @[[$TA]]
// CHECK-NEXT: gpu.barrier
// A tile wholly inside the matrix is copied without masks, one on its edge
// with them; 128 threads take 8 steps each of its 1024 elements, rows 8
// apart.
// CHECK: scf.if %{{.*}} {
// CHECK-NOT: mask
// CHECK-COUNT-8: kjit.load %a[%{{.*}}] : !kjit.ptr<f16>, i64 -> f16
// CHECK-NOT: kjit.load
// CHECK: } else {
// CHECK-COUNT-8: kjit.load %a[%{{.*}}] mask %{{.*}} : !kjit.ptr<f16>, i64 -> f16
// CHECK-NOT: kjit.load
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK: %[[B:.*]] = memref.get_global @[[$TB]]
// CHECK-COUNT-4: scf.for %{{.*}} = %c0 to %c16 step %c1 iter_args
// CHECK: arith.extf
// CHECK-NOT: kjit.mma
// The store: unmasked where the warpgroup's 64 rows and 8 columns lie
// inside C, masked elsewhere.
// CHECK: scf.if %{{.*}} {
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: kjit.store %{{.*}}, %c[%{{.*}}] : f16, !kjit.ptr<f16>, i64
// CHECK: } else {
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: kjit.store %{{.*}}, %c[%{{.*}}] mask %{{.*}} : f16, !kjit.ptr<f16>, i64
kjit.kernel @mma(%a: !kjit.ptr<f16> {kjit.const}, %c: !kjit.ptr<f16>,
                 %n: i32, %row: i32) {
  %one = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : vector<4xf32>
  %da = kjit.tensor_desc %a shape [%n, %n] strides [%n, %one]
      : !kjit.ptr<f16> -> !kjit.tensor_desc<64x16xf16>
  %db = kjit.tensor_desc %a shape [%n, %n] strides [%n, %one]
      : !kjit.ptr<f16> -> !kjit.tensor_desc<16x8xf16>
  %ta = kjit.tile_load %da[%row, %row]
      : !kjit.tensor_desc<64x16xf16> -> !kjit.tile<64x16xf16>
  %tb = kjit.tile_load %db[%row, %row]
      : !kjit.tensor_desc<16x8xf16> -> !kjit.tile<16x8xf16>
  %r = kjit.mma %ta[%row], %tb, %zero
      : !kjit.tile<64x16xf16>, !kjit.tile<16x8xf16>, vector<4xf32>
  kjit.mma_store %r, %c[%row, %row] stride %n bounds [%n, %n]
      : vector<4xf32>, !kjit.ptr<f16>
  kjit.return
}

// CHECK-LABEL: kjit.kernel @coords
// CHECK-DAG: arith.constant dense<[0, 0, 8, 8, 0, 0, 8, 8]> : vector<8xi32>
// CHECK-DAG: arith.constant dense<[0, 1, 0, 1, 8, 9, 8, 9]> : vector<8xi32>
// CHECK: gpu.thread_id x
// CHECK: vector.broadcast
kjit.kernel @coords(%out: !kjit.ptr<i32>) {
  %c0 = arith.constant 0 : i32
  %rows, %cols = kjit.mma_coords n = 16 : vector<8xi32>
  %sum = arith.addi %rows, %cols : vector<8xi32>
  %e = vector.extract %sum[3] : i32 from vector<8xi32>
  kjit.store %e, %out[%c0] : i32, !kjit.ptr<i32>, i32
  kjit.return
}
