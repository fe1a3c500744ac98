// Round trip of every kjit operation and type: the custom form, then the
// generic form, must both print back to the same custom form.
// RUN: kjit-opt %s | kjit-opt | FileCheck %s
// RUN: kjit-opt %s --mlir-print-op-generic | kjit-opt | FileCheck %s

// CHECK: kjit.global @I : i32 = 128
// CHECK: kjit.global @F : f32 = 1.500000e+00
// CHECK: kjit.global @B : i1 = true
// CHECK: kjit.global @W : i64 = -9223372036854775808
kjit.global @I : i32 = 128
kjit.global @F : f32 = 1.5
kjit.global @B : i1 = true
kjit.global @W : i64 = -9223372036854775808

// CHECK-LABEL: kjit.func @identity(%{{.*}}: f32) -> f32 {
// CHECK-NEXT:    kjit.return %{{.*}} : f32
kjit.func @identity(%v: f32) -> f32 {
  kjit.return %v : f32
}

// CHECK-LABEL: kjit.func noinline private @pair(%{{.*}}: i32, %{{.*}}: f32) -> (i32, f32)
kjit.func noinline private @pair(%a: i32, %b: f32) -> (i32, f32) {
  kjit.return %a, %b : i32, f32
}

// CHECK-LABEL: kjit.func noinline @side_effect() {
// CHECK-NEXT:    kjit.return
kjit.func noinline @side_effect() {
  kjit.return
}

