//===- Passes.h - the cuda target's passes ----------------------*- C++ -*-===//
//
// Declarations of the passes of Passes.td (kjit-convert-to-gpu and
// kjit-finalize-nvvm). As in kjit/Transforms/Passes.h, no dialect header
// belongs here.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_TARGET_CUDA_PASSES_H
#define KJIT_TARGET_CUDA_PASSES_H

#include "mlir/Pass/Pass.h"

namespace kjit {

#define GEN_PASS_DECL
#include "kjit/Target/Cuda/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kjit/Target/Cuda/Passes.h.inc"

} // namespace kjit

#endif // KJIT_TARGET_CUDA_PASSES_H
