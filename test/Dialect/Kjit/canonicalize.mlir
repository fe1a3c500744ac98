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

// A constant mask folds. True: the load and the store always happen, so the
// mask goes, and the load's `other` with it. False: the load is `other`, or
// zero (an arith.constant, also of a vector) without one, and the store
// writes nothing and goes. A mask that is not a constant stays.
// CHECK-LABEL: kjit.kernel @masks(
// CHECK-SAME:    %[[P:[^:]*]]: !kjit.ptr<f32>, %[[I:[^:]*]]: i32, %[[M:[^:]*]]: i1, %[[O:[^:]*]]: f32
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG:     %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : vector<4xf32>
// CHECK:         %[[A:.*]] = kjit.load %[[P]][%[[I]]] : !kjit.ptr<f32>, i32 -> f32
// CHECK-NEXT:    %[[B:.*]] = kjit.load %[[P]][%[[I]]] : !kjit.ptr<f32>, i32 -> f32
// CHECK-NEXT:    %[[E:.*]] = kjit.load %[[P]][%[[I]]] mask %[[M]] other %[[O]] : !kjit.ptr<f32>, i32 -> f32
// CHECK-NEXT:    kjit.print "loads" %[[A]], %[[B]], %[[O]], %[[ZERO]], %[[E]] : f32, f32, f32, f32, f32
// CHECK-NEXT:    kjit.store %[[ZEROS]], %[[P]][%[[I]]] : vector<4xf32>, !kjit.ptr<f32>, i32
// CHECK-NEXT:    kjit.store %[[A]], %[[P]][%[[I]]] : f32, !kjit.ptr<f32>, i32
// CHECK-NEXT:    kjit.store %[[B]], %[[P]][%[[I]]] mask %[[M]] : f32, !kjit.ptr<f32>, i32
// CHECK-NEXT:    kjit.return
kjit.kernel @masks(%p: !kjit.ptr<f32>, %i: i32, %m: i1, %o: f32) {
  %true = arith.constant true
  %false = arith.constant false
  %a = kjit.load %p[%i] mask %true : !kjit.ptr<f32>, i32 -> f32
  %b = kjit.load %p[%i] mask %true other %o : !kjit.ptr<f32>, i32 -> f32
  %c = kjit.load %p[%i] mask %false other %o : !kjit.ptr<f32>, i32 -> f32
  %d = kjit.load %p[%i] mask %false : !kjit.ptr<f32>, i32 -> f32
  %v = kjit.load %p[%i] mask %false : !kjit.ptr<f32>, i32 -> vector<4xf32>
  %e = kjit.load %p[%i] mask %m other %o : !kjit.ptr<f32>, i32 -> f32
  kjit.print "loads" %a, %b, %c, %d, %e : f32, f32, f32, f32, f32
  kjit.store %v, %p[%i] : vector<4xf32>, !kjit.ptr<f32>, i32
  kjit.store %a, %p[%i] mask %true : f32, !kjit.ptr<f32>, i32
  kjit.store %b, %p[%i] mask %false : f32, !kjit.ptr<f32>, i32
  kjit.store %b, %p[%i] mask %m : f32, !kjit.ptr<f32>, i32
  kjit.return
}

// A masked-off load whose result nothing reads goes, and no zero is made
// for it.
// CHECK-LABEL: kjit.kernel @unused(
// CHECK-NEXT:    kjit.return
kjit.kernel @unused(%p: !kjit.ptr<i32>, %i: i32) {
  %false = arith.constant false
  %d = kjit.load %p[%i] mask %false : !kjit.ptr<i32>, i32 -> i32
  kjit.return
}