// CHECK-LABEL: kjit.kernel @params(
// CHECK-SAME:    %x: !kjit.ptr<f32> {kjit.const},
// CHECK-SAME:    %bits: !kjit.ptr<i1> {kjit.divisibility = 16 : i64},
// CHECK-SAME:    %bytes: !kjit.ptr<ui8> {kjit.do_not_specialize_on_alignment},
// CHECK-SAME:    %halfs: !kjit.ptr<f16> {kjit.signature_type = #kjit.signature<const !kjit.ptr<f16>>},
// CHECK-SAME:    %brains: !kjit.ptr<bf16>,
// CHECK-SAME:    %doubles: !kjit.ptr<f64>,
// CHECK-SAME:    %fp8: !kjit.ptr<f8E4M3FN>,
// CHECK-SAME:    %longs: !kjit.ptr<ui64>,
// CHECK-SAME:    %n: i32 {kjit.do_not_specialize},
// CHECK-SAME:    %flag: i1,
// CHECK-SAME:    %unknown: !kjit.any,
// CHECK-SAME:    %BLOCK: i32 {kjit.constexpr, kjit.default = 1024 : i32},
// CHECK-SAME:    %eps: f32 {kjit.default = 9.99999974E-6 : f32},
// CHECK-SAME:    %bias: !kjit.ptr<f32> {kjit.default},
// CHECK-SAME:    %maybe: !kjit.any {kjit.constexpr, kjit.default = 3 : i64})
// CHECK-SAME:    attributes {note = "kept"} {
kjit.kernel @params(%x: !kjit.ptr<f32> {kjit.const},
                    %bits: !kjit.ptr<i1> {kjit.divisibility = 16},
                    %bytes: !kjit.ptr<ui8> {kjit.do_not_specialize_on_alignment},
                    %halfs: !kjit.ptr<f16> {kjit.signature_type = #kjit.signature<const !kjit.ptr<f16>>},
                    %brains: !kjit.ptr<bf16>,
                    %doubles: !kjit.ptr<f64>,
                    %fp8: !kjit.ptr<f8E4M3FN>,
                    %longs: !kjit.ptr<ui64>,
                    %n: i32 {kjit.do_not_specialize},
                    %flag: i1,
                    %unknown: !kjit.any,
                    %BLOCK: i32 {kjit.constexpr, kjit.default = 1024 : i32},
                    %eps: f32 {kjit.default = 1.0e-5 : f32},
                    %bias: !kjit.ptr<f32> {kjit.default},
                    %maybe: !kjit.any {kjit.constexpr, kjit.default = 3 : i64})
    attributes {note = "kept"} {
  // CHECK: kjit.cast %unknown : !kjit.any to i64
  // CHECK: kjit.cast %unknown : !kjit.any to !kjit.ptr<f32>
  %as_int = kjit.cast %unknown : !kjit.any to i64
  %as_ptr = kjit.cast %unknown : !kjit.any to !kjit.ptr<f32>
  kjit.return
}

// CHECK-LABEL: kjit.kernel @body(
kjit.kernel @body(%x: !kjit.ptr<f32> {kjit.const}, %bytes: !kjit.ptr<ui8>,
                  %out: !kjit.ptr<f32>, %i: i32, %m: i1) {
  // CHECK: %[[J:.*]] = arith.index_cast %i : i32 to index
  %j = arith.index_cast %i : i32 to index
  // CHECK: kjit.program_id x
  // CHECK: kjit.program_id y
  // CHECK: kjit.program_id z
  // CHECK: kjit.num_programs x
  // CHECK: kjit.num_programs y
  // CHECK: kjit.num_programs z
  %px = kjit.program_id x
  %py = kjit.program_id y
  %pz = kjit.program_id z
  %nx = kjit.num_programs x
  %ny = kjit.num_programs y
  %nz = kjit.num_programs z
  // CHECK: kjit.warp_barrier{{$}}
  kjit.warp_barrier
  // CHECK: kjit.null : !kjit.ptr<f16>
  %null = kjit.null : !kjit.ptr<f16>
  // CHECK: %[[G:.*]] = kjit.get_global @I : i32
  %g = kjit.get_global @I : i32
  // CHECK: kjit.get_global @B : i1
  %b = kjit.get_global @B : i1
  // A global of a nested module, named by its path.
  // CHECK: kjit.get_global @lib::@I : i32
  %nested = kjit.get_global @lib::@I : i32

  // CHECK: %[[S:.*]] = kjit.load %x[%i] : !kjit.ptr<f32>, i32 -> f32
  // CHECK: kjit.load %x[%[[J]]] mask %m : !kjit.ptr<f32>, index -> f32
  // CHECK: kjit.load %x[%i] mask %m other %[[S]] : !kjit.ptr<f32>, i32 -> f32
  // CHECK: %[[V:.*]] = kjit.load %x[%i] mask %m : !kjit.ptr<f32>, i32 -> vector<4xf32>
  // CHECK: kjit.load %x[%i] : !kjit.ptr<f32>, i32 -> vector<2xf32>
  // CHECK: kjit.load %bytes[%i] : !kjit.ptr<ui8>, i32 -> vector<16xi8>
  %s = kjit.load %x[%i] : !kjit.ptr<f32>, i32 -> f32
  %s2 = kjit.load %x[%j] mask %m : !kjit.ptr<f32>, index -> f32
  %s3 = kjit.load %x[%i] mask %m other %s : !kjit.ptr<f32>, i32 -> f32
  %v = kjit.load %x[%i] mask %m : !kjit.ptr<f32>, i32 -> vector<4xf32>
  %v2 = kjit.load %x[%i] : !kjit.ptr<f32>, i32 -> vector<2xf32>
  %v16 = kjit.load %bytes[%i] : !kjit.ptr<ui8>, i32 -> vector<16xi8>

  // CHECK: kjit.store %[[S]], %out[%i] : f32, !kjit.ptr<f32>, i32
  // CHECK: kjit.store %[[V]], %out[%[[G]]] mask %m : vector<4xf32>, !kjit.ptr<f32>, i32
  kjit.store %s, %out[%i] : f32, !kjit.ptr<f32>, i32
  kjit.store %v, %out[%g] mask %m : vector<4xf32>, !kjit.ptr<f32>, i32

  // CHECK: kjit.call @identity(%[[S]]) : (f32) -> f32
  // CHECK: kjit.call @pair(%i, %{{.*}}) : (i32, f32) -> (i32, f32)
  // CHECK: kjit.call @side_effect() : () -> ()
  %r = kjit.call @identity(%s) : (f32) -> f32
  %p:2 = kjit.call @pair(%i, %r) : (i32, f32) -> (i32, f32)
  kjit.call @side_effect() : () -> ()

  // CHECK: kjit.print "value: " %i, %[[S]], %[[J]], %x : i32, f32, index, !kjit.ptr<f32>
  // CHECK: kjit.print "tick"
  // CHECK: kjit.assert %m, "m must hold"
  kjit.print "value: " %i, %s, %j, %x : i32, f32, index, !kjit.ptr<f32>
  kjit.print "tick"
  kjit.assert %m, "m must hold"
  kjit.return
}

// Kernels also take multi-block bodies (cf).
// CHECK-LABEL: kjit.kernel @branches(
// CHECK:         cf.cond_br %c, ^bb1, ^bb2
kjit.kernel @branches(%c: i1) {
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  kjit.return
^bb2:
  kjit.return
}

// CHECK: module @lib {
// CHECK-NEXT: kjit.global @I : i32 = 7
module @lib {
  kjit.global @I : i32 = 7
}

// ub.poison before any arith operation: the ub dialect is registered for
// itself, not only loaded with arith (found by fuzzing: kjit-opt said
// "Dialect 'ub' not found" where the runtime parsed it).
// CHECK-LABEL: kjit.kernel @poison(
// CHECK:         %[[P:.*]] = ub.poison : i32
// CHECK:         kjit.store %[[P]]
kjit.kernel @poison(%out: !kjit.ptr<i32>) {
  %p = ub.poison : i32
  %c0 = arith.constant 0 : i32
  kjit.store %p, %out[%c0] : i32, !kjit.ptr<i32>, i32
  kjit.return
}
