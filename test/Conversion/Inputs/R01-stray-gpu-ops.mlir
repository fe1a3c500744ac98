// gpu operations outside any kernel or device function (R01).
gpu.barrier
kjit.kernel @k(%n: i32) {
  kjit.return
}
