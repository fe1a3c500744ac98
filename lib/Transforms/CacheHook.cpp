//===- CacheHook.cpp - the kjit-cache-hook pass ---------------------------===//

#include "HookEvents.h"
#include "kjit/Transforms/Passes.h"

namespace kjit {
#define GEN_PASS_DEF_KJITCACHEHOOK
#include "kjit/Transforms/Passes.h.inc"
} // namespace kjit

using namespace mlir;

namespace {

struct CacheHookPass : kjit::impl::KjitCacheHookBase<CacheHookPass> {
  using KjitCacheHookBase::KjitCacheHookBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto &host = kjit::plugin::PluginHost::global();
    for (auto kernel :
         llvm::make_early_inc_range(module.getOps<kjit::KernelOp>())) {
      if (!kernelName.empty() && kernel.getSymName() != kernelName)
        continue;
      FailureOr<kjit::KernelCompileInfo> info =
          kjit::describeKernel(kernel, target);
      if (failed(info))
        return signalPassFailure();
      kjit::plugin::CompileInfo event = kjit::toCompileInfo(*info, target);
      if (host.runCacheHook(event) == kjit::plugin::CacheDecision::Skip) {
        // Nothing is compiled: the kernel leaves the module.
        kernel.emitRemark()
            << "a cache hook skipped compiling '@" << info->name << "'";
        kernel.erase();
      }
    }
  }
};

} // namespace
