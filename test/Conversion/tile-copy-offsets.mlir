// How kjit-lower-matrix addresses a tile copy's steps. A 64 x 16 tile at
// num_warps = 4 is 8 passes of 128 threads, 8 rows apart. Wholly inside
// the matrix, each step's source is the first step's plus the stride times
// 8 x pass, an i32 product sign-extended, computed apart from the other
// steps' sources: no step waits for the one before. The products are exact
// because a stride whose largest one (x 56) could wrap, beyond
// INT32_MAX / 56 = 38347922 either way, makes the whole-tile test fail:
// its row bound (the rows coordinate being the one outside any loop here)
// becomes 0. A tile on the edge masks each step and chains its sources in
// i64 (one stride x 8 added per pass).
// RUN: kjit-opt %s --kjit-lower-matrix=num-warps=4 --canonicalize | FileCheck %s

// CHECK-LABEL: kjit.kernel @copy
// CHECK:      %[[STRIDE:.*]] = arith.extsi %s : i32 to i64
// CHECK-DAG:  %[[BELOW:.*]] = arith.cmpi sle, %s, %c38347922_i32 : i32
// CHECK-DAG:  %[[ABOVE:.*]] = arith.cmpi sge, %s, %c-38347922_i32 : i32
// CHECK:      %[[NARROW:.*]] = arith.andi %[[ABOVE]], %[[BELOW]] : i1
// CHECK:      %[[BOUND:.*]] = arith.select %[[NARROW]], %n, %c0_i32 : i32
// CHECK:      %[[BOUND64:.*]] = arith.extsi %[[BOUND]] : i32 to i64
// CHECK:      arith.cmpi sge, %[[BOUND64]], %{{.*}} : i64
// CHECK:      scf.if
// CHECK:        kjit.load %a[%[[FIRST:[0-9]+]]] : !kjit.ptr<f16>, i64 -> f16
// CHECK:        %[[ROWS8:.*]] = arith.muli %s, %c8_i32 : i32
// CHECK-NEXT:   %[[WIDE8:.*]] = arith.extsi %[[ROWS8]] : i32 to i64
// CHECK-NEXT:   %[[AT8:.*]] = arith.addi %[[FIRST]], %[[WIDE8]] : i64
// CHECK:        kjit.load %a[%[[AT8]]] : !kjit.ptr<f16>, i64 -> f16
// CHECK:        %[[ROWS16:.*]] = arith.muli %s, %c16_i32 : i32
// CHECK-NEXT:   %[[WIDE16:.*]] = arith.extsi %[[ROWS16]] : i32 to i64
// CHECK-NEXT:   %[[AT16:.*]] = arith.addi %[[FIRST]], %[[WIDE16]] : i64
// CHECK:        kjit.load %a[%[[AT16]]] : !kjit.ptr<f16>, i64 -> f16
// CHECK:        %[[ROWS56:.*]] = arith.muli %s, %c56_i32 : i32
// CHECK-NEXT:   %[[WIDE56:.*]] = arith.extsi %[[ROWS56]] : i32 to i64
// CHECK-NEXT:   %[[AT56:.*]] = arith.addi %[[FIRST]], %[[WIDE56]] : i64
// CHECK:        kjit.load %a[%[[AT56]]] : !kjit.ptr<f16>, i64 -> f16
// CHECK:      } else {
// CHECK:        %[[PASS:.*]] = arith.muli %[[STRIDE]], %c8_i64 : i64
// CHECK:        kjit.load %a[%[[MFIRST:[0-9]+]]] mask
// CHECK:        %[[M8:.*]] = arith.addi %[[MFIRST]], %[[PASS]] : i64
// CHECK:        kjit.load %a[%[[M8]]] mask
// CHECK:        %[[M16:.*]] = arith.addi %[[M8]], %[[PASS]] : i64
// CHECK:        kjit.load %a[%[[M16]]] mask
// CHECK:      }
kjit.kernel @copy(%a: !kjit.ptr<f16> {kjit.const}, %c: !kjit.ptr<f16>,
                  %n: i32, %s: i32, %row: i32) {
  %one = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : vector<4xf32>
  %da = kjit.tensor_desc %a shape [%n, %n] strides [%s, %one]
      : !kjit.ptr<f16> -> !kjit.tensor_desc<64x16xf16>
  %db = kjit.tensor_desc %a shape [%n, %n] strides [%s, %one]
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

// In a loop that moves the tile down the rows (B's tiles in a matmul, K
// rows at a time), the column coordinate is the loop-invariant one: the
// stride bound goes to the columns' test, which the loop then does not
// change, and the rows' test keeps `%n`.
// CHECK-LABEL: kjit.kernel @down
// CHECK-DAG:  %[[BELOW:.*]] = arith.cmpi sle, %s, %c38347922_i32 : i32
// CHECK-DAG:  %[[ABOVE:.*]] = arith.cmpi sge, %s, %c-38347922_i32 : i32
// CHECK:      %[[NARROW:.*]] = arith.andi %[[ABOVE]], %[[BELOW]] : i1
// CHECK:      %[[COLUMNS:.*]] = arith.select %[[NARROW]], %n, %c0_i32 : i32
// CHECK:      %[[FIRST:.*]] = arith.extsi %column : i32 to i64
// CHECK:      %[[END:.*]] = arith.addi %[[FIRST]], %c16_i64 : i64
// CHECK:      %[[COLUMNS64:.*]] = arith.extsi %[[COLUMNS]] : i32 to i64
// CHECK:      arith.cmpi sge, %[[COLUMNS64]], %[[END]] : i64
// CHECK:      %[[ROWS64:.*]] = arith.extsi %n : i32 to i64
// CHECK:      arith.cmpi sge, %[[ROWS64]], %{{.*}} : i64
// CHECK:      scf.if
kjit.kernel @down(%a: !kjit.ptr<f16> {kjit.const}, %c: !kjit.ptr<f16>,
                  %n: i32, %s: i32, %column: i32) {
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %step = arith.constant 64 : i32
  %none = arith.constant dense<0.0> : vector<4xf32>
  %da = kjit.tensor_desc %a shape [%n, %n] strides [%s, %one]
      : !kjit.ptr<f16> -> !kjit.tensor_desc<64x16xf16>
  %db = kjit.tensor_desc %a shape [%n, %n] strides [%s, %one]
      : !kjit.ptr<f16> -> !kjit.tensor_desc<16x8xf16>
  %r = scf.for %row = %zero to %n step %step iter_args(%acc = %none)
      -> (vector<4xf32>) : i32 {
    %ta = kjit.tile_load %da[%row, %column]
        : !kjit.tensor_desc<64x16xf16> -> !kjit.tile<64x16xf16>
    %tb = kjit.tile_load %db[%zero, %zero]
        : !kjit.tensor_desc<16x8xf16> -> !kjit.tile<16x8xf16>
    %next = kjit.mma %ta[%zero], %tb, %acc
        : !kjit.tile<64x16xf16>, !kjit.tile<16x8xf16>, vector<4xf32>
    scf.yield %next : vector<4xf32>
  }
  kjit.mma_store %r, %c[%zero, %zero] stride %n bounds [%n, %n]
      : vector<4xf32>, !kjit.ptr<f16>
  kjit.return
}
