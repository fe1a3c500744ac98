//===- ConvertToGPU.cpp - the kjit-convert-to-gpu pass --------------------===//
//
// Lowers a specialized module with its globals baked in to the gpu dialect
// that convert-gpu-to-nvvm takes: the kernel becomes a gpu.func kernel in a
// gpu.module, device functions func.funcs, kjit pointers !llvm.ptr<1>, and
// loads and stores GEPs with llvm.load/llvm.store at the alignment the
// specialization proves. Loads, stores, null and the program ids are the
// common patterns (lib/Conversion/CommonPatterns.h) with the cuda target's
// LoweringTargetInfo (Lowering, below). Rationale: docs/CudaTarget.md.
//
//===----------------------------------------------------------------------===//

#include "Conversion/CommonPatterns.h"
#include "Conversion/ExpandForLLVM.h"
#include "Conversion/FpFusion.h"
#include "Conversion/ResolvedParameters.h"

#include "kjit/Analysis/Divisibility.h"
#include "kjit/Dialect/Kjit/IR/Kjit.h"
#include "kjit/Target/Cuda/Passes.h"
#include "kjit/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/ControlFlow/Transforms/StructuralTypeConversions.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/DialectConversion.h"

namespace kjit {
#define GEN_PASS_DEF_KJITCONVERTTOGPU
#include "kjit/Target/Cuda/Passes.h.inc"
} // namespace kjit

using namespace mlir;
using namespace kjit;

namespace {

/// The global address space of NVVM.
constexpr unsigned kGlobalAddressSpace = 1;

/// The alignment in bytes of a load or store of `type` at base[offset]: the
/// base's specialized divisibility (element size without one), the
/// offset's known divisor in bytes, and no more than the access itself.
unsigned getAccessAlignment(Value base, Value offset, Type type) {
  auto pointer = cast<PointerType>(base.getType());
  uint64_t element = pointer.getElementByteWidth();
  uint64_t access = element;
  if (auto vector = dyn_cast<VectorType>(type))
    access = element * vector.getNumElements();
  uint64_t baseAlign = element;
  if (auto arg = dyn_cast<BlockArgument>(base))
    if (auto kernel = dyn_cast<KernelOp>(arg.getOwner()->getParentOp()))
      if (auto divisor = kernel.getArgAttrOfType<IntegerAttr>(
              arg.getArgNumber(), KjitDialect::kDivisibilityAttrName))
        baseAlign = std::max<uint64_t>(element, divisor.getInt());
  uint64_t offsetAlign = element * knownDivisor(offset);
  return static_cast<unsigned>(
      std::max(element, std::min({baseAlign, offsetAlign, access})));
}

//===----------------------------------------------------------------------===//
// Functions, calls, returns
//===----------------------------------------------------------------------===//

/// What the patterns share, and the cuda target in the common patterns:
/// pointers in the global address space, masks as scf.if, the alignments
/// the specialization proves, program ids from gpu.block_id and
/// gpu.grid_dim.
struct Lowering : LoweringTargetInfo {
  Lowering() : LoweringTargetInfo(kGlobalAddressSpace, MaskLowering::Branch) {}

  /// The alignment of each kjit.load/kjit.store, taken before conversion.
  llvm::DenseMap<Operation *, unsigned> alignments;
  /// The device functions marked noinline.
  llvm::DenseSet<StringAttr> noinline;
  int64_t numWarps = 4;
  int64_t maxNReg = 0;

  unsigned getAccessAlignment(Operation *access, PointerType) const override {
    return alignments.lookup(access);
  }

  Value getProgramId(ConversionPatternRewriter &rewriter, Operation *op,
                     Axis axis) const override {
    return getGridValue<gpu::BlockIdOp>(rewriter, op, axis);
  }

  Value getNumPrograms(ConversionPatternRewriter &rewriter, Operation *op,
                       Axis axis) const override {
    return getGridValue<gpu::GridDimOp>(rewriter, op, axis);
  }

