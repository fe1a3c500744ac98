// kjit-expand-masks turns masked loads and stores into scf.if around
// unmasked ones; unmasked accesses stay as they are.
// RUN: kjit-opt %s --kjit-expand-masks | FileCheck %s

// A masked load with `other` yields it when the mask is false.
// CHECK-LABEL: kjit.kernel @load_other(
// CHECK-SAME:    %[[X:[^:]*]]: !kjit.ptr<f32>, %[[Y:[^:]*]]: !kjit.ptr<f32>, %[[I:[^:]*]]: i32, %[[M:[^:]*]]: i1, %[[O:[^:]*]]: f32
// CHECK:         %[[V:.*]] = scf.if %[[M]] -> (f32) {
// CHECK-NEXT:      %[[L:.*]] = kjit.load %[[X]][%[[I]]] : !kjit.ptr<f32>, i32 -> f32
// CHECK-NEXT:      scf.yield %[[L]] : f32
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.yield %[[O]] : f32
// CHECK-NEXT:    }
// CHECK:         kjit.store %[[V]], %[[Y]][%[[I]]] : f32, !kjit.ptr<f32>, i32
kjit.kernel @load_other(%x: !kjit.ptr<f32>, %y: !kjit.ptr<f32>, %i: i32,
                        %m: i1, %o: f32) {
  %v = kjit.load %x[%i] mask %m other %o : !kjit.ptr<f32>, i32 -> f32
  kjit.store %v, %y[%i] : f32, !kjit.ptr<f32>, i32
  kjit.return
}

// Without `other`, zero; vectors too.
// CHECK-LABEL: kjit.kernel @load_zero(
// CHECK-SAME:    %[[X:[^:]*]]: !kjit.ptr<f32>, %[[Y:[^:]*]]: !kjit.ptr<f32>, %[[I:[^:]*]]: i32, %[[M:[^:]*]]: i1
// CHECK:         %[[V:.*]] = scf.if %[[M]] -> (vector<4xf32>) {
// CHECK-NEXT:      %[[L:.*]] = kjit.load %[[X]][%[[I]]] : !kjit.ptr<f32>, i32 -> vector<4xf32>
// CHECK-NEXT:      scf.yield %[[L]] : vector<4xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : vector<4xf32>
// CHECK-NEXT:      scf.yield %[[ZERO]] : vector<4xf32>
// CHECK-NEXT:    }
// CHECK:         kjit.store %[[V]], %[[Y]][%[[I]]] : vector<4xf32>, !kjit.ptr<f32>, i32
kjit.kernel @load_zero(%x: !kjit.ptr<f32>, %y: !kjit.ptr<f32>, %i: i32,
                       %m: i1) {
  %v = kjit.load %x[%i] mask %m : !kjit.ptr<f32>, i32 -> vector<4xf32>
  kjit.store %v, %y[%i] : vector<4xf32>, !kjit.ptr<f32>, i32
  kjit.return
}

// A masked store writes only when the mask is true.
// CHECK-LABEL: kjit.func @store(
// CHECK-SAME:    %[[Y:[^:]*]]: !kjit.ptr<i32>, %[[I:[^:]*]]: i32, %[[M:[^:]*]]: i1
// CHECK:         scf.if %[[M]] {
// CHECK-NEXT:      kjit.store %[[I]], %[[Y]][%[[I]]] : i32, !kjit.ptr<i32>, i32
// CHECK-NEXT:    }
// CHECK-NEXT:    kjit.return
kjit.func @store(%y: !kjit.ptr<i32>, %i: i32, %m: i1) {
  kjit.store %i, %y[%i] mask %m : i32, !kjit.ptr<i32>, i32
  kjit.return
}

// Unmasked accesses are left alone.
// CHECK-LABEL: kjit.kernel @unmasked(
// CHECK-NOT:     scf.if
// CHECK:         kjit.load
// CHECK:         kjit.store
kjit.kernel @unmasked(%x: !kjit.ptr<f32>, %i: i32) {
  %v = kjit.load %x[%i] : !kjit.ptr<f32>, i32 -> f32
  kjit.store %v, %x[%i] : f32, !kjit.ptr<f32>, i32
  kjit.return
}
