// kjit-strip-asserts erases device asserts (debug mode keeps them by not
// running it); what the asserts used is left for canonicalization.
// RUN: kjit-opt %s --kjit-strip-asserts | FileCheck %s
// RUN: kjit-opt %s --kjit-strip-asserts --canonicalize | FileCheck %s --check-prefix=CANON

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