  template <typename GpuOp>
  static Value getGridValue(ConversionPatternRewriter &rewriter, Operation *op,
                            Axis axis) {
    Value id = GpuOp::create(rewriter, op->getLoc(),
                             static_cast<gpu::Dimension>(axis));
    return arith::IndexCastOp::create(rewriter, op->getLoc(),
                                      rewriter.getI32Type(), id);
  }
};

/// kjit.kernel -> gpu.func kernel. The parameters are the launch arguments
/// in order (i1 has become i8 already); D pointers carry llvm.align.
struct KernelLowering : OpConversionPattern<KernelOp> {
  KernelLowering(const TypeConverter &converter, MLIRContext *context,
                 const Lowering &lowering)
      : OpConversionPattern(converter, context), lowering(lowering) {}

  LogicalResult
  matchAndRewrite(KernelOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FunctionType type = op.getFunctionType();
    if (type.getNumResults() != 0)
      return rewriter.notifyMatchFailure(op, "kernels return nothing");
    TypeConverter::SignatureConversion signature(type.getNumInputs());
    if (failed(convertSignature(*getTypeConverter(), type, signature)))
      return rewriter.notifyMatchFailure(op, "unconvertible parameter");
    auto fn = gpu::GPUFuncOp::create(
        rewriter, op.getLoc(), op.getSymName(),
        rewriter.getFunctionType(signature.getConvertedTypes(), {}));
    fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                rewriter.getUnitAttr());
    auto threads = static_cast<int32_t>(32 * lowering.numWarps);
    fn.setKnownBlockSizeAttr(rewriter.getDenseI32ArrayAttr({threads, 1, 1}));
    if (lowering.maxNReg > 0)
      fn->setAttr("nvvm.maxnreg", rewriter.getI32IntegerAttr(
                                      static_cast<int32_t>(lowering.maxNReg)));
    rewriter.eraseBlock(&fn.getBody().front());
    rewriter.inlineRegionBefore(op.getBody(), fn.getBody(), fn.getBody().end());
    if (failed(rewriter.convertRegionTypes(&fn.getBody(), *getTypeConverter(),
                                           &signature)))
      return failure();

    lowerDivisibility(rewriter, op, fn);
    rewriter.eraseOp(op);
    return success();
  }

  const Lowering &lowering;
};

/// kjit.func -> func.func; private ones get internal linkage (no
/// `.visible` PTX function).
struct FuncLowering : OpConversionPattern<FuncOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(FuncOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FunctionType type = op.getFunctionType();
    TypeConverter::SignatureConversion signature(type.getNumInputs());
    SmallVector<Type> results;
    if (failed(convertSignature(*getTypeConverter(), type, signature)) ||
        failed(getTypeConverter()->convertTypes(type.getResults(), results)))
      return rewriter.notifyMatchFailure(op, "unconvertible signature");
    auto fn = func::FuncOp::create(
        rewriter, op.getLoc(), op.getSymName(),
        rewriter.getFunctionType(signature.getConvertedTypes(), results));
    if (op.getSymVisibility() == "private") {
      fn.setPrivate();
      fn->setAttr(
          "llvm.linkage",
          LLVM::LinkageAttr::get(op.getContext(), LLVM::Linkage::Internal));
    }
    rewriter.inlineRegionBefore(op.getBody(), fn.getBody(), fn.end());
    if (failed(rewriter.convertRegionTypes(&fn.getBody(), *getTypeConverter(),
                                           &signature)))
      return failure();
    rewriter.eraseOp(op);
    return success();
  }
};

struct ReturnLowering : OpConversionPattern<ReturnOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReturnOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (isa<gpu::GPUFuncOp>(op->getParentOp()))
      rewriter.replaceOpWithNewOp<gpu::ReturnOp>(op, adaptor.getOperands());
    else
      rewriter.replaceOpWithNewOp<func::ReturnOp>(op, adaptor.getOperands());
    return success();
  }
};

/// kjit.call -> func.call; a call of a noinline function carries the
/// call-site `no_inline`, the one spelling the NVVM lowering keeps (it
/// drops the function's own).
struct CallLowering : OpConversionPattern<CallOp> {
  CallLowering(const TypeConverter &converter, MLIRContext *context,
               const Lowering &lowering)
      : OpConversionPattern(converter, context), lowering(lowering) {}

