//===- TrackGlobals.cpp - the kjit-track-globals pass ---------------------===//

#include "kjit/Analysis/Dependencies.h"
#include "kjit/Model/GlobalPath.h"
#include "kjit/Transforms/Passes.h"

namespace kjit {
#define GEN_PASS_DEF_KJITTRACKGLOBALS
#include "kjit/Transforms/Passes.h.inc"
} // namespace kjit

using namespace mlir;

namespace {

/// A global value as the reference runtime's message shows it: the value
/// without its type.
std::string printValue(TypedAttr value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  value.print(os, /*elideType=*/true);
  return text;
}

/// A global as the messages name it: "SCALE" for one of the root module,
/// "SCALE of module @inner" for one of a nested module, which is another
/// global than the root's @SCALE (the runtime's rules, in
/// kjit/Model/GlobalPath.h).
std::string describeGlobal(SymbolRefAttr name) {
  return kjit::rt::describeGlobal(kjit::getGlobalPathName(name));
}

struct TrackGlobalsPass : kjit::impl::KjitTrackGlobalsBase<TrackGlobalsPass> {
  using KjitTrackGlobalsBase::KjitTrackGlobalsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool recompile = onChange == "recompile";
    if (!recompile && onChange != "error") {
      module.emitError() << "kjit-track-globals: unknown on-change policy '"
                         << onChange << "'; expected 'error' or 'recompile'";
      return signalPassFailure();
    }

    if (recompile) {
      // Drop every record that holds a stale value; the analysis below
      // recomputes them from the current values (and so gives new keys).
      module->walk([&](FunctionOpInterface fn) {
        std::optional<kjit::DependencyRecord> record =
            kjit::DependencyAnalysis::readPersisted(fn);
        if (record &&
            !kjit::DependencyAnalysis::findChangedGlobals(module, *record)
                 .empty())
          kjit::DependencyAnalysis::forget(fn);
      });
    }

    // Functions without a valid record get one here: the snapshot. A kept
    // record still holds the values of its first analysis.
    kjit::DependencyAnalysis analysis(module);
    auto records = analysis.getAllRecords();
    if (failed(records))
      return signalPassFailure();
    bool changed = false;
    for (auto [fn, record] : *records) {
      for (const kjit::GlobalChange &change :
           kjit::DependencyAnalysis::findChangedGlobals(module, *record)) {
        changed = true;
        std::string name = describeGlobal(change.name);
        // Verified IR cannot lose a global that a function reads, and the
        // analysis recomputes a record naming one it does not read;
        // kept for records that reach findChangedGlobals some other way.
        if (!change.current)
          fn.emitError() << "Global variable " << name
                         << " is recorded for this kernel but the module "
                            "has no global "
                         << change.name;
        else
          fn.emitError() << "Global variable " << name
                         << " has changed since we compiled this kernel, from "
                         << printValue(change.recorded) << " to "
                         << printValue(change.current);
      }
    }
    if (changed)
      return signalPassFailure();
    for (auto [fn, record] : *records)
      kjit::DependencyAnalysis::persist(fn, *record);
  }
};

} // namespace
