// The same select in an upstream func.func, outside any kjit function.
func.func private @pick(%c: vector<2xi1>, %a: i32, %b: i32) -> i32 {
  %r = arith.select %c, %a, %b : vector<2xi1>, i32
  return %r : i32
}

kjit.kernel @good(%out: !kjit.ptr<i32>, %a: i32) {
  %c0 = arith.constant 0 : i32
  kjit.store %a, %out[%c0] : i32, !kjit.ptr<i32>, i32
  kjit.return
}
