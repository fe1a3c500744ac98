//===- CudaTarget.cpp - the cuda compile target ---------------------------===//
//
// PTX for NVIDIA GPUs through the upstream GPU/NVVM lowering: the verified
// pipeline of docs/CudaTarget.md, with every option checked against LLVM
// 22's NVPTX first (a bad chip or PTX version is an LLVM fatal error that
// would abort the process).
//
//===----------------------------------------------------------------------===//

#include "kjit/Target/Cuda/CudaTarget.h"

#include "NvptxCodeGenerator.h"

#include "kjit/Target/Cuda/Passes.h"
#include "kjit/Transforms/Passes.h"

#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/ModuleToObject.h"
#include "mlir/Target/LLVM/NVVM/Utils.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;
using namespace kjit;

namespace {

/// `llc -march=nvptx64 -mcpu=help` of LLVM 22, each chip with the oldest
/// `+ptxNN` that llc accepts for it (found by trying each version; an older
/// one is a fatal "PTX version N does not support target" error).
constexpr CudaChip kChips[] = {
    {"sm_100", 86},  {"sm_100a", 86}, {"sm_100f", 88}, {"sm_101", 86},
    {"sm_101a", 86}, {"sm_101f", 88}, {"sm_103", 88},  {"sm_103a", 88},
    {"sm_103f", 88}, {"sm_110", 90},  {"sm_110a", 90}, {"sm_110f", 90},
    {"sm_120", 87},  {"sm_120a", 87}, {"sm_120f", 88}, {"sm_121", 88},
    {"sm_121a", 88}, {"sm_121f", 88}, {"sm_20", 32},   {"sm_21", 32},
    {"sm_30", 32},   {"sm_32", 40},   {"sm_35", 32},   {"sm_37", 41},
    {"sm_50", 40},   {"sm_52", 41},   {"sm_53", 42},   {"sm_60", 50},
    {"sm_61", 50},   {"sm_62", 50},   {"sm_70", 60},   {"sm_72", 61},
    {"sm_75", 63},   {"sm_80", 70},   {"sm_86", 71},   {"sm_87", 74},
    {"sm_88", 90},   {"sm_89", 78},   {"sm_90", 78},   {"sm_90a", 80},
};

/// The `ptxNN` features of LLVM 22's NVPTX. A version that is not one of
/// them is ignored by LLVM with a warning, so it must be refused here.
constexpr int kPtxVersions[] = {32, 40, 41, 42, 43, 50, 60, 61, 62, 63, 64,
                                65, 70, 71, 72, 73, 74, 75, 76, 77, 78, 80,
                                81, 82, 83, 84, 85, 86, 87, 88, 90};

constexpr const char *kDefaultChip = "sm_90";
constexpr int kDefaultPtx = 80;

std::string ptxName(int64_t version) {
  return std::to_string(version / 10) + "." + std::to_string(version % 10);
}

/// Checks that `path` is a readable LLVM bitcode file.
llvm::Error checkLibdevice(llvm::StringRef path) {
  auto fail = [&](const llvm::Twine &why) {
    return llvm::createStringError("libdevice '" + path + "' " + why);
  };
  if (path.empty())
    return llvm::createStringError(
        "option 'libdevice' needs a path (libdevice.10.bc)");
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status))
    return fail("cannot be read: " + ec.message());
  if (!llvm::sys::fs::is_regular_file(status))
    return fail("is not a regular file");
  auto file = llvm::MemoryBuffer::getFileSlice(path, 4, 0);
  if (!file)
    return fail("cannot be read: " + file.getError().message());
  llvm::StringRef magic = (*file)->getBuffer();
  // Raw bitcode ("BC" 0xC0DE) or the bitcode wrapper (0x0B17C0DE, LE).
  if (magic != llvm::StringRef("BC\xC0\xDE", 4) &&
      magic != llvm::StringRef("\xDE\xC0\x17\x0B", 4))
    return fail("is not LLVM bitcode (it does not start with 'BC' 0xC0DE)");
  return llvm::Error::success();
}

