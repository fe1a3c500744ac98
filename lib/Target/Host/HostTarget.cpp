//===- HostTarget.cpp - the host compile target ---------------------------===//

#include "kjit/Target/Host/HostTarget.h"

#include "kjit/Target/Host/HostCodegen.h"
#include "kjit/Target/Host/Passes.h"
#include "kjit/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace kjit;

namespace {

class HostTarget final : public Target {
public:
  llvm::StringRef name() const override { return "host"; }

  llvm::StringRef artifactFormat() const override {
    return "elf-shared-object";
  }

  void buildPipeline(OpPassManager &pm,
                     const TargetOptions &options) const override {
    // Target-independent preparation, then the host lowering.
    pm.addPass(createKjitBakeGlobals());
    // Tiles, fragments and multiplies as loops over workgroup memory; their
    // accesses are masked, so before the masks expand.
    pm.addPass(createKjitLowerMatrix({options.numWarps}));
    // The host has no predicated accesses: masks become branches.
    pm.addPass(createKjitExpandMasks());
    pm.addPass(createCanonicalizerPass());
    // Once the constants have folded: an assert they decide false is
    // refused, in debug mode too.
    pm.addPass(createKjitStripAsserts({/*erase=*/!options.debug}));
    // After canonicalization: accesses in branches a constexpr removed do
    // not count.
    pm.addPass(createKjitCheckNonePointers());
    // Debug mode also checks divisors and bounds in the lowering.
    KjitConvertHostToLLVMOptions lowering;
    lowering.debugChecks = options.debug;
    lowering.fpFusion = options.enableFpFusion;
    pm.addPass(createKjitConvertHostToLLVM(lowering));
    // A DWARF line table that names the .mlir file and the kernel's lines
    // (the operations' locations become DILocations), so that a debugger
    // and the backend's fault reports can name the line.
    addLineInfoPasses(pm, options, /*directivesOnly=*/false);
  }

  llvm::Expected<TargetArtifact>
  emitArtifact(ModuleOp module, const TargetOptions &options) const override {
    TargetArtifact artifact;
    std::string error;
    HostCodegenOptions codegen;
    codegen.fpFusion = options.enableFpFusion;
    if (!buildHostSharedObject(module, codegen, artifact.bytes, error))
      return llvm::createStringError(error);
    HostTargetInfo host = getHostTargetInfo();
    llvm::raw_string_ostream os(artifact.metadataJson);
    llvm::json::OStream json(os);
    json.object([&] {
      json.attribute("format", artifactFormat());
      json.attribute("triple", host.triple);
      json.attribute("cpu", host.cpu);
    });
    return artifact;
  }
};

} // namespace

void kjit::registerHostTargetPasses() { registerKjitHostPasses(); }

std::unique_ptr<Target> kjit::createHostTarget() {
  return std::make_unique<HostTarget>();
}
