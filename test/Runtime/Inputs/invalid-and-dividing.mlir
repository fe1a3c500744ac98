kjit.kernel @bad(%out: !kjit.ptr<i32>, %num_warps: i32) {
  kjit.return
}
kjit.kernel @div(%out: !kjit.ptr<i32>, %a: i32, %b: i32) {
  %q = arith.divsi %a, %b : i32
  %c0 = arith.constant 0 : i32
  kjit.store %q, %out[%c0] : i32, !kjit.ptr<i32>, i32
  kjit.return
}
