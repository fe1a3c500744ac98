//===- CompiledHook.cpp - the kjit-compiled-hook pass ---------------------===//

#include "HookEvents.h"
#include "HookPasses.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "llvm/Support/raw_ostream.h"

namespace kjit {
#define GEN_PASS_DEF_KJITCOMPILEDHOOK
#include "HookPasses.h.inc"
} // namespace kjit

using namespace mlir;

namespace {

struct CompiledHookPass : kjit::impl::KjitCompiledHookBase<CompiledHookPass> {
  using KjitCompiledHookBase::KjitCompiledHookBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The artifact is the module as it stands at this point of the
    // pipeline, as MLIR bytecode.
    std::string artifact;
    llvm::raw_string_ostream os(artifact);
    if (failed(writeBytecodeToFile(module, os))) {
      module.emitError("kjit-compiled-hook: cannot serialize the module");
      return signalPassFailure();
    }
    kjit::plugin::PluginHost &host = kjit::hookPluginHost();
    kjit::plugin::CompiledInfo compiled;
    compiled.artifactFormat = "mlir-bytecode";
    compiled.artifact = artifact;
    compiled.metadataJson = "{}";
    if (failed(kjit::forEachKernelEvent(
            module, kernelName, target,
            [&](kjit::KernelOp, const kjit::plugin::CompileInfo &event) {
              host.runCompiledHook(event, compiled);
            })))
      return signalPassFailure();
    markAllAnalysesPreserved();
  }
};

} // namespace
