// kjit-serialize-to-ptx, the cuda pipeline's last step, on its own: a
// gpu.module with one #nvvm.target becomes a gpu.binary holding its PTX.
// The runtime's compile does not verify after every pass (docs/Runtime.md,
// "Verification"), so the serializer verifies the gpu.module itself: LLVM's
// translation never sees invalid IR.
// RUN: kjit-opt %S/Inputs/store-one-gpu-module.mlir --kjit-serialize-to-ptx \
// RUN:   | FileCheck %s --check-prefix=PTX
// PTX: gpu.binary @kjit_device
// PTX-SAME: .visible .entry store_one
// PTX-SAME: st.global.b32

// A gpu.module without a target (this file):
// RUN: kjit-opt %s --verify-diagnostics --kjit-serialize-to-ptx

// Invalid IR reaches the pass only with every other check off.
// RUN: not kjit-opt %S/Inputs/invalid-gpu-module.mlir \
// RUN:   --mlir-very-unsafe-disable-verifier-on-parsing --verify-each=false \
// RUN:   --kjit-serialize-to-ptx 2>&1 | FileCheck %s --check-prefix=INVALID
// INVALID: invalid-gpu-module.mlir:5:7: error: 'llvm.return' op expected 1 operand
// INVALID: invalid-gpu-module.mlir:3:3: error: kjit-serialize-to-ptx: the gpu.module is not valid IR (the errors above); nothing was translated
// INVALID-NOT: gpu.binary

module attributes {gpu.container_module} {
  // expected-error @below {{kjit-serialize-to-ptx needs a gpu.module with one #nvvm.target attached}}
  gpu.module @kjit_device {
    llvm.func @k() attributes {nvvm.kernel} {
      llvm.return
    }
  }
}
