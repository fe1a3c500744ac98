//===- Pipeline.cpp - the compile pipeline of one kernel ------------------===//

#include "kjit/Compiler/Pipeline.h"

#include "kjit/Model/InputFile.h"
#include "kjit/Model/Specialization.h"
#include "kjit/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace kjit;

namespace {

/// Verifies the module after the extra passes: the runtime's compile runs
/// without MLIR's verification after every pass (docs/Runtime.md,
/// "Verification"), and the extra passes are the plugins' code, so their
/// output is checked before kjit's lowering relies on it.
struct VerifyExtraPassesPass
    : PassWrapper<VerifyExtraPassesPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(VerifyExtraPassesPass)
  explicit VerifyExtraPassesPass(std::string passes)
      : passes(std::move(passes)) {}
  llvm::StringRef getArgument() const override {
    return "kjit-verify-extra-passes";
  }
  void runOnOperation() override {
    if (succeeded(mlir::verify(getOperation())))
      return;
    getOperation().emitError()
        << "the extra passes '" << passes
        << "' left IR that is not valid (the errors above)";
    signalPassFailure();
  }
  std::string passes;
};

} // namespace

LogicalResult kjit::buildKernelPipeline(OpPassManager &pm, const Target &target,
                                        const KernelPipelineOptions &options,
                                        llvm::raw_ostream &errors) {
  pm.addPass(createKjitSpecializeWithRecord(options.record, options.kernel));
  KjitKeepKernelOptions keep;
  keep.kernelName = options.kernel;
  pm.addPass(createKjitKeepKernel(keep));
  if (!options.extraPasses.empty()) {
    if (failed(parsePassPipeline(options.extraPasses, pm, errors)))
      return failure();
    pm.addPass(std::make_unique<VerifyExtraPassesPass>(options.extraPasses));
  }
  target.buildPipeline(pm, options.target);
  return success();
}

TargetOptions kjit::getTargetOptions(const rt::SpecializationRecord &record) {
  TargetOptions options;
  options.debug = record.options.debug();
  options.enableFpFusion = record.options.enableFpFusion();
  options.numWarps = record.options.numWarps();
  options.numStages = record.options.numStages();
  options.maxNReg =
      record.options.optional(rt::LaunchOption::MaxNReg).value_or(0);
  options.ptxVersion =
      record.options.optional(rt::LaunchOption::PtxVersion).value_or(0);
  return options;
}

llvm::Expected<KernelPipelineOptions>
kjit::readKernelPipelineOptions(llvm::StringRef kernel,
                                llvm::StringRef recordPath, bool debug) {
  if (recordPath.empty())
    return llvm::createStringError(
        "the pipeline needs a specialization record (record=FILE, as "
        "kjit-run --warmup --record-out FILE writes it)");
  absl::StatusOr<std::string> file = rt::readInputFile(
      recordPath.str(), rt::kMaxRecordFileBytes, "specialization record");
  if (!file.ok())
    return llvm::createStringError(std::string(file.status().message()));
  llvm::StringRef text = *file;
  absl::StatusOr<rt::SpecializationRecord> record =
      rt::specializationFromJson(std::string_view(text.data(), text.size()));
  if (!record.ok())
    return llvm::createStringError(
        recordPath + ": " +
        std::string(record.status().message().data(),
                    record.status().message().size()));
  KernelPipelineOptions options;
  options.kernel = kernel.empty() ? record->name : kernel.str();
  options.target = getTargetOptions(*record);
  options.target.debug |= debug;
  options.record =
      std::make_shared<const rt::SpecializationRecord>(std::move(*record));
  return options;
}

