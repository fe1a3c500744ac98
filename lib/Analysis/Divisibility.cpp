//===- Divisibility.cpp - what specialization proves about values ---------===//
//
// The powers of two that constants, `D`-specialized kernel parameters and
// arithmetic on them are known to be multiples of: the cuda lowering's
// access alignment and the matrix lowering's choice of wide copies and
// stores read the same facts.
//
//===----------------------------------------------------------------------===//

#include "kjit/Analysis/Divisibility.h"

#include "kjit/Dialect/Kjit/IR/Kjit.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"

#include <algorithm>

using namespace mlir;
using namespace kjit;

uint64_t kjit::knownDivisor(Value value, unsigned depth) {
  if (depth > 16)
    return 1;
  auto recurse = [&](Value v) { return knownDivisor(v, depth + 1); };
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    Operation *owner = arg.getOwner()->getParentOp();
    if (auto kernel = dyn_cast<KernelOp>(owner)) {
      if (!arg.getOwner()->isEntryBlock())
        return 1;
      auto divisor = kernel.getArgAttrOfType<IntegerAttr>(
          arg.getArgNumber(), KjitDialect::kDivisibilityAttrName);
      return divisor ? std::min<uint64_t>(divisor.getInt(), kMaxDivisor) : 1;
    }
    if (auto loop = dyn_cast<scf::ForOp>(owner))
      if (value == loop.getInductionVar())
        return std::min(recurse(loop.getLowerBound()), recurse(loop.getStep()));
    return 1;
  }
  APInt constant;
  if (matchPattern(value, m_ConstantInt(&constant))) {
    if (constant.isZero())
      return kMaxDivisor;
    return std::min<uint64_t>(uint64_t(1) << constant.countr_zero(),
                              kMaxDivisor);
  }
  Operation *def = value.getDefiningOp();
  if (!def)
    return 1;
  if (isa<arith::MulIOp>(def))
    return std::min(kMaxDivisor,
                    recurse(def->getOperand(0)) * recurse(def->getOperand(1)));
  if (isa<arith::AddIOp, arith::SubIOp>(def))
    return std::min(recurse(def->getOperand(0)), recurse(def->getOperand(1)));
  if (isa<arith::ShLIOp>(def)) {
    APInt shift;
    if (!matchPattern(def->getOperand(1), m_ConstantInt(&shift)) ||
        shift.getZExtValue() >= 16)
      return 1;
    return std::min(kMaxDivisor, recurse(def->getOperand(0))
                                     << shift.getZExtValue());
  }
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
          arith::ExtUIOp, arith::TruncIOp>(def))
    return recurse(def->getOperand(0));
  if (auto select = dyn_cast<arith::SelectOp>(def))
    return std::min(recurse(select.getTrueValue()),
                    recurse(select.getFalseValue()));
  return 1;
}
