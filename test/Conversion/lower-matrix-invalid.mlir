// A tile load must read a descriptor made in its own function: the lowering
// needs the pointer, shape and strides behind it.
// RUN: not kjit-opt %s --kjit-lower-matrix 2>&1 | FileCheck %s

// CHECK: lower-matrix-invalid.mlir:[[@LINE+3]]:8: error: 'kjit.tile_load' op reads a descriptor that no kjit.tensor_desc of this function made
kjit.func @load(%d: !kjit.tensor_desc<64x16xf16>, %n: i32) {
  %acc = arith.constant dense<0.0> : vector<4xf32>
  %t = kjit.tile_load %d[%n, %n] : !kjit.tensor_desc<64x16xf16> -> !kjit.tile<64x16xf16>
  kjit.return
}
