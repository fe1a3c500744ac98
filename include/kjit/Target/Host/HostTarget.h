//===- HostTarget.h - the host compile target -------------------*- C++ -*-===//
//
// The `host` target: kernels as ELF shared objects for the CPU of this
// machine, run by the host backend (plugins/host). Its pipeline is the
// target-independent preparation (kjit-bake-globals, kjit-expand-masks,
// kjit-strip-asserts outside debug mode), canonicalization and
// kjit-convert-host-to-llvm; its artifact comes from HostCodegen.h.
// docs/HostTarget.md explains the choices.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_TARGET_HOST_HOSTTARGET_H
#define KJIT_TARGET_HOST_HOSTTARGET_H

#include "kjit/Compiler/Target.h"

namespace kjit {

/// A new host target (the registry holds the one every compile uses).
std::unique_ptr<Target> createHostTarget();

/// Registers the host target's passes (Passes.td:
/// kjit-convert-host-to-llvm), so that kjit-opt and mlir-opt run them on
/// their own. registerKjitConversionPasses calls it.
void registerHostTargetPasses();

} // namespace kjit

#endif // KJIT_TARGET_HOST_HOSTTARGET_H
