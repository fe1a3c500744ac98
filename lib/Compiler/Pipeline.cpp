//===- Pipeline.cpp - the compile pipeline of one kernel -----------------===//

#include "kjit/Compiler/Pipeline.h"

#include "kjit/Model/Specialization.h"
#include "kjit/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace kjit;

void kjit::buildKernelPipeline(OpPassManager &pm, const Target &target,
                               const KernelPipelineOptions &options) {
  pm.addPass(createKjitSpecializeWithRecord(options.record, options.kernel));
  KjitKeepKernelOptions keep;
  keep.kernelName = options.kernel;
  pm.addPass(createKjitKeepKernel(keep));
  target.buildPipeline(pm, options.target);
}

TargetOptions kjit::getTargetOptions(const rt::SpecializationRecord &record) {
  TargetOptions options;
  options.debug = record.options.debug();
  options.enableFpFusion = record.options.enableFpFusion();
  return options;
}

llvm::Expected<KernelPipelineOptions>
kjit::readKernelPipelineOptions(llvm::StringRef kernel,
                                llvm::StringRef recordPath, bool debug) {
  if (recordPath.empty())
    return llvm::createStringError(
        "the pipeline needs a specialization record (record=FILE, as "
        "kjit-run --warmup --record-out FILE writes it)");
  auto file = llvm::MemoryBuffer::getFile(recordPath, /*IsText=*/true);
  if (!file)
    return llvm::createStringError("cannot read '" + recordPath +
                                   "': " + file.getError().message());
  llvm::StringRef text = (*file)->getBuffer();
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
          buildKernelPipeline(pm, *target, *options);
          return success();
        },
        [](llvm::function_ref<void(const mlir::detail::PassOptions &)>
               handler) { handler(KernelPipelineCLOptions()); });
  }
}
