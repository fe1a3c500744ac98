// kjit-cuda-lower-matrix's kjit.mma_store: a warpgroup's block wholly
// inside C whose rows are provably 16-byte aligned (base, row stride and
// column multiples of 16 bytes) goes through shared memory: each warp puts
// its 16 pairs of each 64-column slice into its 16 rows of a staging tile
// (64 + 8 columns a row: 4 warps x 16 rows x 72 x 2 bytes = 9216), meets
// at bar.warp.sync, and stores 4 rows of 16-byte pieces; the block on an
// edge keeps the masked stores of pairs. A stride that is only even stores
// pairs without staging.
// RUN: kjit-opt %s --kjit-cuda-lower-matrix="num-warps=4 chip=sm_90a" | FileCheck %s

// CHECK: module attributes {kjit.shared_dynamic_bytes = 9216 : i64}
// CHECK-LABEL: kjit.kernel @staged
// CHECK:          scf.if
// CHECK-COUNT-16:   vector.store {{.*}} : memref<4608xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK:            nvvm.bar.warp.sync
// CHECK-COUNT-4:    kjit.store {{.*}} : vector<8xf16>, !kjit.ptr<f16>, i64
// CHECK:            nvvm.bar.warp.sync
// CHECK-NEXT:     } else {
// CHECK-NOT:        nvvm.bar.warp.sync
// CHECK-COUNT-16:   kjit.store {{.*}} mask {{.*}} : vector<2xf16>, !kjit.ptr<f16>, i64
// CHECK:          }
kjit.kernel @staged(%c: !kjit.ptr<f16> {kjit.divisibility = 16 : i32},
                    %n: i32 {kjit.divisibility = 16 : i32}, %row: i32,
                    %column: i32) {
  %zero = arith.constant dense<0.0> : vector<32xf32>
  %c8 = arith.constant 8 : i32
  %first = arith.muli %column, %c8 : i32
  kjit.mma_store %zero, %c[%row, %first] stride %n bounds [%n, %n]
      : vector<32xf32>, !kjit.ptr<f16>
  kjit.return
}

// CHECK-LABEL: kjit.kernel @pairs_only
// CHECK-NOT:   nvvm.bar.warp.sync
// CHECK:       scf.if
// CHECK-COUNT-16: kjit.store {{.*}} : vector<2xf16>, !kjit.ptr<f16>, i64
// CHECK-NOT:   {{nvvm.bar.warp.sync|vector<8xf16>}}
kjit.kernel @pairs_only(%c: !kjit.ptr<f16> {kjit.divisibility = 16 : i32},
                        %n: i32, %row: i32, %column: i32) {
  %zero = arith.constant dense<0.0> : vector<32xf32>
  %c2 = arith.constant 2 : i32
  %c8 = arith.constant 8 : i32
  %stride = arith.muli %n, %c2 : i32
  %first = arith.muli %column, %c8 : i32
  kjit.mma_store %zero, %c[%row, %first] stride %stride bounds [%stride, %stride]
      : vector<32xf32>, !kjit.ptr<f16>
  kjit.return
}
