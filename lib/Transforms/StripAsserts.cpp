//===- StripAsserts.cpp - the kjit-strip-asserts pass ---------------------===//

#include "kjit/Transforms/Passes.h"

namespace kjit {
#define GEN_PASS_DEF_KJITSTRIPASSERTS
#include "kjit/Transforms/Passes.h.inc"
} // namespace kjit

using namespace mlir;

namespace {

struct StripAssertsPass : kjit::impl::KjitStripAssertsBase<StripAssertsPass> {
  using KjitStripAssertsBase::KjitStripAssertsBase;

  void runOnOperation() override {
    // Erasing needs no rewrite driver: nothing is created, and the values
    // the asserts used are left for canonicalization.
    getOperation().walk([](kjit::AssertOp op) { op.erase(); });
  }
};

} // namespace
