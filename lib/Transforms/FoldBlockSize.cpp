//===- FoldBlockSize.cpp - the kjit-fold-block-size pass ------------------===//

#include "kjit/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace kjit {
#define GEN_PASS_DEF_KJITFOLDBLOCKSIZE
#include "kjit/Transforms/Passes.h.inc"
} // namespace kjit

using namespace mlir;

namespace {

struct FoldBlockSizePass
    : kjit::impl::KjitFoldBlockSizeBase<FoldBlockSizePass> {
  using KjitFoldBlockSizeBase::KjitFoldBlockSizeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(kjit::checkNumWarpsOption(module, getArgument(), numWarps)))
      return signalPassFailure();
    const int64_t threads = 32 * numWarps;
    // Post-order: erasing the operation being visited is safe.
    module.walk([&](Operation *op) {
      std::optional<int64_t> value;
      if (auto dim = dyn_cast<gpu::BlockDimOp>(op))
        value = dim.getDimension() == gpu::Dimension::x ? threads : 1;
      else if (auto tid = dyn_cast<gpu::ThreadIdOp>(op);
               tid && tid.getDimension() != gpu::Dimension::x)
        value = 0;
      if (!value)
        return;
      OpBuilder b(op);
      op->replaceAllUsesWith(
          arith::ConstantIndexOp::create(b, op->getLoc(), *value)
              ->getResults());
      op->erase();
    });
  }
};

} // namespace

LogicalResult kjit::checkNumWarpsOption(Operation *op, StringRef pass,
                                        int64_t numWarps) {
  if (numWarps >= 1 && numWarps <= 32)
    return success();
  return op->emitError() << pass << ": num-warps must be 1 to 32, got "
                         << numWarps;
}
