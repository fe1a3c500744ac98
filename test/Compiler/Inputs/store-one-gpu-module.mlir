// A gpu.module ready for kjit-serialize-to-ptx: one kernel that stores 1.0
// (test/mlir-opt/plugin.test).
module attributes {gpu.container_module} {
  gpu.module @kjit_device [#nvvm.target<chip = "sm_90", features = "+ptx80">] {
    llvm.func @store_one(%p: !llvm.ptr) attributes {nvvm.kernel} {
      %one = llvm.mlir.constant(1.0 : f32) : f32
      llvm.store %one, %p : f32, !llvm.ptr
      llvm.return
    }
  }
}
