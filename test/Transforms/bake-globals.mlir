// kjit-bake-globals replaces every global read by the global's current value.
// RUN: kjit-opt %s --kjit-bake-globals --split-input-file | FileCheck %s

kjit.global @SCALE : f32 = 5.000000e-01
kjit.global @N : i32 = 3

// The globals stay; each read becomes a constant of the global's type, in
// kernels and in device functions.
// CHECK-LABEL: kjit.global @SCALE : f32 = 5.000000e-01
// CHECK-LABEL: kjit.func @scale(
// CHECK-SAME:    %[[V:.*]]: f32
// CHECK:         %[[S:.*]] = arith.constant 5.000000e-01 : f32
// CHECK:         %[[R:.*]] = arith.mulf %[[V]], %[[S]] : f32
// CHECK:         kjit.return %[[R]] : f32
kjit.func @scale(%v: f32) -> f32 {
  %s = kjit.get_global @SCALE : f32
  %r = arith.mulf %v, %s : f32
  kjit.return %r : f32
}

// CHECK-LABEL: kjit.kernel @k(
// CHECK-SAME:    %[[X:.*]]: !kjit.ptr<f32>
// CHECK-NOT:     kjit.get_global
// CHECK:         %[[N:.*]] = arith.constant 3 : i32
// CHECK:         kjit.load %[[X]][%[[N]]]
kjit.kernel @k(%x: !kjit.ptr<f32>) {
  %n = kjit.get_global @N : i32
  %v = kjit.load %x[%n] : !kjit.ptr<f32>, i32 -> f32
  %r = kjit.call @scale(%v) : (f32) -> f32
  kjit.store %r, %x[%n] : f32, !kjit.ptr<f32>, i32
  kjit.return
}

// -----

// Nothing else changes: no folding of what the constants feed.
kjit.global @ONE : i32 = 1

// CHECK-LABEL: kjit.kernel @unfolded(
// CHECK-SAME:    %[[N:.*]]: i32
// CHECK:         %[[ONE:.*]] = arith.constant 1 : i32
// CHECK:         %[[M:.*]] = arith.muli %[[N]], %[[ONE]] : i32
// CHECK:         kjit.print "m = " %[[M]] : i32
kjit.kernel @unfolded(%n: i32) {
  %one = kjit.get_global @ONE : i32
  %m = arith.muli %n, %one : i32
  kjit.print "m = " %m : i32
  kjit.return
}
