//===- FpFusion.h - the enable_fp_fusion rule of every lowering -*- C++ -*-===//
//
// Shared by kjit-convert-host-to-llvm and kjit-convert-to-gpu so that the
// launch option means the same on every target (docs/HostTarget.md,
// docs/CudaTarget.md).
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_CONVERSION_FPFUSION_H
#define KJIT_LIB_CONVERSION_FPFUSION_H

#include "mlir/IR/BuiltinOps.h"

namespace kjit {

/// With `fuse`, float `arith.mulf`/`addf`/`subf` get `fastmath<contract>`, so
/// that LLVM may fuse a multiply and an add into one rounding (an FMA); without
/// it no arith operation keeps `contract` (nor `fast`, which includes it), so
/// nothing may fuse. An explicit `math.fma` is an FMA either way.
void setFpContraction(mlir::ModuleOp module, bool fuse);

} // namespace kjit

#endif // KJIT_LIB_CONVERSION_FPFUSION_H
