//===- FpFusion.cpp - the enable_fp_fusion rule of every lowering ---------===//

#include "FpFusion.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

void kjit::setFpContraction(ModuleOp module, bool fuse) {
  module.walk([&](arith::ArithFastMathInterface op) {
    // Ops whose flags are optional (extf, ...) may have none.
    arith::FastMathFlagsAttr attr = op.getFastMathFlagsAttr();
    arith::FastMathFlags flags =
        attr ? attr.getValue() : arith::FastMathFlags::none;
    bool fusible = isa<arith::MulFOp, arith::AddFOp, arith::SubFOp>(op);
    arith::FastMathFlags wanted = fuse && fusible
                                      ? flags | arith::FastMathFlags::contract
                                      : flags & ~arith::FastMathFlags::contract;
    // `fast` includes contract; without fusion it becomes its other flags.
    if (!fuse && bitEnumContainsAll(flags, arith::FastMathFlags::fast))
      wanted = arith::FastMathFlags::fast & ~arith::FastMathFlags::contract;
    if (wanted != flags)
      op->setAttr(op.getFastMathAttrName(),
                  arith::FastMathFlagsAttr::get(op->getContext(), wanted));
  });
}
