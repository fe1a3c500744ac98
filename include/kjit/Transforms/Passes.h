//===- Passes.h - kjit passes -----------------------------------*- C++ -*-===//

#ifndef KJIT_TRANSFORMS_PASSES_H
#define KJIT_TRANSFORMS_PASSES_H

#include "kjit/Dialect/Kjit/IR/Kjit.h"

#include "mlir/Pass/Pass.h"

namespace kjit {

#define GEN_PASS_DECL
#include "kjit/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kjit/Transforms/Passes.h.inc"

} // namespace kjit

#endif // KJIT_TRANSFORMS_PASSES_H
