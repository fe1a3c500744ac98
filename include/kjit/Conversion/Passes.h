//===- Passes.h - every built-in target's passes ----------------*- C++ -*-===//
//
// The passes of the targets built into the compiler (KJIT_TARGETS): each
// target declares its own in include/kjit/Target/<Name>/Passes.td (its
// lowering) and may add steps tools run on their own (the cuda target's
// kjit-serialize-to-ptx). The list is generated (kjit/Target/Targets.inc).
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_CONVERSION_PASSES_H
#define KJIT_CONVERSION_PASSES_H

namespace kjit {

/// Registers the passes of every built-in target (each target's
/// register<Name>TargetPasses), for pass pipelines that name them:
/// kjit-opt, the mlir-opt plugin and the compiler service's extra passes.
void registerKjitConversionPasses();

} // namespace kjit

#endif // KJIT_CONVERSION_PASSES_H
