// kjit operations under the canonicalizer.
// RUN: kjit-opt %s --canonicalize | FileCheck %s

// An assertion of the constant true can never fail: it goes. One of the
// constant false stays (it fails every time it runs in debug mode), and so
// does one on a value.
// CHECK-LABEL: kjit.kernel @asserts(
// CHECK-SAME:    %[[OK:[^:]*]]: i1
// CHECK-NOT:     "always"
// CHECK:         %[[FALSE:.*]] = arith.constant false
// CHECK:         kjit.assert %[[FALSE]], "never"
// CHECK:         kjit.assert %[[OK]], "depends"
// CHECK-NOT:     "always"
kjit.kernel @asserts(%ok: i1) {
  %true = arith.constant true
  %false = arith.constant false
  kjit.assert %true, "always"
  kjit.assert %false, "never"
  kjit.assert %ok, "depends"
  kjit.return
}
