//===- Registration.cpp - dialects and passes kjit tools load -------------===//

#include "kjit/Compiler/Registration.h"

#include "kjit/Compiler/Target.h"
#include "kjit/Conversion/Passes.h"
#include "kjit/Dialect/Kjit/IR/Kjit.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"

void kjit::registerKjitDialects(mlir::DialectRegistry &registry) {
  registry.insert<kjit::KjitDialect, mlir::arith::ArithDialect,
                  mlir::cf::ControlFlowDialect, mlir::func::FuncDialect,
                  mlir::gpu::GPUDialect, mlir::LLVM::LLVMDialect,
                  mlir::math::MathDialect, mlir::memref::MemRefDialect,
                  mlir::scf::SCFDialect, mlir::ub::UBDialect,
                  mlir::vector::VectorDialect>();
}

void kjit::registerKjitTargetDialects(mlir::DialectRegistry &registry) {
  for (const std::string &name : getRegisteredTargetNames())
    lookupTarget(name)->registerDialects(registry);
}

// Each built-in target's pass registration (lib/Target/<Name>).
namespace kjit {
#define KJIT_TARGET(Name) void register##Name##TargetPasses();
#include "kjit/Target/Targets.inc"
#undef KJIT_TARGET
} // namespace kjit

void kjit::registerKjitConversionPasses() {
#define KJIT_TARGET(Name) register##Name##TargetPasses();
#include "kjit/Target/Targets.inc"
#undef KJIT_TARGET
}