/// Parses a PTX version as the backend or a launch gives it: "80" (or
/// "8.0") for PTX ISA 8.0.
std::optional<int> parsePtx(llvm::StringRef text) {
  int version;
  if (text.size() == 3 && text[1] == '.' && llvm::isDigit(text[0]) &&
      llvm::isDigit(text[2]))
    return (text[0] - '0') * 10 + (text[2] - '0');
  if (text.getAsInteger(10, version))
    return std::nullopt;
  return version;
}

llvm::Error checkPtx(int64_t version, const CudaChip &chip,
                     llvm::StringRef source) {
  if (!llvm::is_contained(kPtxVersions, version)) {
    std::string known;
    for (int v : kPtxVersions)
      known += (known.empty() ? "" : ", ") + std::to_string(v);
    return llvm::createStringError(
        source + " " + std::to_string(version) +
        " is not a PTX version LLVM 22 can emit (it emits " + known +
        "; the newest is " +
        std::to_string(kPtxVersions[std::size(kPtxVersions) - 1]) +
        ", PTX ISA " + ptxName(kPtxVersions[std::size(kPtxVersions) - 1]) +
        ")");
  }
  if (version < chip.minPtx)
    return llvm::createStringError(
        source + " " + std::to_string(version) + " (PTX ISA " +
        ptxName(version) + ") does not support " + chip.name +
        ", which needs PTX " + std::to_string(chip.minPtx) + " (ISA " +
        ptxName(chip.minPtx) + ") or newer");
  return llvm::Error::success();
}

/// Fails the pipeline with a message: what buildPipeline adds when it is
/// given options validateOptions would refuse (it cannot return an error,
/// and LLVM must not see them).
struct RefuseOptionsPass
    : PassWrapper<RefuseOptionsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(RefuseOptionsPass)
  explicit RefuseOptionsPass(std::string message)
      : message(std::move(message)) {}
  llvm::StringRef getArgument() const override {
    return "kjit-cuda-refuse-options";
  }
  void runOnOperation() override {
    getOperation().emitError() << "cuda target: " << message;
    signalPassFailure();
  }
  std::string message;
};

/// Whether linking a library with LinkOnlyNeeded (what ModuleToObject's
/// linkFiles does) can bring anything into `module`: the linker imports a
/// library's global value only where the module declares one of that name
/// (or for appending linkage, which libdevice has none of). A module that
/// declares nothing but intrinsics gets no code from any library.
bool declaresExternalSymbols(const llvm::Module &module) {
  for (const llvm::Function &fn : module.functions())
    if (fn.isDeclaration() && !fn.isIntrinsic())
      return true;
  for (const llvm::GlobalVariable &global : module.globals())
    if (global.isDeclaration())
      return true;
  return false;
}

/// gpu.module -> PTX, as gpu-module-to-binary{format=isa} does it for an
/// #nvvm.target (MLIR's NVPTXSerializer: translation to LLVM IR, linking
/// the target's `link` files, LLVM at the target's O level, NVPTX code
/// generation), with two differences in which bitcode is loaded, none in
/// what is generated:
///  - upstream always loads and links, besides the target's files, the
///    libdevice of the toolkit that CUDA_ROOT, CUDA_HOME or CUDA_PATH name
///    (SerializeGPUModuleBase::appendStandardLibs): a second copy, from a
///    file the backend's fingerprint does not cover. Here only the
///    target's files (the backend's libdevice) are linked;
///  - the files are loaded only when the LLVM module declares a symbol
///    they could define (declaresExternalSymbols): parsing libdevice
///    (470 KB of bitcode) costs 1.5-2 ms per compile here, for nothing in
///    a kernel that calls no __nv_ function.
/// and two in LLVM's: the IR pipeline runs without LoopLoadElimination
/// and code generation at Default (optimizeModule and moduleToObject below;
/// the PTX of every test artifact is the same).
class PtxSerializer final : public LLVM::ModuleToObject {
public:
  PtxSerializer(gpu::GPUModuleOp module, NVVM::NVVMTargetAttr target)
      : ModuleToObject(*module, target.getTriple(), target.getChip(),
                       target.getFeatures(), target.getO()),
        target(target) {}

protected:
  std::optional<SmallVector<std::unique_ptr<llvm::Module>>>
  loadBitcodeFiles(llvm::Module &module) override {
    SmallVector<std::unique_ptr<llvm::Module>> libraries;
    ArrayAttr files = target.getLink();
    if (!files || files.empty() || !declaresExternalSymbols(module))
      return libraries;
    if (failed(loadBitcodeFilesFromList(module.getContext(), files.getValue(),
                                        libraries, /*failureOnError=*/true)))
      return std::nullopt;
    return libraries;
  }

