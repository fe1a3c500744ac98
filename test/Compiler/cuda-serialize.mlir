// kjit-serialize-to-ptx, the cuda pipeline's last step, on its own: a
// gpu.module with one #nvvm.target becomes a gpu.binary holding its PTX.
// The runtime's compile does not verify after every pass (docs/Runtime.md,
// "Verification"), so the serializer verifies the gpu.module itself: LLVM's
// translation never sees invalid IR.
// RUN: kjit-opt %s --split-input-file --verify-diagnostics --kjit-serialize-to-ptx | FileCheck %s
// Invalid IR reaches the pass only with every other check off.
// RUN: not kjit-opt %S/Inputs/invalid-gpu-module.mlir \
// RUN:   --mlir-very-unsafe-disable-verifier-on-parsing --verify-each=false \
// RUN:   --kjit-serialize-to-ptx 2>&1 | FileCheck %s --check-prefix=INVALID

// CHECK: gpu.binary @kjit_device
// CHECK-SAME: .visible .entry store_one
// CHECK-SAME: st.global.b32
module attributes {gpu.container_module} {
  gpu.module @kjit_device [#nvvm.target<chip = "sm_90", features = "+ptx80">] {
    llvm.func @store_one(%p: !llvm.ptr) attributes {nvvm.kernel} {
      %one = llvm.mlir.constant(1.0 : f32) : f32
      llvm.store %one, %p : f32, !llvm.ptr
      llvm.return
    }
  }
}

// -----

// CHECK-NOT: gpu.binary
module attributes {gpu.container_module} {
  // expected-error @below {{kjit-serialize-to-ptx needs a gpu.module with one #nvvm.target attached}}
  gpu.module @kjit_device {
    llvm.func @k() attributes {nvvm.kernel} {
      llvm.return
    }
  }
}

// INVALID: invalid-gpu-module.mlir:5:7: error: 'llvm.return' op expected 1 operand
// INVALID: invalid-gpu-module.mlir:3:3: error: kjit-serialize-to-ptx: the gpu.module is not valid IR (the errors above); nothing was translated
// INVALID-NOT: gpu.binary
