// kjit.mma_store, in kjit-cuda-lower-matrix and in the portable
// kjit-lower-matrix alike: a warpgroup's block wholly inside C whose rows
// are provably 16-byte aligned (base, row stride and column multiples of
// 16 bytes) goes through workgroup memory: each warp puts its 16 pairs of
// each 64-column slice into its 16 rows of a staging tile (64 + 8 columns
// a row: 4 warps x 16 rows x 72 x 2 bytes = 9216), meets at
// kjit.warp_barrier, and stores 4 rows of 16-byte pieces; the block on an
// edge keeps the masked stores of pairs. A stride that is only even stores
// pairs without staging.
// RUN: kjit-opt %s --kjit-cuda-lower-matrix="num-warps=4 chip=sm_90a" | FileCheck %s
// RUN: kjit-opt %s --kjit-lower-matrix=num-warps=4 | FileCheck %s --check-prefix=PORTABLE

// PORTABLE:          memref.global "private" @kjit_tile : memref<4608xf16, #gpu.address_space<workgroup>>
// PORTABLE-LABEL:    kjit.kernel @staged
// PORTABLE:            scf.if
// PORTABLE-COUNT-16:     vector.store {{.*}} : memref<4608xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// PORTABLE:              kjit.warp_barrier
// PORTABLE-COUNT-4:      kjit.store {{.*}} : vector<8xf16>, !kjit.ptr<f16>, i64
// PORTABLE:              kjit.warp_barrier
// PORTABLE-NEXT:       } else {
// PORTABLE-NOT:          kjit.warp_barrier
// PORTABLE-COUNT-16:     kjit.store {{.*}} mask {{.*}} : vector<2xf16>, !kjit.ptr<f16>, i64
// PORTABLE:            }

// CHECK: module attributes {kjit.shared_dynamic_bytes = 9216 : i64}
// CHECK-LABEL: kjit.kernel @staged
// CHECK:          scf.if
// CHECK-COUNT-16:   vector.store {{.*}} : memref<4608xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK:            kjit.warp_barrier
// CHECK-COUNT-4:    kjit.store {{.*}} : vector<8xf16>, !kjit.ptr<f16>, i64
// CHECK:            kjit.warp_barrier
// CHECK-NEXT:     } else {
// CHECK-NOT:        kjit.warp_barrier
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
// CHECK-NOT:   kjit.warp_barrier
// CHECK:       scf.if
// CHECK-COUNT-16: kjit.store {{.*}} : vector<2xf16>, !kjit.ptr<f16>, i64
// CHECK-NOT:   {{kjit.warp_barrier|vector<8xf16>}}
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
