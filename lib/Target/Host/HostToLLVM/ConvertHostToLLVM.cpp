//===- ConvertHostToLLVM.cpp - the kjit-convert-host-to-llvm pass ---------===//
//
// Lowers a specialized, prepared module to the LLVM dialect following the
// host kernel ABI (include/kjit-c/HostKernel.h): checks that nothing the
// lowering cannot take is left, lowers scf to cf, converts kjit (Patterns.cpp)
// and the upstream dialects to LLVM, makes workgroup memory thread-local
// (Workgroup.cpp) and emits the ABI symbols (Symbols.cpp).
// Rationale: docs/HostTarget.md.
//
//===----------------------------------------------------------------------===//

#include "Conversion/ExpandForLLVM.h"
#include "Conversion/FpFusion.h"
#include "Conversion/ResolvedParameters.h"
#include "HostABI.h"
#include "HostToLLVM.h"

#include "kjit/Dialect/Kjit/IR/Kjit.h"
#include "kjit/Target/Host/Passes.h"
#include "kjit/Transforms/ApplySpecialization.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/DialectConversion.h"

#include "kjit-c/HostKernel.h"

namespace kjit {
#define GEN_PASS_DEF_KJITCONVERTHOSTTOLLVM
#include "kjit/Target/Host/Passes.h.inc"
} // namespace kjit

using namespace mlir;
using namespace kjit;
using namespace kjit::host;

namespace {

/// Whether `kernel` or a function it reaches through calls contains a
/// barrier (of the workgroup or of a warp: both need fibers). A plain walk over
/// the reachable set: memoizing per function would record "no barrier" for a
/// function still being explored in a cycle.
bool usesBarrier(FunctionOpInterface kernel, SymbolTableCollection &symbols) {
  SmallVector<Operation *> work = {kernel};
  llvm::SmallPtrSet<Operation *, 8> seen = {kernel};
  while (!work.empty()) {
    Operation *fn = work.pop_back_val();
    bool found = false;
    fn->walk([&](Operation *op) {
      if (isa<gpu::BarrierOp, WarpBarrierOp>(op))
        found = true;
      else if (auto call = dyn_cast<CallOpInterface>(op))
        if (Operation *callee = call.resolveCallableInTable(&symbols))
          if (seen.insert(callee).second)
            work.push_back(callee);
    });
    if (found)
      return true;
  }
  return false;
}

/// The signature types of `kernel`'s launch arguments, as the runtime
/// spells them and the backend compares them: each parameter's
/// `kjit.signature_type` (set by specialization where the type cannot say
/// it), or its type's spelling (`*k` for a `kjit.const` pointer). Constexpr
/// parameters are not passed; specialization has removed them already.
/// The one place the lowering turns types into text: the object's
/// kjit_host_signature_K symbol.
std::string getLaunchSignature(KernelOp kernel) {
  std::string signature;
  for (unsigned i = 0; i < kernel.getNumArguments(); ++i) {
    if (!signature.empty())
      signature += ',';
    if (auto typed = kernel.getArgAttrOfType<SignatureTypeAttr>(
            i, KjitDialect::kSignatureTypeAttrName))
      signature += printSignatureType(typed);
    else
      signature += printParamSignatureType(kernel, i);
  }
  return signature;
}

struct ConvertHostToLLVMPass
    : kjit::impl::KjitConvertHostToLLVMBase<ConvertHostToLLVMPass> {
  using KjitConvertHostToLLVMBase::KjitConvertHostToLLVMBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    if (failed(checkPlacement(module)) || failed(checkSpecialized(module)) ||
        failed(checkPrepared(module)) || failed(checkWorkgroupSize(module)))
      return signalPassFailure();
    // Extents and bounds_fail are ABI 2, warp_barrier ABI 3; nothing else
    // needs more than 1.
    bool usesExtents = debugChecks && insertDebugChecks(module);
    bool usesWarpBarrier =
        module.walk([](WarpBarrierOp) { return WalkResult::interrupt(); })
            .wasInterrupted();
    // enable_fp_fusion: the flags reach the LLVM ops, which the code
    // generator fuses only where both carry `contract` (HostCodegen.cpp).
    setFpContraction(module, fpFusion);
    SmallVector<StringAttr> workgroup = makeWorkgroupMemoryThreadLocal(module);

    // What the ABI symbols need, taken before the kernels are converted.
    SmallVector<KernelABIInfo> kernels;
    SymbolTableCollection symbols;
    for (auto kernel : module.getOps<KernelOp>())
      kernels.push_back({kernel.getSymName().str(),
                         llvm::to_vector(kernel.getArgumentTypes()),
                         usesBarrier(kernel, symbols),
                         getLaunchSignature(kernel)});

    // scf -> cf, then everything -> llvm.
    OpPassManager scfToCf(ModuleOp::getOperationName());
    scfToCf.addPass(createSCFToControlFlowPass());
    if (failed(runPipeline(scfToCf, module)))
      return signalPassFailure();
    expandForLLVM(module);

    LowerToLLVMOptions options(context);
    LLVMTypeConverter converter(context, options);
    converter.addConversion(
        [&](PointerType) -> Type { return opaquePtr(context); });
    RewritePatternSet patterns(context);
    populateKjitToHostLLVMPatterns(converter, patterns);
    arith::populateArithToLLVMConversionPatterns(converter, patterns);
    populateMathToLLVMConversionPatterns(converter, patterns);
    cf::populateControlFlowToLLVMConversionPatterns(converter, patterns);
    populateFinalizeMemRefToLLVMConversionPatterns(converter, patterns);
    populateVectorToLLVMConversionPatterns(converter, patterns);
    index::populateIndexToLLVMConversionPatterns(converter, patterns);
    ub::populateUBToLLVMConversionPatterns(converter, patterns);
    LLVMConversionTarget target(*context);
    target.addLegalOp<ModuleOp>();
    if (failed(applyFullConversion(module, target, std::move(patterns))))
      return signalPassFailure();

    OpPassManager cleanup(ModuleOp::getOperationName());
    cleanup.addPass(createReconcileUnrealizedCastsPass());
    if (failed(runPipeline(cleanup, module)))
      return signalPassFailure();

    OpBuilder b(context);
    lowerWorkgroupGlobals(b, module, workgroup);
    for (const KernelABIInfo &kernel : kernels)
      emitKernelSymbols(b, module, kernel, converter);
    emitABIVersion(b, module,
                   usesWarpBarrier ? 3
                   : usesExtents   ? 2
                                   : KJIT_HOST_ABI_MIN_VERSION);
  }

