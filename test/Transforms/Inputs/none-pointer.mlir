// None for pointers that a kernel may or may not dereference.

// @bias reads `b` only when HAS_BIAS: with HAS_BIAS false the branch folds
// away, and None for `b` is fine.
kjit.kernel @bias(%out: !kjit.ptr<f32>, %b: !kjit.ptr<f32>,
                  %HAS_BIAS: i1 {kjit.constexpr}) {
  %c0 = arith.constant 0 : i32
  %one = arith.constant 1.0 : f32
  %v = scf.if %HAS_BIAS -> (f32) {
    %l = kjit.load %b[%c0] : !kjit.ptr<f32>, i32 -> f32
    scf.yield %l : f32
  } else {
    scf.yield %one : f32
  }
  kjit.store %v, %out[%c0] : f32, !kjit.ptr<f32>, i32
  kjit.return
}

// @indirect hands `p` to a device function that stores through it.
kjit.func noinline @put(%q: !kjit.ptr<i32>, %v: i32) {
  %c0 = arith.constant 0 : i32
  kjit.store %v, %q[%c0] : i32, !kjit.ptr<i32>, i32
  kjit.return
}
kjit.kernel @indirect(%p: !kjit.ptr<i32>) {
  %c7 = arith.constant 7 : i32
  kjit.call @put(%p, %c7) : (!kjit.ptr<i32>, i32) -> ()
  kjit.return
}