namespace {

/// kjit-<target>-pipeline's options.
struct KernelPipelineCLOptions : PassPipelineOptions<KernelPipelineCLOptions> {
  Option<std::string> kernel{
      *this, "kernel",
      llvm::cl::desc("The kernel to compile (default: the record's)")};
  Option<std::string> record{
      *this, "record",
      llvm::cl::desc("The launch's specialization record (JSON, as "
                     "kjit-run --warmup --record-out writes it)")};
  Option<bool> debug{*this, "debug",
                     llvm::cl::desc("Keep device asserts, as KJIT_DEBUG=1 "
                                    "(also on when the record says so)"),
                     llvm::cl::init(false)};
  Option<std::string> arch{
      *this, "arch",
      llvm::cl::desc("The architecture the backend describes (cuda: sm_90; "
                     "default: the target's)")};
  Option<std::string> ptx{
      *this, "ptx",
      llvm::cl::desc("The backend's compile option ptx (cuda: the PTX "
                     "version, 80 for PTX ISA 8.0)")};
  Option<std::string> libdevice{
      *this, "libdevice",
      llvm::cl::desc("The backend's compile option libdevice (cuda: the "
                     "path of libdevice.10.bc)")};
  Option<std::string> extraPasses{
      *this, "extra-passes",
      llvm::cl::desc("Pipeline elements run after kjit-keep-kernel, before "
                     "the target's lowering, as kjit-run --extra-passes "
                     "runs them: extra-passes={count-kernel-ops,cse}")};
  Option<std::string> artifact{
      *this, "artifact",
      llvm::cl::desc("Also write the target's artifact (host: the shared "
                     "object, cuda: the PTX) to this file, and its metadata "
                     "to FILE.json, as the runtime hands them to the "
                     "backend")};
};

/// Writes the target's artifact of the lowered module: the last step of
/// kjit-<target>-pipeline with artifact=FILE, so that a test sees the bytes
/// the runtime would hand to the backend.
struct EmitArtifactPass
    : PassWrapper<EmitArtifactPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(EmitArtifactPass)
  EmitArtifactPass(const Target &target, TargetOptions options,
                   std::string path)
      : target(target), options(std::move(options)), path(std::move(path)) {}
  llvm::StringRef getArgument() const override { return "kjit-emit-artifact"; }
  void runOnOperation() override {
    llvm::Expected<TargetArtifact> artifact =
        target.emitArtifact(getOperation(), options);
    if (!artifact) {
      getOperation().emitError() << "cannot emit the artifact: "
                                 << llvm::toString(artifact.takeError());
      return signalPassFailure();
    }
    for (auto [file, bytes] :
         {std::pair{path, &artifact->bytes},
          std::pair{path + ".json", &artifact->metadataJson}}) {
      std::error_code ec;
      llvm::raw_fd_ostream os(file, ec, llvm::sys::fs::OF_None);
      if (!ec) {
        os << *bytes;
        os.close();
        ec = os.error();
      }
      if (ec) {
        getOperation().emitError()
            << "cannot write '" << file << "': " << ec.message();
        return signalPassFailure();
      }
    }
  }
  const Target &target;
  TargetOptions options;
  std::string path;
};

} // namespace

void kjit::registerKernelPipelines() {
  for (const std::string &name : getRegisteredTargetNames()) {
    std::string description =
        "The runtime's compile of one kernel for the " + name +
        " target: kjit-specialize (record=FILE), kjit-keep-kernel and the "
        "target's lowering";
    registerPassPipeline(
        "kjit-" + name + "-pipeline", description,
        [name](
            OpPassManager &pm, llvm::StringRef optionsText,
            llvm::function_ref<LogicalResult(const llvm::Twine &)> errorHandler)
            -> LogicalResult {
          KernelPipelineCLOptions cl;
          if (failed(cl.parseFromString(optionsText)))
            return failure();
          const Target *target = lookupTarget(name);
          llvm::Expected<KernelPipelineOptions> options =
              readKernelPipelineOptions(cl.kernel, cl.record, cl.debug);
          if (!options)
            return errorHandler("kjit-" + name + "-pipeline: " +
                                llvm::toString(options.takeError()));
          options->target.arch = cl.arch;
          if (!cl.ptx.empty())
            options->target.backendOptions.emplace_back("ptx", cl.ptx);
          if (!cl.libdevice.empty())
            options->target.backendOptions.emplace_back("libdevice",
                                                        cl.libdevice);
          // As the runtime's compile: nothing unchecked reaches LLVM.
          if (llvm::Error bad = target->validateOptions(options->target))
            return errorHandler("kjit-" + name +
                                "-pipeline: " + llvm::toString(std::move(bad)));
          options->extraPasses = cl.extraPasses;
          std::string errors;
          llvm::raw_string_ostream os(errors);
          if (failed(buildKernelPipeline(pm, *target, *options, os)))
            return errorHandler("kjit-" + name +
                                "-pipeline: extra-passes: " + errors);
          if (!cl.artifact.empty())
            pm.addPass(std::make_unique<EmitArtifactPass>(
                *target, options->target, cl.artifact));
          return success();
        },
        [](llvm::function_ref<void(const mlir::detail::PassOptions &)>
               handler) { handler(KernelPipelineCLOptions()); });
  }
}
