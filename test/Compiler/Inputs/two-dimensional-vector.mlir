// Arithmetic on a 2-D vector, which neither target lowers.
kjit.kernel @k(%out: !kjit.ptr<i32>, %a: i32) {
  %c0 = arith.constant 0 : i32
  %v = vector.broadcast %a : i32 to vector<2x4xi32>
  %z = math.ctlz %v : vector<2x4xi32>
  %s = vector.shape_cast %z : vector<2x4xi32> to vector<8xi32>
  %r = vector.reduction <add>, %s : vector<8xi32> into i32
  kjit.store %r, %out[%c0] : i32, !kjit.ptr<i32>, i32
  kjit.return
}
