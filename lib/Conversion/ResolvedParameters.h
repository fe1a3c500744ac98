//===- ResolvedParameters.h - what every lowering needs bound ---*- C++ -*-===//
//
// Shared by kjit-convert-host-to-llvm and kjit-convert-to-gpu: a kernel
// reaches a lowering only once kjit-specialize has resolved every parameter,
// and both refuse one that has not with the same message.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_CONVERSION_RESOLVEDPARAMETERS_H
#define KJIT_LIB_CONVERSION_RESOLVEDPARAMETERS_H

#include "mlir/Support/LLVM.h"

namespace kjit {

class KernelOp;

/// An error on `kernel` naming its first parameter that is a constexpr
/// without its value or has no type yet, and kjit-specialize as the pass
/// that resolves it; success when there is none.
mlir::LogicalResult checkParametersResolved(KernelOp kernel);

} // namespace kjit

#endif // KJIT_LIB_CONVERSION_RESOLVEDPARAMETERS_H
