//===- CacheHook.cpp - the kjit-cache-hook pass ---------------------------===//

#include "HookEvents.h"
#include "HookPasses.h"

namespace kjit {
#define GEN_PASS_DEF_KJITCACHEHOOK
#include "HookPasses.h.inc"
} // namespace kjit

using namespace mlir;

namespace {

struct CacheHookPass : kjit::impl::KjitCacheHookBase<CacheHookPass> {
  using KjitCacheHookBase::KjitCacheHookBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    kjit::plugin::PluginHost &host = kjit::hookPluginHost();
    LogicalResult described = kjit::forEachKernelEvent(
        module, kernelName, target,
        [&](kjit::KernelOp kernel, const kjit::plugin::CompileInfo &event) {
          if (host.runCacheHook(event) != kjit::plugin::CacheDecision::Skip)
            return;
          // Nothing is compiled: the kernel leaves the module.
          kernel.emitRemark() << "a cache hook skipped compiling '@"
                              << kernel.getSymName() << "'";
          kernel.erase();
        });
    if (failed(described))
      signalPassFailure();
  }
};

} // namespace
