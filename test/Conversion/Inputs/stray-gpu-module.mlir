// A gpu.module of the user's beside the kernel (the cuda path).
gpu.module @mine {
  gpu.func @g() kernel {
    gpu.barrier
    gpu.return
  }
}
kjit.kernel @k(%n: i32) {
  kjit.return
}
