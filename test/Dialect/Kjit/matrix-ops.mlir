// Round trip of the matrix-unit operations and types (docs/MatrixUnits.md):
// the custom form, then the generic form, print back to the same text.
// RUN: kjit-opt %s | kjit-opt | FileCheck %s
// RUN: kjit-opt %s --mlir-print-op-generic | kjit-opt | FileCheck %s

// CHECK-LABEL: kjit.kernel @tiles
// CHECK: %[[DA:.*]] = kjit.tensor_desc %a shape [%M, %K] strides [%sa, %[[ONE:.*]]] : !kjit.ptr<bf16> -> !kjit.tensor_desc<128x64xbf16>
// CHECK: %[[DB:.*]] = kjit.tensor_desc %b shape [%K, %N] strides [%sb, %[[ONE]]] : !kjit.ptr<bf16> -> !kjit.tensor_desc<64x256xbf16>
// CHECK: %[[TA:.*]] = kjit.tile_load %[[DA]][%M, %K] : !kjit.tensor_desc<128x64xbf16> -> !kjit.tile<128x64xbf16>
// CHECK: %[[TB:.*]] = kjit.tile_load %[[DB]][%K, %N] : !kjit.tensor_desc<64x256xbf16> -> !kjit.tile<64x256xbf16>
// CHECK: %[[R:.*]] = kjit.mma %[[TA]][%M], %[[TB]], %{{.*}} : !kjit.tile<128x64xbf16>, !kjit.tile<64x256xbf16>, vector<128xf32>
// CHECK: %{{.*}}, %{{.*}} = kjit.mma_coords n = 256 : vector<128xi32>
// CHECK: kjit.mma_store %[[R]], %c[%M, %N] stride %sc bounds [%M, %N] : vector<128xf32>, !kjit.ptr<bf16>
kjit.kernel @tiles(%a: !kjit.ptr<bf16> {kjit.const}, %b: !kjit.ptr<bf16>,
                   %c: !kjit.ptr<bf16>, %M: i32, %N: i32, %K: i32,
                   %sa: i32, %sb: i32, %sc: i32) {
  %one = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : vector<128xf32>
  %da = kjit.tensor_desc %a shape [%M, %K] strides [%sa, %one]
      : !kjit.ptr<bf16> -> !kjit.tensor_desc<128x64xbf16>
  %db = kjit.tensor_desc %b shape [%K, %N] strides [%sb, %one]
      : !kjit.ptr<bf16> -> !kjit.tensor_desc<64x256xbf16>
  %ta = kjit.tile_load %da[%M, %K]
      : !kjit.tensor_desc<128x64xbf16> -> !kjit.tile<128x64xbf16>
  %tb = kjit.tile_load %db[%K, %N]
      : !kjit.tensor_desc<64x256xbf16> -> !kjit.tile<64x256xbf16>
  %r = kjit.mma %ta[%M], %tb, %zero
      : !kjit.tile<128x64xbf16>, !kjit.tile<64x256xbf16>, vector<128xf32>
  %rows, %cols = kjit.mma_coords n = 256 : vector<128xi32>
  kjit.mma_store %r, %c[%M, %N] stride %sc bounds [%M, %N]
      : vector<128xf32>, !kjit.ptr<bf16>
  kjit.return
}

// CHECK-LABEL: kjit.kernel @half
// CHECK: !kjit.tensor_desc<64x8xf16>
// CHECK: kjit.mma_store %{{.*}} : vector<4xf32>, !kjit.ptr<f32>
kjit.kernel @half(%a: !kjit.ptr<f16>, %c: !kjit.ptr<f32>, %n: i32) {
  %one = arith.constant 1 : i32
  %acc = arith.constant dense<0.0> : vector<4xf32>
  %d = kjit.tensor_desc %a shape [%n, %n] strides [%n, %one]
      : !kjit.ptr<f16> -> !kjit.tensor_desc<64x8xf16>
  kjit.mma_store %acc, %c[%n, %n] stride %n bounds [%n, %n]
      : vector<4xf32>, !kjit.ptr<f32>
  kjit.return
}
