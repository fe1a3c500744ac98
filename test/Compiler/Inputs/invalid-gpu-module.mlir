// A function that returns nothing where it promises an i32 (cuda-serialize.mlir).
module attributes {gpu.container_module} {
  gpu.module @kjit_device [#nvvm.target<chip = "sm_90", features = "+ptx80">] {
    llvm.func @k() -> i32 {
      llvm.return
    }
  }
}
