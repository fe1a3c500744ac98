//===- ExpandMasks.cpp - the kjit-expand-masks pass -----------------------===//

#include "kjit/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kjit {
#define GEN_PASS_DEF_KJITEXPANDMASKS
#include "kjit/Transforms/Passes.h.inc"
} // namespace kjit

using namespace mlir;

namespace {

/// %v = kjit.load %p[%i] mask %m [other %o]
///   -> %v = scf.if %m { kjit.load %p[%i] } else { %o or zero }
struct ExpandMaskedLoad : OpRewritePattern<kjit::LoadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(kjit::LoadOp load,
                                PatternRewriter &rewriter) const override {
    Value mask = load.getMask();
    if (!mask)
      return rewriter.notifyMatchFailure(load, "not masked");
    Location loc = load.getLoc();
    Type type = load.getType();
    Value other = load.getOther();
    TypedAttr zero;
    if (!other) {
      zero = dyn_cast_or_null<TypedAttr>(rewriter.getZeroAttr(type));
      if (!zero)
        return rewriter.notifyMatchFailure(load, "no zero of the result type");
    }
    auto branch =
        scf::IfOp::create(rewriter, loc, type, mask, /*withElseRegion=*/true);
    rewriter.setInsertionPointToStart(branch.thenBlock());
    Value loaded = kjit::LoadOp::create(rewriter, loc, type, load.getBase(),
                                        load.getOffset(), Value(), Value());
    scf::YieldOp::create(rewriter, loc, loaded);
    rewriter.setInsertionPointToStart(branch.elseBlock());
    if (!other)
      other = arith::ConstantOp::create(rewriter, loc, zero);
    scf::YieldOp::create(rewriter, loc, other);
    rewriter.replaceOp(load, branch.getResults());
    return success();
  }
};

/// kjit.store %v, %p[%i] mask %m -> scf.if %m { kjit.store %v, %p[%i] }
struct ExpandMaskedStore : OpRewritePattern<kjit::StoreOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(kjit::StoreOp store,
                                PatternRewriter &rewriter) const override {
    Value mask = store.getMask();
    if (!mask)
      return rewriter.notifyMatchFailure(store, "not masked");
    Location loc = store.getLoc();
    auto branch = scf::IfOp::create(rewriter, loc, mask);
    rewriter.setInsertionPointToStart(branch.thenBlock());
    kjit::StoreOp::create(rewriter, loc, store.getValue(), store.getBase(),
                          store.getOffset(), Value());
    rewriter.eraseOp(store);
    return success();
  }
};

struct ExpandMasksPass : kjit::impl::KjitExpandMasksBase<ExpandMasksPass> {
  using KjitExpandMasksBase::KjitExpandMasksBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    kjit::populateExpandMasksPatterns(patterns);
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

void kjit::populateExpandMasksPatterns(RewritePatternSet &patterns) {
  patterns.add<ExpandMaskedLoad, ExpandMaskedStore>(patterns.getContext());
}
