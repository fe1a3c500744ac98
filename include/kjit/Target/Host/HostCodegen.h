//===- HostCodegen.h - LLVM dialect to a host shared object -----*- C++ -*-===//
//
// The last steps of the host target: a module in the LLVM dialect (the output
// of kjit-convert-host-to-llvm) becomes LLVM IR, is optimized for the host
// CPU, emitted as an object and linked into an ELF shared object by lld, in
// process. docs/HostTarget.md explains the choices.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_TARGET_HOST_HOSTCODEGEN_H
#define KJIT_TARGET_HOST_HOSTCODEGEN_H

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace kjit {

/// What the host code generator used, for fingerprints and metadata.
struct HostTargetInfo {
  std::string triple;
  std::string cpu;
};

/// The host CPU the objects are generated for.
HostTargetInfo getHostTargetInfo();

/// What a launch's options change in code generation.
struct HostCodegenOptions {
  /// enable_fp_fusion: the code generator may fuse a multiply and an add
  /// that both carry `contract` (the lowering sets it); without it nothing
  /// fuses, not even `llvm.fmuladd`.
  bool fpFusion = true;
};

/// Builds the shared object's bytes from an LLVM-dialect module. On failure
/// returns false with `error` set; LLVM's fatal errors are avoided by only
/// generating code for the process's own target.
bool buildHostSharedObject(mlir::ModuleOp module,
                           const HostCodegenOptions &codegen,
                           std::string &sharedObject, std::string &error);

} // namespace kjit

#endif // KJIT_TARGET_HOST_HOSTCODEGEN_H
