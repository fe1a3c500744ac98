//===- ExpandForLLVM.cpp - operations no LLVM lowering takes --------------===//

#include "ExpandForLLVM.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

void kjit::expandForLLVM(ModuleOp module) {
  SmallVector<Operation *> expand;
  module.walk([&](Operation *op) {
    if (isa<arith::CeilDivSIOp, arith::CeilDivUIOp, arith::FloorDivSIOp,
            vector::StepOp, vector::ConstantMaskOp, vector::CreateMaskOp>(op))
      expand.push_back(op);
  });
  // Most kernels have none: then no pattern set is built, which would cost
  // every compile.
  if (expand.empty())
    return;
  RewritePatternSet patterns(module.getContext());
  arith::populateCeilFloorDivExpandOpsPatterns(patterns);
  vector::populateVectorStepLoweringPatterns(patterns);
  vector::populateVectorMaskOpLoweringPatterns(patterns);
  // A 1-D create_mask as a compare of vector.step with the bound, in index
  // lanes: i32 lanes would truncate a bound of 2^32 or more (found by
  // fuzzing: a bound of 2^32 + 1 gave the mask of 1).
  vector::populateVectorMaskMaterializationPatterns(
      patterns, /*force32BitVectorIndices=*/false);
  // Only these operations and what their patterns create: the rest of the
  // kernel is left as it is (no folding, no dead code removed).
  GreedyRewriteConfig config;
  config.enableFolding(false);
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
  // These patterns always converge; an operation left would be refused by
  // the conversion after, with its location.
  (void)applyOpPatternsGreedily(expand, std::move(patterns), config);
}
