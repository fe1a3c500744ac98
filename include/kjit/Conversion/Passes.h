//===- Passes.h - kjit conversion passes ------------------------*- C++ -*-===//
//
// Declarations of the passes of Passes.td. As in kjit/Transforms/Passes.h,
// no dialect header belongs here.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_CONVERSION_PASSES_H
#define KJIT_CONVERSION_PASSES_H

#include "mlir/Pass/Pass.h"

namespace kjit {

#define GEN_PASS_DECL
#include "kjit/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kjit/Conversion/Passes.h.inc"

} // namespace kjit

#endif // KJIT_CONVERSION_PASSES_H
