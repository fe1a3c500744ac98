// What kjit-convert-host-to-llvm refuses, each with the pass that should have
// run first.
// RUN: kjit-opt %s --split-input-file --verify-diagnostics --kjit-convert-host-to-llvm

kjit.kernel @masked_load(%x: !kjit.ptr<f32>, %i: i32, %m: i1) {
  // expected-error @below {{masked 'kjit.load' reaches the host lowering; run kjit-expand-masks first}}
  %v = kjit.load %x[%i] mask %m : !kjit.ptr<f32>, i32 -> f32
  kjit.store %v, %x[%i] : f32, !kjit.ptr<f32>, i32
  kjit.return
}

// -----

kjit.kernel @masked_store(%x: !kjit.ptr<f32>, %i: i32, %m: i1, %v: f32) {
  // expected-error @below {{masked 'kjit.store' reaches the host lowering; run kjit-expand-masks first}}
  kjit.store %v, %x[%i] mask %m : f32, !kjit.ptr<f32>, i32
  kjit.return
}

// -----

kjit.global @SCALE : f32 = 5.000000e-01

kjit.func @scale(%v: f32) -> f32 {
  // expected-error @below {{'kjit.get_global' of @SCALE reaches the host lowering; run kjit-bake-globals first}}
  %s = kjit.get_global @SCALE : f32
  %r = arith.mulf %v, %s : f32
  kjit.return %r : f32
}

// -----

kjit.kernel @cast(%a: !kjit.any) {
  // expected-error @below {{parameter 'a' of '@cast' has no type yet; run kjit-specialize first}}
  %f = kjit.cast %a : !kjit.any to f32
  kjit.print "a = " %f : f32
  kjit.return
}

// -----

// expected-error @below {{parameter 'a' of '@unused_any' has no type yet; run kjit-specialize first}}
kjit.kernel @unused_any(%a: !kjit.any) {
  kjit.return
}

// -----

// expected-error @below {{parameter 'BLOCK' of '@constexpr' is constexpr but has no value yet; run kjit-specialize first}}
kjit.kernel @constexpr(%BLOCK: i32 {kjit.constexpr}) {
  kjit.return
}

// -----

func.func @stray() -> i32 {
  // expected-error @below {{'kjit.program_id' can only be lowered inside a kjit.kernel or kjit.func}}
  %p = kjit.program_id x
  return %p : i32
}
