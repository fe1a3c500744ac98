//===- Passes.h - kjit passes -----------------------------------*- C++ -*-===//

#ifndef KJIT_TRANSFORMS_PASSES_H
#define KJIT_TRANSFORMS_PASSES_H

#include "kjit/Dialect/Kjit/IR/Kjit.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

namespace kjit {

#define GEN_PASS_DECL
#include "kjit/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kjit/Transforms/Passes.h.inc"

} // namespace kjit

#endif // KJIT_TRANSFORMS_PASSES_H
