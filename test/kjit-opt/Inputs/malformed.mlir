// A kernel whose parameter lacks its type.
kjit.kernel @k(%x: !kjit.ptr<f32>, %n) {
  kjit.return
}
