//===- BakeGlobals.cpp - the kjit-bake-globals pass -----------------------===//

#include "kjit/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kjit {
#define GEN_PASS_DEF_KJITBAKEGLOBALS
#include "kjit/Transforms/Passes.h.inc"
} // namespace kjit

using namespace mlir;

namespace {

/// kjit.get_global @G -> arith.constant <value of @G>.
struct BakeGlobalRead : OpRewritePattern<kjit::GetGlobalOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(kjit::GetGlobalOp read,
                                PatternRewriter &rewriter) const override {
    // The op's symbol verifier guarantees the global exists and has the
    // read's type.
    auto global = SymbolTable::lookupNearestSymbolFrom<kjit::GlobalOp>(
        read, read.getGlobalAttr());
    if (!global)
      return rewriter.notifyMatchFailure(read, "no such global");
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(read, global.getValue());
    return success();
  }
};

struct BakeGlobalsPass : kjit::impl::KjitBakeGlobalsBase<BakeGlobalsPass> {
  using KjitBakeGlobalsBase::KjitBakeGlobalsBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<BakeGlobalRead>(&getContext());
    // Only the rewrite: no folding, no region simplification.
    GreedyRewriteConfig config;
    config.enableFolding(false).enableConstantCSE(false);
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
  }
};

} // namespace
