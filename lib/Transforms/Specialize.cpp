//===- Specialize.cpp - the kjit-specialize pass ---------------------------===//

#include "kjit/Transforms/Passes.h"
#include "kjit/Transforms/Specialization.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace kjit {
#define GEN_PASS_DEF_KJITSPECIALIZE
#include "kjit/Transforms/Passes.h.inc"
} // namespace kjit

using namespace mlir;

namespace {

struct SpecializePass : kjit::impl::KjitSpecializeBase<SpecializePass> {
  using KjitSpecializeBase::KjitSpecializeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (kernelName.empty()) {
      module.emitError("kjit-specialize needs the kernel to specialize "
                       "(kernel=NAME)");
      return signalPassFailure();
    }
    auto kernel = module.lookupSymbol<kjit::KernelOp>(kernelName);
    if (!kernel) {
      module.emitError() << "kjit-specialize: no kernel named '@"
                         << kernelName << "'";
      return signalPassFailure();
    }
    std::string error;
    std::optional<kjit::KernelSpecialization> spec = kjit::parseSpecialization(
        kernelName, entries, &getContext(), error);
    if (!spec) {
      module.emitError() << "kjit-specialize: " << error;
      return signalPassFailure();
    }
    if (failed(kjit::applySpecialization(kernel, *spec)))
      return signalPassFailure();
  }
};

} // namespace
