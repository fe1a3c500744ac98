//===- StripAsserts.cpp - the kjit-strip-asserts pass ---------------------===//

#include "kjit/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"

namespace kjit {
#define GEN_PASS_DEF_KJITSTRIPASSERTS
#include "kjit/Transforms/Passes.h.inc"
} // namespace kjit

using namespace mlir;

namespace {

/// Whether every thread of every program reaches `op`: it sits in the
/// entry block of a kernel, outside any branch or loop (a device function
/// may be called under a condition).
bool reachedByEveryThread(kjit::AssertOp op) {
  Operation *parent = op->getParentOp();
  return isa<kjit::KernelOp>(parent) &&
         op->getBlock() == &parent->getRegion(0).front();
}

struct StripAssertsPass : kjit::impl::KjitStripAssertsBase<StripAssertsPass> {
  using KjitStripAssertsBase::KjitStripAssertsBase;

  void runOnOperation() override {
    // Erasing needs no rewrite driver: nothing is created, and the values
    // the asserts used are left for canonicalization.
    bool failed = false;
    getOperation().walk([&](kjit::AssertOp op) {
      if (matchPattern(op.getCondition(), m_Zero()) &&
          reachedByEveryThread(op)) {
        op.emitError() << "always fails: its condition is false for this "
                          "specialization (\""
                       << op.getMessage() << "\")";
        failed = true;
        return;
      }
      if (erase)
        op.erase();
    });
    if (failed)
      signalPassFailure();
  }
};

} // namespace
