//===- Specialize.cpp - the kjit-specialize pass -------------------------===//

#include "kjit/Transforms/Passes.h"
#include "kjit/Transforms/ApplySpecialization.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/MemoryBuffer.h"

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
    std::optional<kjit::KernelSpecialization> spec = readSpecialization();
    if (!spec)
      return signalPassFailure();
    auto kernel = module.lookupSymbol<kjit::KernelOp>(spec->kernel);
    if (!kernel) {
      module.emitError() << "kjit-specialize: no kernel named '@"
                         << spec->kernel << "'";
      return signalPassFailure();
    }
    if (failed(kjit::applySpecialization(kernel, *spec)))
      return signalPassFailure();
  }

  /// The specialization from `record=FILE`, or from `kernel` and `spec`.
  std::optional<kjit::KernelSpecialization> readSpecialization() {
    ModuleOp module = getOperation();
    std::string error;
    if (recordPath.empty()) {
      if (kernelName.empty()) {
        module.emitError("kjit-specialize needs the kernel to specialize "
                         "(kernel=NAME) or a record (record=FILE)");
        return std::nullopt;
      }
      auto spec =
          kjit::parseSpecialization(kernelName, entries, &getContext(), error);
      if (!spec)
        module.emitError() << "kjit-specialize: " << error;
      return spec;
    }
    auto file = llvm::MemoryBuffer::getFile(recordPath, /*IsText=*/true);
    if (!file) {
      module.emitError() << "kjit-specialize: cannot read '" << recordPath
                         << "': " << file.getError().message();
      return std::nullopt;
    }
    auto spec = kjit::readSpecializationRecord((*file)->getBuffer(),
                                               &getContext(), error);
    if (!spec) {
      module.emitError() << "kjit-specialize: " << recordPath << ": " << error;
      return std::nullopt;
    }
    if (!kernelName.empty() && kernelName != spec->kernel) {
      module.emitError() << "kjit-specialize: the record is for '@"
                         << spec->kernel << "', not '@" << kernelName << "'";
      return std::nullopt;
    }
    return spec;
  }
};

} // namespace
