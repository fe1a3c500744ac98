// A kernel whose name is no identifier: MLIR takes any quoted symbol, a PTX
// entry name does not (nor does the host backend's symbol). A device
// function's name may be anything: NVPTX renames it.
kjit.func private @"square.v2"(%v: f32) -> f32 attributes {noinline} {
  %r = arith.mulf %v, %v : f32
  kjit.return %r : f32
}
kjit.kernel @"add.v2"(%x: !kjit.ptr<f32>) {
  %c0 = arith.constant 0 : i32
  %v = kjit.load %x[%c0] : !kjit.ptr<f32>, i32 -> f32
  %w = kjit.call @"square.v2"(%v) : (f32) -> f32
  kjit.store %w, %x[%c0] : f32, !kjit.ptr<f32>, i32
  kjit.return
}
