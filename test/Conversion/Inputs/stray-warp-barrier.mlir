// A warp barrier outside any kernel or device function.
kjit.warp_barrier
kjit.kernel @k() {
  kjit.return
}
