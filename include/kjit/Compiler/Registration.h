//===- Registration.h - dialects and passes kjit tools load -----*- C++ -*-===//
//
// One place that lists what a kjit tool registers. Only the dialects kernel
// IR uses are registered (registerAll* would pull in every dialect and make
// the binaries several times larger).
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_COMPILER_REGISTRATION_H
#define KJIT_COMPILER_REGISTRATION_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace kjit {

/// Registers the kjit dialect and the upstream dialects kernel bodies use:
/// arith, math, scf, cf, vector, memref, gpu, func and ub (`ub.poison`,
/// which arith's folders make), and llvm (what the host lowering produces).
void registerKjitDialects(mlir::DialectRegistry &registry);

/// What every registered target's pipeline needs besides those dialects
/// (Target::registerDialects): tools that run any target's pipeline
/// (kjit-opt) call it; the compiler service registers only the target of
/// each compile.
void registerKjitTargetDialects(mlir::DialectRegistry &registry);

} // namespace kjit

#endif // KJIT_COMPILER_REGISTRATION_H
