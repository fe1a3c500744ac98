//===- HookPasses.h - passes that call the loaded plugins -------*- C++ -*-===//
//
// The passes of HookPasses.td. Only tools include this (kjit-opt, the
// mlir-opt plugin); libkjit-compiler does not contain these passes.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_HOOKPASSES_HOOKPASSES_H
#define KJIT_LIB_HOOKPASSES_HOOKPASSES_H

#include "mlir/Pass/Pass.h"

namespace kjit {

#define GEN_PASS_DECL
#include "HookPasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "HookPasses.h.inc"

} // namespace kjit

#endif // KJIT_LIB_HOOKPASSES_HOOKPASSES_H