  LogicalResult
  matchAndRewrite(CallOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<Type> results;
    if (failed(getTypeConverter()->convertTypes(op.getResultTypes(), results)))
      return rewriter.notifyMatchFailure(op, "unconvertible result");
    auto call = func::CallOp::create(rewriter, op.getLoc(), op.getCalleeAttr(),
                                     results, adaptor.getArgs());
    if (lowering.noinline.contains(op.getCalleeAttr().getAttr()))
      call.setNoInline(true);
    rewriter.replaceOp(op, call.getResults());
    return success();
  }

  const Lowering &lowering;
};

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

/// Any other operation without regions or successors whose operands or
/// results are kjit pointers (`arith.select` of two pointers, which the
/// canonicalizer also makes of an `scf.if` that yields one, or `ub.poison`)
/// is the same operation on the converted pointer type. (Structured control
/// flow is scf's own structural conversion.)
struct PointerTypedLowering : ConversionPattern {
  PointerTypedLowering(const TypeConverter &converter, MLIRContext *context)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1,
                          context) {}
  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (isa_and_present<KjitDialect>(op->getDialect()) ||
        op->getNumRegions() != 0 || op->getNumSuccessors() != 0)
      return failure();
    SmallVector<Type> types;
    if (failed(getTypeConverter()->convertTypes(op->getResultTypes(), types)))
      return failure();
    OperationState state(op->getLoc(), op->getName(), operands, types,
                         op->getDiscardableAttrDictionary().getValue());
    state.propertiesAttr = op->getPropertiesAsAttribute();
    rewriter.replaceOp(op, rewriter.create(state)->getResults());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Print and assert
//===----------------------------------------------------------------------===//

/// kjit.print -> gpu.printf (vprintf), in the host backend's format:
/// `pid (x, y, z) tid (t, 0, 0) <prefix><values>`, values separated by a
/// space (and from the prefix unless it ends in one); integers in decimal,
/// i1 as 0/1, floats as %g, pointers in hex.
struct PrintLowering : OpConversionPattern<PrintOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PrintOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type i32 = rewriter.getI32Type(), i64 = rewriter.getI64Type();
    std::string format = "pid (%u, %u, %u) tid (%u, 0, 0) ";
    SmallVector<Value> args;
    for (gpu::Dimension dim :
         {gpu::Dimension::x, gpu::Dimension::y, gpu::Dimension::z})
      args.push_back(arith::IndexCastOp::create(
          rewriter, loc, i32, gpu::BlockIdOp::create(rewriter, loc, dim)));
    args.push_back(arith::IndexCastOp::create(
        rewriter, loc, i32,
        gpu::ThreadIdOp::create(rewriter, loc, gpu::Dimension::x)));
    for (char c : op.getPrefix()) {
      format += c;
      if (c == '%')
        format += '%';
    }
    for (auto [value, source] : llvm::zip(adaptor.getArgs(), op.getArgs())) {
      if (!format.empty() && format.back() != ' ')
        format += ' ';
      Type type = source.getType();
      if (isa<PointerType>(type)) {
        format += "0x%llx";
        args.push_back(LLVM::PtrToIntOp::create(rewriter, loc, i64, value));
      } else if (auto floatType = dyn_cast<FloatType>(type)) {
        format += "%g";
        args.push_back(floatType.getWidth() < 64
                           ? arith::ExtFOp::create(rewriter, loc,
                                                   rewriter.getF64Type(), value)
                                 .getResult()
                           : value);
      } else if (type.isIndex()) {
        format += "%lld";
        args.push_back(arith::IndexCastOp::create(rewriter, loc, i64, value));
      } else if (type.isInteger(1)) {
        format += "%llu";
        args.push_back(arith::ExtUIOp::create(rewriter, loc, i64, value));
      } else {
        format += "%lld";
        args.push_back(type.isInteger(64)
                           ? value
                           : arith::ExtSIOp::create(rewriter, loc, i64, value)
                                 .getResult());
      }
    }
    format += '\n';
    gpu::PrintfOp::create(rewriter, loc, format, args);
    rewriter.eraseOp(op);
    return success();
  }
};

