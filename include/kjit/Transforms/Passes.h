//===- Passes.h - kjit passes -----------------------------------*- C++ -*-===//
//
// Declarations of the passes of Passes.td. No dialect header belongs here:
// each pass's .cpp (the one that defines GEN_PASS_DEF_<PASS>) includes the
// dialects its pass depends on, so that the other pass TUs do not pay for
// them (FindDependencies.cpp compiles in about a third of the time).
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_TRANSFORMS_PASSES_H
#define KJIT_TRANSFORMS_PASSES_H

#include "kjit/Dialect/Kjit/IR/Kjit.h"

#include "mlir/Pass/Pass.h"

#include <memory>
#include <string>

namespace mlir {
class RewritePatternSet;
} // namespace mlir

namespace kjit {

namespace rt {
struct SpecializationRecord;
} // namespace rt

#define GEN_PASS_DECL
#include "kjit/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kjit/Transforms/Passes.h.inc"

/// kjit-specialize with a record already in memory (the runtime's compile)
/// instead of `record=FILE`. When `kernelName` is not empty, the record
/// must be for that kernel.
std::unique_ptr<mlir::Pass> createKjitSpecializeWithRecord(
    std::shared_ptr<const rt::SpecializationRecord> record,
    std::string kernelName = "");

/// The patterns of kjit-expand-masks: a masked kjit.load or kjit.store
/// becomes an scf.if around an unmasked one.
void populateExpandMasksPatterns(mlir::RewritePatternSet &patterns);

/// Checks a pass's num-warps option: a program is 32 * num-warps threads,
/// so 1 to 32 (at most 1024 threads). On failure reports "<pass>: num-warps
/// must be 1 to 32, got N" on `op` (kjit-fold-block-size and
/// kjit-convert-to-gpu each guard their own option, since either runs
/// alone in kjit-opt).
mlir::LogicalResult checkNumWarpsOption(mlir::Operation *op,
                                        llvm::StringRef pass, int64_t numWarps);

} // namespace kjit

#endif // KJIT_TRANSFORMS_PASSES_H