  /// LLVM's default pipeline at the target's level, as upstream's
  /// makeOptimizingTransformer builds it, less LoopLoadElimination
  /// (docs/CudaTarget.md, "LLVM's pipeline"): on a kernel's loops over
  /// 32-bit offsets its alias analysis builds a no-wrap predicate per
  /// access and compares them pairwise, half of O3's time on the vector
  /// add, and on kjit's kernels it forwards nothing.
  LogicalResult optimizeModule(llvm::Module &module, int optLevel) override {
    FailureOr<llvm::TargetMachine *> machine = targetMachine();
    if (failed(machine))
      return failure();
    if (optLevel < 1 || optLevel > 3)
      return ModuleToObject::optimizeModule(module, optLevel);
    (*machine)->setOptLevel(static_cast<llvm::CodeGenOptLevel>(optLevel));
    llvm::PipelineTuningOptions tuning;
    tuning.LoopUnrolling = tuning.LoopInterleaving = true;
    tuning.LoopVectorization = tuning.SLPVectorization = true;
    llvm::PassInstrumentationCallbacks callbacks;
    callbacks.registerShouldRunOptionalPassCallback(
        [](llvm::StringRef pass, llvm::Any) {
          return pass != "LoopLoadEliminationPass";
        });
    llvm::PassBuilder builder(*machine, tuning, std::nullopt, &callbacks);
    llvm::LoopAnalysisManager loops;
    llvm::FunctionAnalysisManager functions;
    llvm::CGSCCAnalysisManager sccs;
    llvm::ModuleAnalysisManager modules;
    builder.registerModuleAnalyses(modules);
    builder.registerCGSCCAnalyses(sccs);
    builder.registerFunctionAnalyses(functions);
    builder.registerLoopAnalyses(loops);
    builder.crossRegisterProxies(loops, functions, sccs, modules);
    llvm::OptimizationLevel level = optLevel == 1 ? llvm::OptimizationLevel::O1
                                    : optLevel == 2
                                        ? llvm::OptimizationLevel::O2
                                        : llvm::OptimizationLevel::O3;
    builder.buildPerModuleDefaultPipeline(level).run(module, modules);
    return success();
  }

  FailureOr<SmallVector<char, 0>>
  moduleToObject(llvm::Module &module) override {
    FailureOr<NvptxCodeGenerator *> generator = codeGenerator();
    if (failed(generator))
      return failure();
    llvm::Expected<SmallVector<char, 0>> ptx =
        (*generator)->generatePtx(module);
    if (!ptx) {
      getOperation().emitError() << llvm::toString(ptx.takeError());
      return failure();
    }
    return std::move(*ptx);
  }

  /// As upstream's, from this thread's target machine (upstream's would
  /// make one more).
  void setDataLayoutAndTriple(llvm::Module &module) override {
    FailureOr<llvm::TargetMachine *> machine = targetMachine();
    if (failed(machine))
      return; // reported; the steps after fail on it too
    module.setDataLayout((*machine)->createDataLayout());
    module.setTargetTriple((*machine)->getTargetTriple());
  }

private:
  /// This thread's code generator for the target (NvptxCodeGenerator.h),
  /// or an error on the gpu.module that says why there is none.
  FailureOr<NvptxCodeGenerator *> codeGenerator() {
    if (!generator) {
      llvm::Expected<std::shared_ptr<NvptxCodeGenerator>> made =
          NvptxCodeGenerator::forThread(triple, chip, features);
      if (!made) {
        getOperation().emitError() << llvm::toString(made.takeError());
        return failure();
      }
      generator = std::move(*made);
    }
    return generator.get();
  }