/// kjit.assert -> cf.assert, which the NVVM lowering turns into a call of
/// __assertfail (CUDA reports block, thread, file, line and the message).
struct AssertLowering : OpConversionPattern<AssertOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AssertOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<cf::AssertOp>(op, adaptor.getCondition(),
                                              op.getMessage());
    return success();
  }
};

/// kjit.warp_barrier -> nvvm.bar.warp.sync with every lane in the mask.
struct WarpBarrierLowering : OpConversionPattern<WarpBarrierOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(WarpBarrierOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value lanes = arith::ConstantOp::create(rewriter, op.getLoc(),
                                            rewriter.getI32IntegerAttr(-1));
    rewriter.replaceOpWithNewOp<NVVM::SyncWarpOp>(op, lanes);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// The byte size of a statically shaped workgroup memref.global, or 0.
uint64_t getWorkgroupBytes(memref::GlobalOp global) {
  MemRefType type = global.getType();
  auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(type.getMemorySpace());
  if (!space || space.getValue() != gpu::AddressSpace::Workgroup ||
      !type.hasStaticShape())
    return 0;
  return type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
}

struct ConvertToGPUPass : kjit::impl::KjitConvertToGPUBase<ConvertToGPUPass> {
  using KjitConvertToGPUBase::KjitConvertToGPUBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    if (failed(kjit::checkNumWarpsOption(module, getArgument(), numWarps)))
      return signalPassFailure();
    if (failed(checkReady(module)))
      return signalPassFailure();

    Lowering lowering;
    lowering.numWarps = numWarps;
    lowering.maxNReg = maxNReg;
    module.walk([&](Operation *op) {
      if (auto load = dyn_cast<LoadOp>(op))
        lowering.alignments[op] = getAccessAlignment(
            load.getBase(), load.getOffset(), load.getType());
      else if (auto store = dyn_cast<StoreOp>(op))
        lowering.alignments[op] = getAccessAlignment(
            store.getBase(), store.getOffset(), store.getValue().getType());
      else if (auto fn = dyn_cast<FuncOp>(op); fn && fn.getNoinline())
        lowering.noinline.insert(fn.getSymNameAttr());
    });
    // enable_fp_fusion: NVPTX forms fma.rn from contractable pairs; without
    // it the ops stay mul.rn/add.rn, which ptxas does not fuse either.
    setFpContraction(module, fpFusion);
    passBoolsAsBytes(module);
    lowerExactMath(module);
    expandForLLVM(module);

    // Everything the device runs moves into one gpu.module; the globals
    // were baked in.
    OpBuilder b(context);
    b.setInsertionPointToEnd(module.getBody());
    auto device = gpu::GPUModuleOp::create(b, module.getLoc(), "kjit_device");
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    b.getUnitAttr());
    uint64_t sharedBytes = 0;
    SmallVector<StringRef> kernelNames;
    for (Operation &op : llvm::make_early_inc_range(*module.getBody())) {
      if (isa<GlobalOp>(op)) {
        op.erase();
        continue;
      }
      if (auto kernel = dyn_cast<KernelOp>(op))
        kernelNames.push_back(kernel.getSymName());
      if (auto global = dyn_cast<memref::GlobalOp>(op))
        sharedBytes += getWorkgroupBytes(global);
      if (isa<KernelOp, FuncOp, func::FuncOp, memref::GlobalOp>(op))
        op.moveBefore(device.getBody(), device.getBody()->end());
    }
    if (kernelNames.size() == 1)
      module->setAttr("kjit.kernel_name", b.getStringAttr(kernelNames[0]));
    module->setAttr("kjit.shared_bytes", b.getI64IntegerAttr(sharedBytes));

    TypeConverter converter;
    converter.addConversion([](Type type) { return type; });
    converter.addConversion([&](PointerType type) -> Type {
      return lowering.getPointerType(type.getContext());
    });
    ConversionTarget target(*context);
    target.addIllegalDialect<KjitDialect>();
    target.markUnknownOpDynamicallyLegal(
        [&](Operation *op) { return converter.isLegal(op); });
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp fn) {
      return converter.isSignatureLegal(fn.getFunctionType());
    });
    RewritePatternSet patterns(context);
    patterns.add<KernelLowering, CallLowering>(converter, context, lowering);
    patterns.add<FuncLowering, ReturnLowering, PrintLowering, AssertLowering,
                 WarpBarrierLowering, PointerTypedLowering>(converter, context);
    populateCommonKjitPatterns(converter, patterns, lowering);
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         target);
    // Branches that pass pointers to other blocks (found by fuzzing: they
    // were "failed to legalize 'cf.br'").
    cf::populateCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                       target);
    if (failed(applyPartialConversion(device, target, std::move(patterns))))
      return signalPassFailure();
  }

  /// What the lowering does not take: unspecialized parameters, global
  /// reads (kjit-bake-globals first), kjit and gpu operations outside
  /// functions, a gpu.module of the input's own.
  static LogicalResult checkReady(ModuleOp module) {
    // Pre-order: a gpu.module is refused before the operations in it.
    WalkResult result = module.walk<WalkOrder::PreOrder>([](Operation *op) {
      if (auto castOp = dyn_cast<CastOp>(op)) {
        castOp.emitError() << "'kjit.cast' reaches the cuda lowering; run "
                              "kjit-specialize first";
        return WalkResult::interrupt();
      }
      if (auto read = dyn_cast<GetGlobalOp>(op)) {
        read.emitError() << "'kjit.get_global' of " << read.getGlobalAttr()
                         << " reaches the cuda lowering; run "
                            "kjit-bake-globals first";
        return WalkResult::interrupt();
      }
      // The lowering creates the only gpu.module: one already there would
      // be compiled beside it and its binary taken for the kernel's.
      if (auto existing = dyn_cast<gpu::GPUModuleOp>(op)) {
        existing.emitError()
            << "the module already has a gpu.module (@" << existing.getName()
            << "); kjit-convert-to-gpu moves the kjit.kernel into the only "
               "one, @kjit_device";
        return WalkResult::interrupt();
      }
      // kjit and gpu body operations (ids, barriers) outside the functions
      // that move into the gpu.module would stay behind and vanish from the
      // PTX without a word.
      MLIRContext *context = op->getContext();
      Dialect *dialect = op->getDialect();
      if (dialect &&
          (dialect == context->getLoadedDialect<KjitDialect>() ||
           dialect == context->getLoadedDialect<gpu::GPUDialect>()) &&
          !isa<KernelOp, FuncOp, GlobalOp>(op) &&
          !op->getParentOfType<KernelOp>() && !op->getParentOfType<FuncOp>() &&
          !op->getParentOfType<func::FuncOp>()) {
        op->emitError() << "'" << op->getName()
                        << "' can only be lowered inside a kjit.kernel, "
                           "kjit.func or func.func";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return failure();
    for (auto kernel : module.getOps<KernelOp>()) {
      // The PTX entry is named after the kernel, and a PTX identifier has
      // no '.' or '-' (NVPTX would write it as it is, for ptxas to refuse
      // at load). The host backend refuses the same names.
      if (!isValidParamName(kernel.getSymName()))
        return kernel.emitError()
               << "kernel name '" << kernel.getSymName()
               << "' is not an identifier (letters, digits and '_', not "
                  "starting with a digit), so it cannot name a PTX entry";
      if (failed(checkParametersResolved(kernel)))
        return failure();
    }
    return success();
  }

  /// Math operations that are one exact PTX instruction become LLVM
  /// intrinsics: convert-gpu-to-nvvm would make each a libdevice call
  /// (`__nv_fmaf`, ...), and a kernel without transcendental functions must
  /// not need libdevice. Only on the types the intrinsics take (an LLVM
  /// float, or a 1-D vector of one): on others (f8, a 2-D or 0-d vector)
  /// the intrinsic would not verify, so the operation is left to
  /// convert-gpu-to-nvvm, which unrolls or refuses it with its own message.
  ///
  /// The bit counts (`math.ctlz`, `cttz`, `ctpop`: `clz`, `brev` + `clz`,
  /// `popc`) have no libdevice form, and convert-gpu-to-nvvm leaves them
  /// for LLVM's translation, which cannot take math operations: on integers
  /// and 1-D vectors of them they become LLVM's intrinsics too, defined at
  /// zero as math's are.
  static void lowerExactMath(ModuleOp module) {
    module.walk([](Operation *op) {
      if (isa<math::CountLeadingZerosOp, math::CountTrailingZerosOp,
              math::CtPopOp>(op)) {
        lowerBitCount(op);
        return;
      }
      if (!isa<math::FmaOp, math::AbsFOp, math::SqrtOp, math::FloorOp,
               math::CeilOp, math::TruncOp, math::CopySignOp>(op))
        return;
      Type type = op->getResult(0).getType();
      if (!LLVM::isCompatibleType(type) ||
          !LLVM::isCompatibleFloatingPointType(getElementTypeOrSelf(type)))
        return;
      OpBuilder b(op);
      OperationState state(op->getLoc(),
                           isa<math::FmaOp>(op)     ? "llvm.intr.fma"
                           : isa<math::AbsFOp>(op)  ? "llvm.intr.fabs"
                           : isa<math::SqrtOp>(op)  ? "llvm.intr.sqrt"
                           : isa<math::FloorOp>(op) ? "llvm.intr.floor"
                           : isa<math::CeilOp>(op)  ? "llvm.intr.ceil"
                           : isa<math::TruncOp>(op) ? "llvm.intr.trunc"
                                                    : "llvm.intr.copysign");
      state.addOperands(op->getOperands());
      state.addTypes(op->getResultTypes());
      Operation *intrinsic = b.create(state);
      op->replaceAllUsesWith(intrinsic);
      op->erase();
    });
  }

  /// An `index` is 64 bits on the device (the lowering keeps index
  /// arithmetic 64-bit): counted as an i64 between two index_casts.
  static void lowerBitCount(Operation *op) {
    Location loc = op->getLoc();
    Type type = op->getResult(0).getType();
    Type counted = type;
    if (isa<IndexType>(getElementTypeOrSelf(type))) {
      Type i64 = IntegerType::get(op->getContext(), 64);
      auto vector = dyn_cast<VectorType>(type);
      counted = vector ? Type(vector.clone(i64)) : i64;
    }
    if (!LLVM::isCompatibleType(counted) ||
        !isa<IntegerType>(getElementTypeOrSelf(counted)))
      return;
    OpBuilder b(op);
    Value operand = op->getOperand(0);
    if (counted != type)
      operand = arith::IndexCastOp::create(b, loc, counted, operand);
    Value count;
    if (isa<math::CountLeadingZerosOp>(op))
      count = LLVM::CountLeadingZerosOp::create(b, loc, counted, operand,
                                                /*is_zero_poison=*/false);
    else if (isa<math::CountTrailingZerosOp>(op))
      count = LLVM::CountTrailingZerosOp::create(b, loc, counted, operand,
                                                 /*is_zero_poison=*/false);
    else
      count = LLVM::CtPopOp::create(b, loc, counted, operand);
    if (counted != type)
      count = arith::IndexCastOp::create(b, loc, type, count);
    op->getResult(0).replaceAllUsesWith(count);
    op->erase();
  }

  /// A bool launch argument is one byte (the runtime's kjit_arg): the entry
  /// takes i8 and the body sees `trunc` of it.
  static void passBoolsAsBytes(ModuleOp module) {
    for (auto kernel : module.getOps<KernelOp>()) {
      Block &entry = kernel.getBody().front();
      SmallVector<Type> inputs(kernel.getArgumentTypes());
      bool changed = false;
      OpBuilder b(&entry, entry.begin());
      for (auto [i, arg] : llvm::enumerate(entry.getArguments())) {
        if (!arg.getType().isInteger(1))
          continue;
        changed = true;
        arg.setType(b.getI8Type());
        inputs[i] = arg.getType();
        auto truncated =
            arith::TruncIOp::create(b, kernel.getLoc(), b.getI1Type(), arg);
        arg.replaceAllUsesExcept(truncated, truncated);
      }
      if (changed)
        kernel.setFunctionTypeAttr(
            TypeAttr::get(FunctionType::get(kernel.getContext(), inputs, {})));
    }
  }
};

} // namespace
