// kjit-find-dependencies attaches each function's record: content hash, key
// and the globals it or its callees read, with the values seen.
// RUN: kjit-opt %s --kjit-find-dependencies | FileCheck %s
// The record is stable: running the pass again changes nothing.
// RUN: kjit-opt %s --kjit-find-dependencies | kjit-opt --kjit-find-dependencies | FileCheck %s

kjit.global @SCALE : f32 = 5.000000e-01
kjit.global @N : i32 = 3
kjit.global @UNUSED : i32 = 0

// CHECK-LABEL: kjit.func noinline @scale(
// CHECK-SAME:    kjit.content_hash = "[[SCALE_CONTENT:[0-9a-f]{64}]]"
// CHECK-SAME:    kjit.key = "[[SCALE_KEY:[0-9a-f]{64}]]"
// CHECK-SAME:    kjit.used_globals = [{name = @SCALE, value = 5.000000e-01 : f32}]
kjit.func noinline @scale(%v: f32) -> f32 {
  %s = kjit.get_global @SCALE : f32
  %r = arith.mulf %v, %s : f32
  kjit.return %r : f32
}

// Globals read through a callee are the caller's too, sorted by name.
// CHECK-LABEL: kjit.kernel @k(
// CHECK-SAME:    kjit.content_hash = "[[K_CONTENT:[0-9a-f]{64}]]"
// CHECK-SAME:    kjit.key = "[[K_KEY:[0-9a-f]{64}]]"
// CHECK-SAME:    kjit.used_globals = [{name = @N, value = 3 : i32}, {name = @SCALE, value = 5.000000e-01 : f32}]
kjit.kernel @k(%x: !kjit.ptr<f32>) {
  %n = kjit.get_global @N : i32
  %v = kjit.load %x[%n] : !kjit.ptr<f32>, i32 -> f32
  %r = kjit.call @scale(%v) : (f32) -> f32
  kjit.store %r, %x[%n] : f32, !kjit.ptr<f32>, i32
  kjit.return
}

// A function that reads no global records an empty list.
// CHECK-LABEL: kjit.kernel @empty(
// CHECK-SAME:    kjit.used_globals = []
kjit.kernel @empty() {
  kjit.return
}

// Globals of a nested module are named by their path from the top module.
// CHECK-LABEL: module @inner
// CHECK:         kjit.func @reads_inner(
// CHECK-SAME:      kjit.used_globals = [{name = @inner::@SCALE, value = 2.000000e+00 : f32}]
module @inner {
  kjit.global @SCALE : f32 = 2.0
  kjit.func @reads_inner() -> f32 {
    %s = kjit.get_global @SCALE : f32
    kjit.return %s : f32
  }
}

// A kernel of the top module reads the nested global by its path: a global
// other than the top module's @SCALE, recorded apart from it.
// CHECK-LABEL: kjit.kernel @reads_both(
// CHECK-SAME:    kjit.used_globals = [{name = @SCALE, value = 5.000000e-01 : f32}, {name = @inner::@SCALE, value = 2.000000e+00 : f32}]
kjit.kernel @reads_both(%y: !kjit.ptr<f32>) {
  %top = kjit.get_global @SCALE : f32
  %nested = kjit.get_global @inner::@SCALE : f32
  %c0 = arith.constant 0 : i32
  %r = arith.addf %top, %nested : f32
  kjit.store %r, %y[%c0] : f32, !kjit.ptr<f32>, i32
  kjit.return
}
