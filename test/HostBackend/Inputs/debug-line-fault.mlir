// A store through a pointer passed on to a device function (not bounds-checked there) far outside its buffer: SIGSEGV on line 4.
kjit.func noinline @poke(%p: !kjit.ptr<i32>, %at: i32) {
  %v = arith.constant 1 : i32
  kjit.store %v, %p[%at] : i32, !kjit.ptr<i32>, i32
  kjit.return
}
kjit.kernel @k(%out: !kjit.ptr<i32>, %at: i32) {
  kjit.call @poke(%out, %at) : (!kjit.ptr<i32>, i32) -> ()
  kjit.return
}
