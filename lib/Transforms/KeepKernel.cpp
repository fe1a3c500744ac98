//===- KeepKernel.cpp - the kjit-keep-kernel pass -------------------------===//

#include "kjit/Transforms/Passes.h"

namespace kjit {
#define GEN_PASS_DEF_KJITKEEPKERNEL
#include "kjit/Transforms/Passes.h.inc"
} // namespace kjit

using namespace mlir;

namespace {

struct KeepKernelPass : kjit::impl::KjitKeepKernelBase<KeepKernelPass> {
  using KjitKeepKernelBase::KjitKeepKernelBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (kernelName.empty()) {
      module.emitError("kjit-keep-kernel needs the kernel to keep "
                       "(kernel=NAME)");
      return signalPassFailure();
    }
    if (!module.lookupSymbol<kjit::KernelOp>(kernelName)) {
      module.emitError() << "kjit-keep-kernel: no kernel named '@" << kernelName
                         << "'";
      return signalPassFailure();
    }
    for (auto kernel :
         llvm::make_early_inc_range(module.getOps<kjit::KernelOp>()))
      if (kernel.getSymName() != kernelName)
        kernel.erase();
  }
};

} // namespace
