//===- Specialize.cpp - the kjit-specialize pass --------------------------===//

#include "kjit/Model/InputFile.h"
#include "kjit/Model/Specialization.h"
#include "kjit/Transforms/ApplySpecialization.h"
#include "kjit/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace kjit {
#define GEN_PASS_DEF_KJITSPECIALIZE
#include "kjit/Transforms/Passes.h.inc"
} // namespace kjit

using namespace mlir;

namespace {

struct SpecializePass : kjit::impl::KjitSpecializeBase<SpecializePass> {
  using KjitSpecializeBase::KjitSpecializeBase;

  /// The pass with a record in memory instead of its options.
  SpecializePass(std::shared_ptr<const kjit::rt::SpecializationRecord> record,
                 std::string kernel)
      : record(std::move(record)) {
    kernelName = std::move(kernel);
  }

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

  /// The specialization from the record in memory, `record=FILE`, or
  /// `kernel` and `spec`.
  std::optional<kjit::KernelSpecialization> readSpecialization() {
    ModuleOp module = getOperation();
    std::string error;
    std::optional<kjit::KernelSpecialization> spec;
    if (record) {
      spec = kjit::specializationFromRecord(*record, &getContext(), error);
      if (!spec) {
        module.emitError() << "kjit-specialize: the specialization record: "
                           << error;
        return std::nullopt;
      }
    } else if (recordPath.empty()) {
      if (kernelName.empty()) {
        module.emitError("kjit-specialize needs the kernel to specialize "
                         "(kernel=NAME) or a record (record=FILE)");
        return std::nullopt;
      }
      spec =
          kjit::parseSpecialization(kernelName, entries, &getContext(), error);
      if (!spec)
        module.emitError() << "kjit-specialize: " << error;
      return spec;
    } else {
      absl::StatusOr<std::string> file = kjit::rt::readInputFile(
          recordPath, kjit::rt::kMaxRecordFileBytes, "specialization record");
      if (!file.ok()) {
        module.emitError() << "kjit-specialize: "
                           << std::string(file.status().message());
        return std::nullopt;
      }
      spec = kjit::readSpecializationRecord(*file, &getContext(), error);
      if (!spec) {
        module.emitError() << "kjit-specialize: " << recordPath << ": "
                           << error;
        return std::nullopt;
      }
    }
    if (!kernelName.empty() && kernelName != spec->kernel) {
      module.emitError() << "kjit-specialize: the record is for '@"
                         << spec->kernel << "', not '@" << kernelName << "'";
      return std::nullopt;
    }
    return spec;
  }

  /// Set by createKjitSpecializeWithRecord; shared by the pass's clones.
  std::shared_ptr<const kjit::rt::SpecializationRecord> record;
};

} // namespace

std::unique_ptr<Pass> kjit::createKjitSpecializeWithRecord(
    std::shared_ptr<const rt::SpecializationRecord> record,
    std::string kernelName) {
  return std::make_unique<SpecializePass>(std::move(record),
                                          std::move(kernelName));
}
