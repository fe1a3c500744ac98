//===- Passes.h - the host target's passes ----------------------*- C++ -*-===//
//
// Declarations of the passes of Passes.td (kjit-convert-host-to-llvm). As in
// kjit/Transforms/Passes.h, no dialect header belongs here.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_TARGET_HOST_PASSES_H
#define KJIT_TARGET_HOST_PASSES_H

#include "mlir/Pass/Pass.h"

namespace kjit {

#define GEN_PASS_DECL
#include "kjit/Target/Host/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kjit/Target/Host/Passes.h.inc"

} // namespace kjit

#endif // KJIT_TARGET_HOST_PASSES_H