  FailureOr<llvm::TargetMachine *> targetMachine() {
    FailureOr<NvptxCodeGenerator *> made = codeGenerator();
    if (failed(made))
      return failure();
    return &(*made)->machine();
  }

  NVVM::NVVMTargetAttr target;
  std::shared_ptr<NvptxCodeGenerator> generator;
};

/// kjit-serialize-to-ptx: replaces the gpu.module (its one #nvvm.target
/// attached) by a gpu.binary holding one PTX object, the same operation
/// gpu-module-to-binary{format=isa} builds (the object comes from the
/// target's createObject), through PtxSerializer.
struct SerializeToPtxPass
    : PassWrapper<SerializeToPtxPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(SerializeToPtxPass)
  llvm::StringRef getArgument() const override {
    return "kjit-serialize-to-ptx";
  }
  llvm::StringRef getName() const override { return "KjitSerializeToPtx"; }
  llvm::StringRef getDescription() const override {
    return "gpu.module with an #nvvm.target -> gpu.binary with its PTX";
  }
  void runOnOperation() override {
    NVVM::SerializeGPUModuleBase::init();
    gpu::TargetOptions options({}, {}, {}, {},
                               gpu::CompilationTarget::Assembly);
    for (auto module : llvm::make_early_inc_range(
             getOperation().getOps<gpu::GPUModuleOp>())) {
      ArrayAttr targets = module.getTargetsAttr();
      auto target = targets && targets.size() == 1
                        ? dyn_cast<NVVM::NVVMTargetAttr>(targets[0])
                        : nullptr;
      if (!target) {
        module.emitError("kjit-serialize-to-ptx needs a gpu.module with one "
                         "#nvvm.target attached");
        return signalPassFailure();
      }
      // The runtime's compile verifies the IR only here and at the other
      // boundaries (docs/Runtime.md, "Verification"): LLVM's translation
      // must never see an invalid module.
      if (failed(mlir::verify(module))) {
        module.emitError("kjit-serialize-to-ptx: the gpu.module is not valid "
                         "IR (the errors above); nothing was translated");
        return signalPassFailure();
      }
      PtxSerializer serializer(module, target);
      std::optional<SmallVector<char, 0>> ptx = serializer.run();
      if (!ptx) {
        module.emitError("An error happened while serializing the module.");
        return signalPassFailure();
      }
      Attribute object = cast<gpu::TargetAttrInterface>(Attribute(target))
                             .createObject(module, *ptx, options);
      if (!object) {
        module.emitError("An error happened while creating the object.");
        return signalPassFailure();
      }
      OpBuilder builder(module);
      gpu::BinaryOp::create(builder, module.getLoc(), module.getName(),
                            module.getOffloadingHandlerAttr(),
                            builder.getArrayAttr({object}));
      module.erase();
    }
  }
};

class CudaTarget final : public Target {
public:
  llvm::StringRef name() const override { return "cuda"; }

  llvm::StringRef artifactFormat() const override { return "ptx"; }

  void registerDialects(DialectRegistry &registry) const override {
    registerKjitCudaSupport(registry);
  }

  llvm::Error validateOptions(const TargetOptions &options) const override {
    return resolveCudaConfig(options).takeError();
  }

