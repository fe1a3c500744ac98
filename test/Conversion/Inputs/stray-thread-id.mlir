// A thread id query in a func.func: no kjit thread argument to read.
func.func @f() -> index {
  %t = gpu.thread_id x
  return %t : index
}
kjit.kernel @k(%n: i32) {
  kjit.return
}
