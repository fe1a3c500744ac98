// kjit-strip-asserts erases device asserts (debug mode keeps them:
// erase=false); what the asserts used is left for canonicalization. An
// assert that every thread reaches and whose condition folded to false is
// an error in both modes; one under a branch, or in a device function, is
// not (it may be an "unreachable" marker); strip-asserts-false.mlir has the
// error.
// RUN: kjit-opt %s --kjit-strip-asserts | FileCheck %s
// RUN: kjit-opt %s --kjit-strip-asserts --canonicalize | FileCheck %s --check-prefix=CANON
// RUN: kjit-opt %s --kjit-strip-asserts=erase=false | FileCheck %s --check-prefix=KEEP

// KEEP-LABEL: kjit.kernel @k(
// KEEP: kjit.assert %{{.*}}, "index out of range"
// CHECK-LABEL: kjit.kernel @k(
// CHECK-SAME:    %[[I:[^:]*]]: i32, %[[N:[^:]*]]: i32
// CHECK:         %[[OK:.*]] = arith.cmpi slt, %[[I]], %[[N]] : i32
// CHECK-NOT:     kjit.assert
// CHECK:         kjit.print "i = " %[[I]] : i32
// CANON-LABEL: kjit.kernel @k(
// CANON-NOT:     arith.cmpi
kjit.kernel @k(%i: i32, %n: i32) {
  %ok = arith.cmpi slt, %i, %n : i32
  kjit.assert %ok, "index out of range"
  kjit.print "i = " %i : i32
  kjit.return
}

// In device functions too.
// CHECK-LABEL: kjit.func @f(
// CHECK-NOT:     kjit.assert
// CHECK:         kjit.return
kjit.func @f(%ok: i1) {
  kjit.assert %ok, "never"
  kjit.return
}

// Under a branch, or in a device function, a false condition is not an
// error: nothing says every thread gets there.
// CHECK-LABEL: kjit.kernel @unreachable(
// CHECK-NOT:     kjit.assert
kjit.kernel @unreachable(%c: i1) {
  scf.if %c {
    %false = arith.constant false
    kjit.assert %false, "unreachable"
  }
  kjit.return
}

// CHECK-LABEL: kjit.func @g(
kjit.func @g() {
  %false = arith.constant false
  kjit.assert %false, "never called"
  kjit.return
}