  void buildPipeline(OpPassManager &pm,
                     const TargetOptions &options) const override {
    llvm::Expected<CudaConfig> config = resolveCudaConfig(options);
    if (!config) {
      pm.addPass(std::make_unique<RefuseOptionsPass>(
          llvm::toString(config.takeError())));
      return;
    }
    if (!options.debug)
      pm.addPass(createKjitStripAsserts());
    pm.addPass(createKjitBakeGlobals());
    pm.addPass(createKjitFoldBlockSize({options.numWarps}));
    pm.addPass(createCanonicalizerPass());
    KjitCudaLowerMatrixOptions matrix;
    matrix.numWarps = options.numWarps;
    matrix.numStages = options.numStages;
    matrix.chip = config->chip;
    pm.addPass(createKjitCudaLowerMatrix(matrix));
    pm.addPass(createKjitCheckNonePointers());
    KjitConvertToGPUOptions convert;
    convert.numWarps = options.numWarps;
    convert.maxNReg = options.maxNReg;
    convert.fpFusion = options.enableFpFusion;
    pm.addPass(createKjitConvertToGPU(convert));

    // Anchored on the gpu.module explicitly: a pipeline string parsed into
    // a pass manager on `any` nests one level too deep and runs nothing.
    OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
    // A pipelined loop's stage buffers are views into one ring.
    device.addPass(memref::createExpandStridedMetadataPass());
    device.addPass(createSCFToControlFlowPass());
    device.addPass(createConvertGpuOpsToNVVMOps());
    // wgmma and the other NVVM operations that are PTX text, not
    // intrinsics, become inline assembly.
    device.addPass(createConvertNVVMToLLVMPass());
    device.addPass(createCanonicalizerPass());
    device.addPass(createCSEPass());
    KjitFinalizeNVVMOptions finalize;
    finalize.libdevice = !config->libdevice.empty();
    device.addPass(createKjitFinalizeNVVM(finalize));
    // .file/.loc directives naming the .mlir file and the kernel's lines,
    // and no more: line tables (the pass's default) make NVPTX declare
    // `.target sm_90, debug`, which ptxas refuses at -O3 ("Optimized
    // debugging not supported"): every debug compile failed to finalize.
    addLineInfoPasses(pm, options, /*directivesOnly=*/true);

    GpuNVVMAttachTargetOptions attach;
    attach.chip = config->chip;
    attach.features = "+ptx" + std::to_string(config->ptx);
    attach.optLevel = 3;
    if (!config->libdevice.empty())
      attach.linkLibs.push_back(config->libdevice);
    pm.addPass(createGpuNVVMAttachTarget(attach));
    pm.addPass(std::make_unique<SerializeToPtxPass>());
  }

  /// Whether the PTX declares `.entry NAME(` (a whole name: not a prefix of
  /// a longer one).
  static bool hasEntry(StringRef ptx, StringRef name) {
    std::string entry = (".entry " + name + "(").str();
    return ptx.contains(entry);
  }

  llvm::Expected<TargetArtifact>
  emitArtifact(ModuleOp module, const TargetOptions &options) const override {
    llvm::Expected<CudaConfig> config = resolveCudaConfig(options);
    if (!config)
      return config.takeError();
    SmallVector<gpu::BinaryOp> binaries(module.getOps<gpu::BinaryOp>());
    if (binaries.size() != 1)
      return llvm::createStringError(
          "the cuda pipeline left " + std::to_string(binaries.size()) +
          " gpu.binary operations, not one: its gpu.module passes did not "
          "run (see docs/CudaTarget.md)");
    ArrayAttr objects = binaries[0].getObjects();
    auto object =
        objects.size() == 1 ? dyn_cast<gpu::ObjectAttr>(objects[0]) : nullptr;
    if (!object || object.getFormat() != gpu::CompilationTarget::Assembly)
      return llvm::createStringError(
          "the gpu.binary of the cuda pipeline does not hold one PTX object");
    // A PTX without the kernel's entry would load and then fail to find it
    // (or, with no kernel named, launch nothing): refused here, where the
    // pipeline that lost it can be named. It happens when extra passes
    // lower or remove the kjit.kernel before kjit-convert-to-gpu.
    auto kernel = module->getAttrOfType<StringAttr>("kjit.kernel_name");
    StringRef ptx = object.getObject().getValue();
    if (!kernel)
      return llvm::createStringError(
          "the cuda pipeline found no kjit.kernel to compile, so the PTX has "
          "no entry (did an extra pass lower or remove it before "
          "kjit-convert-to-gpu?)");
    if (!hasEntry(ptx, kernel.getValue()))
      return llvm::createStringError("the PTX has no '.entry " +
                                     kernel.getValue().str() +
                                     "' for the kernel it was compiled for");
    TargetArtifact artifact;
    artifact.bytes = ptx.str();
    auto shared = module->getAttrOfType<IntegerAttr>("kjit.shared_bytes");
    auto dynamicShared =
        module->getAttrOfType<IntegerAttr>("kjit.shared_dynamic_bytes");
    llvm::raw_string_ostream os(artifact.metadataJson);
    llvm::json::OStream json(os);
    json.object([&] {
      json.attribute("target", name());
      json.attribute("format", artifactFormat());
      json.attribute("arch", config->chip);
      json.attribute("ptx_version", config->ptx);
      json.attribute("kernel", kernel.getValue());
      json.attribute("num_warps", options.numWarps);
      json.attribute("shared_bytes", shared ? shared.getInt() : 0);
      // What each launch must ask for (tile buffers, docs/MatrixUnits.md).
      if (dynamicShared)
        json.attribute("shared_dynamic_bytes", dynamicShared.getInt());
      json.attribute("libdevice", !config->libdevice.empty());
    });
    return artifact;
  }
};

} // namespace

