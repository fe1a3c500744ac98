// A kernel that calls a function nothing defines: the host link refuses it
// (host-link.test).
llvm.func @kjit_test_undefined_symbol(f32) -> f32

kjit.kernel @calls_undefined(%x: !kjit.ptr<f32>) {
  %c0 = arith.constant 0 : i32
  %v = kjit.load %x[%c0] : !kjit.ptr<f32>, i32 -> f32
  %r = llvm.call @kjit_test_undefined_symbol(%v) : (f32) -> f32
  kjit.store %r, %x[%c0] : f32, !kjit.ptr<f32>, i32
  kjit.return
}