  /// kjit's body operations and gpu's thread and block queries and barriers
  /// must be in kernels or device functions: their lowering reads the thread
  /// argument those take, and a stray one would find no function at all.
  static LogicalResult checkPlacement(ModuleOp module) {
    MLIRContext *context = module.getContext();
    Dialect *kjit = context->getLoadedDialect<KjitDialect>();
    Dialect *gpu = context->getLoadedDialect<gpu::GPUDialect>();
    WalkResult placed = module.walk([&](Operation *op) {
      Dialect *dialect = op->getDialect();
      if (!dialect || (dialect != kjit && dialect != gpu) ||
          isa<KernelOp, FuncOp, GlobalOp>(op) ||
          op->getParentOfType<KernelOp>() || op->getParentOfType<FuncOp>())
        return WalkResult::advance();
      op->emitError() << "'" << op->getName()
                      << "' can only be lowered inside a kjit.kernel or "
                         "kjit.func";
      return WalkResult::interrupt();
    });
    return failure(placed.wasInterrupted());
  }

  /// Everything the binder resolves must be resolved before lowering.
  static LogicalResult checkSpecialized(ModuleOp module) {
    WalkResult result = module.walk([](CastOp castOp) {
      auto kernel = castOp->getParentOfType<KernelOp>();
      unsigned index = cast<BlockArgument>(castOp.getInput()).getArgNumber();
      castOp.emitError() << "parameter '" << kernel.getParamName(index)
                         << "' of '@" << kernel.getSymName()
                         << "' has no type yet; run kjit-specialize first";
      return WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      return failure();
    for (auto kernel : module.getOps<KernelOp>())
      if (failed(checkParametersResolved(kernel)))
        return failure();
    return success();
  }

  /// The target-independent preparation must have run: the lowering takes
  /// neither global reads nor masked accesses, so a pipeline that forgot a
  /// preparation pass fails here, naming it.
  static LogicalResult checkPrepared(ModuleOp module) {
    WalkResult result = module.walk([](Operation *op) {
      if (auto read = dyn_cast<GetGlobalOp>(op)) {
        read.emitError() << "'kjit.get_global' of " << read.getGlobalAttr()
                         << " reaches the host lowering; run "
                            "kjit-bake-globals first";
        return WalkResult::interrupt();
      }
      Value mask;
      if (auto load = dyn_cast<LoadOp>(op))
        mask = load.getMask();
      else if (auto store = dyn_cast<StoreOp>(op))
        mask = store.getMask();
      if (!mask)
        return WalkResult::advance();
      op->emitError() << "masked '" << op->getName()
                      << "' reaches the host lowering; run kjit-expand-masks "
                         "first";
      return WalkResult::interrupt();
    });
    return failure(result.wasInterrupted());
  }
};

} // namespace