llvm::ArrayRef<CudaChip> kjit::getCudaChips() { return kChips; }

llvm::ArrayRef<int> kjit::getCudaPtxVersions() { return kPtxVersions; }

llvm::Expected<CudaConfig>
kjit::resolveCudaConfig(const TargetOptions &options) {
  CudaConfig config;
  config.chip = options.arch.empty() ? kDefaultChip : options.arch;
  const CudaChip *chip = nullptr;
  for (const CudaChip &known : kChips)
    if (config.chip == known.name)
      chip = &known;
  if (!chip) {
    std::string known;
    for (const CudaChip &c : kChips)
      known += (known.empty() ? "" : ", ") + std::string(c.name);
    return llvm::createStringError("unknown CUDA architecture '" + config.chip +
                                   "'; LLVM 22's NVPTX knows " + known);
  }
  bool seenPtx = false, seenLibdevice = false;
  std::optional<int> ptx;
  for (const auto &[name, value] : options.backendOptions) {
    if (name == "ptx") {
      if (seenPtx)
        return llvm::createStringError("option 'ptx' is given twice");
      seenPtx = true;
      ptx = parsePtx(value);
      if (!ptx)
        return llvm::createStringError(
            "option 'ptx' must be a PTX version such as 80 (PTX ISA 8.0), "
            "got '" +
            value + "'");
      if (llvm::Error bad = checkPtx(*ptx, *chip, "option 'ptx'"))
        return bad;
    } else if (name == "libdevice") {
      if (seenLibdevice)
        return llvm::createStringError("option 'libdevice' is given twice");
      seenLibdevice = true;
      if (llvm::Error bad = checkLibdevice(value))
        return bad;
      config.libdevice = value;
    } else {
      return llvm::createStringError("target 'cuda' takes no option '" + name +
                                     "' (it takes ptx and libdevice)");
    }
  }
  if (options.ptxVersion != 0) {
    // The launch's ptx_version option wins over the backend's default.
    if (llvm::Error bad =
            checkPtx(options.ptxVersion, *chip, "launch option 'ptx_version'"))
      return bad;
    ptx = static_cast<int>(options.ptxVersion);
  }
  // Unasked, PTX 8.0, or the oldest version the chip takes if it needs a
  // newer one (sm_100: 8.6).
  config.ptx = ptx.value_or(std::max(kDefaultPtx, chip->minPtx));
  // A cc 9.0 device runs sm_90a code, which alone has wgmma (the matrix
  // units' warpgroup multiply, docs/MatrixUnits.md): kernels compile for
  // it, as Triton's do, unless an older PTX than 8.0 is asked for. The
  // code runs only on cc 9.0, the device the compile is for.
  if (config.chip == "sm_90" && config.ptx >= 80)
    config.chip = "sm_90a";
  return config;
}

void kjit::registerCudaTargetPasses() {
  registerKjitCudaPasses();
  PassRegistration<SerializeToPtxPass>();
}

std::unique_ptr<Target> kjit::createCudaTarget() {
  return std::make_unique<CudaTarget>();
}
