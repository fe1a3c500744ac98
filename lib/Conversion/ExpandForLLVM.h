//===- ExpandForLLVM.h - operations no LLVM lowering takes ------*- C++ -*-===//
//
// Shared by kjit-convert-host-to-llvm and kjit-convert-to-gpu: the
// operations of the kernel IR's dialects that neither target's conversion
// to LLVM lowers directly, rewritten into ones it does, so that a kernel
// that compiles for one target compiles for the other (docs/HostTarget.md and
// docs/CudaTarget.md, "The lowering").
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_CONVERSION_EXPANDFORLLVM_H
#define KJIT_LIB_CONVERSION_EXPANDFORLLVM_H

#include "mlir/IR/BuiltinOps.h"

namespace kjit {

/// Rewrites `arith.ceildivsi`, `arith.ceildivui` and `arith.floordivsi` into
/// plain integer arithmetic, `vector.step` into a constant, and
/// `vector.constant_mask` into a constant and `vector.create_mask` into a
/// compare of the lane indices with the bound. (Upstream's
/// convert-vector-to-llvm pass and arith-expand do the same before their
/// conversions; the patterns here are theirs, applied once.)
void expandForLLVM(mlir::ModuleOp module);

} // namespace kjit

#endif // KJIT_LIB_CONVERSION_EXPANDFORLLVM_H
