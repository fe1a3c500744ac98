//===- FindDependencies.cpp - the kjit-find-dependencies pass -------------===//

#include "kjit/Analysis/Dependencies.h"
#include "kjit/Transforms/Passes.h"

namespace kjit {
#define GEN_PASS_DEF_KJITFINDDEPENDENCIES
#include "kjit/Transforms/Passes.h.inc"
} // namespace kjit

using namespace mlir;

namespace {

struct FindDependenciesPass
    : kjit::impl::KjitFindDependenciesBase<FindDependenciesPass> {
  void runOnOperation() override {
    // Every record is computed before any is written, so the analysis only
    // reads records persisted by earlier runs.
    auto records = getAnalysis<kjit::DependencyAnalysis>().getAllRecords();
    if (failed(records))
      return signalPassFailure();
    for (auto [fn, record] : *records)
      kjit::DependencyAnalysis::persist(fn, *record);
  }
};

} // namespace
