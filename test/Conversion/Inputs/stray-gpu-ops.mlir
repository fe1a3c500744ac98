// gpu operations outside any kernel or device function.
gpu.barrier
kjit.kernel @k(%n: i32) {
  kjit.return
}
