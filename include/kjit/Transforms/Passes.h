//===- Passes.h - kjit passes -----------------------------------*- C++ -*-===//
//
// Declarations of the passes of Passes.td. No dialect header belongs here:
// each pass's .cpp (the one that defines GEN_PASS_DEF_<PASS>) includes the
// dialects its pass depends on, so that the other pass TUs do not pay for
// them (FindDependencies.cpp compiles in about a third of the time).
//
//===----------------------------------------------------------------------===//

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
