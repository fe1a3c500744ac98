// An arith.select with a vector condition and a scalar result, on which
// MLIR 22's own verifier crashes, in one of two kernels.
kjit.kernel @bad(%out: !kjit.ptr<i32>, %a: i32, %flag: i1) {
  %c0 = arith.constant 0 : i32
  %vc = vector.broadcast %flag : i1 to vector<2xi1>
  %r = arith.select %vc, %a, %a : vector<2xi1>, i32
  kjit.store %r, %out[%c0] : i32, !kjit.ptr<i32>, i32
  kjit.return
}

kjit.kernel @good(%out: !kjit.ptr<i32>, %a: i32) {
  %c0 = arith.constant 0 : i32
  kjit.store %a, %out[%c0] : i32, !kjit.ptr<i32>, i32
  kjit.return
}
