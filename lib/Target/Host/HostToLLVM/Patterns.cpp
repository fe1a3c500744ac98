//===- Patterns.cpp - kjit operations to the host's LLVM dialect ----------===//
//
// The conversion patterns of kjit-convert-host-to-llvm for kjit's operations
// and the gpu ids: every function takes the SIMT thread's
// `kjit_host_thread *` as its last argument, ids are loads from it, and
// barriers, prints and asserts are calls through its runtime table
// (include/kjit-c/HostKernel.h, docs/HostTarget.md). Loads, stores, null and
// the program ids are the common patterns (lib/Conversion/CommonPatterns.h)
// with the host's LoweringTargetInfo below.
//
//===----------------------------------------------------------------------===//

#include "Conversion/CommonPatterns.h"
#include "HostABI.h"
#include "HostToLLVM.h"

#include "kjit/Dialect/Kjit/IR/Kjit.h"

#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Transforms/DialectConversion.h"

#include "kjit-c/HostKernel.h"

using namespace mlir;
using namespace kjit;
using namespace kjit::host;

namespace {

//===----------------------------------------------------------------------===//
// Functions, calls, returns
//===----------------------------------------------------------------------===//

/// kjit.kernel and kjit.func become internal llvm.funcs taking the thread
/// last. `kjit.divisibility` becomes `llvm.align` on pointers and an
/// assumption on integers (lowerDivisibility, shared with the cuda target).
template <typename OpTy>
struct FunctionLowering : ConvertOpToLLVMPattern<OpTy> {
  using ConvertOpToLLVMPattern<OpTy>::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    const LLVMTypeConverter &converter = *this->getTypeConverter();
    MLIRContext *context = op.getContext();
    FunctionType type = op.getFunctionType();
    TypeConverter::SignatureConversion signature(type.getNumInputs());
    if (failed(convertSignature(converter, type, signature)))
      return rewriter.notifyMatchFailure(op, "unconvertible parameter");
    signature.addInputs(opaquePtr(context)); // the thread
    Type result = type.getNumResults() == 0
                      ? LLVM::LLVMVoidType::get(context)
                      : converter.packFunctionResults(type.getResults());
    if (!result)
      return rewriter.notifyMatchFailure(op, "unconvertible result");
    auto llvmType =
        LLVM::LLVMFunctionType::get(result, signature.getConvertedTypes());
    auto fn = LLVM::LLVMFuncOp::create(rewriter, op.getLoc(), op.getSymName(),
                                       llvmType, LLVM::Linkage::Internal);
    if (op->hasAttr("noinline"))
      fn.setNoInline(true);
    // A frame larger than a page probes each page on the way down, so that
    // a stack overflow always hits the guard page (a fault the backend
    // reports) instead of jumping over it into a neighbouring fiber's
    // stack.
    fn.setPassthroughAttr(rewriter.getArrayAttr(
        {rewriter.getArrayAttr({rewriter.getStringAttr("probe-stack"),
                                rewriter.getStringAttr("inline-asm")})}));
    rewriter.inlineRegionBefore(op.getBody(), fn.getBody(), fn.end());
    if (failed(
            rewriter.convertRegionTypes(&fn.getBody(), converter, &signature)))
      return failure();

    lowerDivisibility(rewriter, op, fn);
    rewriter.eraseOp(op);
    return success();
  }
};

struct ReturnLowering : ConvertOpToLLVMPattern<ReturnOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(ReturnOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ValueRange values = adaptor.getOperands();
    if (values.size() <= 1) {
      rewriter.replaceOpWithNewOp<LLVM::ReturnOp>(op, values);
      return success();
    }
    Type packed = getTypeConverter()->packFunctionResults(op.getOperandTypes());
    Value result = LLVM::PoisonOp::create(rewriter, op.getLoc(), packed);
    for (auto [i, value] : llvm::enumerate(values))
      result =
          LLVM::InsertValueOp::create(rewriter, op.getLoc(), result, value, i);
    rewriter.replaceOpWithNewOp<LLVM::ReturnOp>(op, result);
    return success();
  }
};

struct CallLowering : ConvertOpToLLVMPattern<CallOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(CallOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<Value> args(adaptor.getArgs());
    args.push_back(getThread(op));
    TypeRange resultTypes = op.getResultTypes();
    SmallVector<Type> llvmResults;
    if (!resultTypes.empty())
      llvmResults.push_back(
          getTypeConverter()->packFunctionResults(resultTypes));
    auto call = LLVM::CallOp::create(rewriter, op.getLoc(), llvmResults,
                                     op.getCalleeAttr(), args);
    if (resultTypes.size() <= 1) {
      rewriter.replaceOp(op, call.getResults());
      return success();
    }
    SmallVector<Value> results;
    for (unsigned i = 0; i < resultTypes.size(); ++i)
      results.push_back(LLVM::ExtractValueOp::create(rewriter, op.getLoc(),
                                                     call.getResult(), i));
    rewriter.replaceOp(op, results);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Ids, barriers
//===----------------------------------------------------------------------===//

/// gpu.thread_id, gpu.block_dim, gpu.block_id, gpu.grid_dim: index values.
template <typename OpTy, ThreadField field>
struct GpuIdLowering : ConvertOpToLLVMPattern<OpTy> {
  using ConvertOpToLLVMPattern<OpTy>::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value value = loadThreadField(rewriter, op.getLoc(), getThread(op), field,
                                  static_cast<int32_t>(op.getDimension()),
                                  rewriter.getI32Type());
    rewriter.replaceOpWithNewOp<LLVM::ZExtOp>(
        op, this->getTypeConverter()->getIndexType(), value);
    return success();
  }
};

/// gpu.barrier and kjit.warp_barrier: calls of their runtime slots.
template <typename OpTy, RuntimeSlot slot>
struct BarrierLowering : ConvertOpToLLVMPattern<OpTy> {
  using ConvertOpToLLVMPattern<OpTy>::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    callRuntime(rewriter, op.getLoc(), getThread(op), slot, {});
    rewriter.eraseOp(op);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

/// Debug mode: the access of `accessBytes` at element `offset` of the
/// kernel's pointer parameter `arg` must lie within that argument's extent
/// (HostKernel.h, ABI 2); otherwise runtime->bounds_fail, which does not
/// return. In i128, so that no offset can wrap into range.
void checkBounds(ConversionPatternRewriter &rewriter, Operation *op,
                 PointerType pointer, Value offset, int64_t accessBytes) {
  auto arg = op->getAttrOfType<IntegerAttr>(kBoundsArgAttrName);
  auto message = op->getAttrOfType<StringAttr>(kBoundsMessageAttrName);
  if (!arg || !message)
    return;
  Location loc = op->getLoc();
  MLIRContext *context = op->getContext();
  Type i64 = rewriter.getI64Type(), i128 = rewriter.getIntegerType(128);
  Type extentType = LLVM::LLVMStructType::getLiteral(context, {i64, i64});
  Value thread = getThread(op);
  Value extents =
      loadThreadField(rewriter, loc, thread, Extents, 0, opaquePtr(context));
  Value extent = LLVM::GEPOp::create(
      rewriter, loc, opaquePtr(context), extentType, extents,
      ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(arg.getInt())});
  auto field = [&](int32_t index) {
    Value address =
        LLVM::GEPOp::create(rewriter, loc, opaquePtr(context), extentType,
                            extent, ArrayRef<LLVM::GEPArg>{0, index});
    return LLVM::LoadOp::create(rewriter, loc, i64, address).getResult();
  };
  Value begin = field(0), end = field(1);
  auto wide = [&](Value v) -> Value {
    return v.getType() == i128 ? v
                               : LLVM::SExtOp::create(rewriter, loc, i128, v);
  };
  auto constant = [&](Type type, int64_t value) -> Value {
    return LLVM::ConstantOp::create(rewriter, loc, type,
                                    rewriter.getIntegerAttr(type, value));
  };
  Value first =
      LLVM::MulOp::create(rewriter, loc, wide(offset),
                          constant(i128, pointer.getElementByteWidth()));
  Value last =
      LLVM::AddOp::create(rewriter, loc, first, constant(i128, accessBytes));
  Value lowOk = LLVM::ICmpOp::create(rewriter, loc, LLVM::ICmpPredicate::sge,
                                     first, wide(begin));
  Value highOk = LLVM::ICmpOp::create(rewriter, loc, LLVM::ICmpPredicate::sle,
                                      last, wide(end));
  Value ok = LLVM::AndOp::create(rewriter, loc, lowOk, highOk);

  Block *before = rewriter.getInsertionBlock();
  Block *after = rewriter.splitBlock(before, rewriter.getInsertionPoint());
  Block *failure = rewriter.createBlock(after);
  rewriter.setInsertionPointToEnd(failure);
  auto [text, length] =
      getStringConstant(rewriter, loc, op, message.getValue());
  callRuntime(rewriter, loc, thread, BoundsFailSlot,
              {text, length, LLVM::TruncOp::create(rewriter, loc, i64, first),
               constant(i64, accessBytes), extent});
  LLVM::UnreachableOp::create(rewriter, loc);
  rewriter.setInsertionPointToEnd(before);
  LLVM::CondBrOp::create(rewriter, loc, ok, after, failure);
  rewriter.setInsertionPointToStart(after);
}

/// Bytes one access of `type` through `pointer` covers.
int64_t getAccessBytes(PointerType pointer, Type type) {
  auto vector = dyn_cast<VectorType>(type);
  return pointer.getElementByteWidth() * (vector ? vector.getNumElements() : 1);
}

/// The host in the common patterns: pointers in address space 0, masks
/// expanded before the conversion (kjit-expand-masks), accesses aligned to
/// their element, program ids read from the thread, and debug mode's
/// bounds check before each access that kjit.host.bounds_arg marks.
struct HostTargetInfo : LoweringTargetInfo {
  HostTargetInfo() : LoweringTargetInfo(0, MaskLowering::Expanded) {}

  unsigned getAccessAlignment(Operation *, PointerType pointer) const override {
    return pointer.getElementByteWidth();
  }

  Value getProgramId(ConversionPatternRewriter &rewriter, Operation *op,
                     Axis axis) const override {
    return loadThreadField(rewriter, op->getLoc(), getThread(op), ProgramId,
                           static_cast<int32_t>(axis), rewriter.getI32Type());
  }

  Value getNumPrograms(ConversionPatternRewriter &rewriter, Operation *op,
                       Axis axis) const override {
    return loadThreadField(rewriter, op->getLoc(), getThread(op), NumPrograms,
                           static_cast<int32_t>(axis), rewriter.getI32Type());
  }

  void beforeAccess(ConversionPatternRewriter &rewriter, Operation *access,
                    PointerType pointer, Value offset,
                    Type accessType) const override {
    checkBounds(rewriter, access, pointer, offset,
                getAccessBytes(pointer, accessType));
  }
};

/// Globals were folded into the kernels; nothing of them remains.
struct GlobalLowering : ConvertOpToLLVMPattern<GlobalOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(GlobalOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.eraseOp(op);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Print and assert
//===----------------------------------------------------------------------===//

struct PrintLowering : ConvertOpToLLVMPattern<PrintOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(PrintOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = op.getContext();
    Value thread = getThread(op);
    Type i32 = rewriter.getI32Type(), i64 = rewriter.getI64Type();
    auto [prefix, prefixLength] =
        getStringConstant(rewriter, loc, op, op.getPrefix());

    // The argument array lives in the function's entry block so that a print
    // in a loop does not grow the stack.
    unsigned numArgs = adaptor.getArgs().size();
    Value array = LLVM::ZeroOp::create(rewriter, loc, opaquePtr(context));
    if (numArgs > 0) {
      OpBuilder::InsertionGuard guard(rewriter);
      auto fn = op->getParentOfType<LLVM::LLVMFuncOp>();
      rewriter.setInsertionPointToStart(&fn.getBody().front());
      Value count = LLVM::ConstantOp::create(
          rewriter, loc, i64, rewriter.getI64IntegerAttr(numArgs));
      array = LLVM::AllocaOp::create(rewriter, loc, opaquePtr(context),
                                     getPrintArgType(context), count);
    }
    for (auto [i, value, source] :
         llvm::enumerate(adaptor.getArgs(), op.getArgs())) {
      Type type = source.getType();
      uint32_t kind;
      unsigned width;
      Value bits;
      if (isa<PointerType>(type)) {
        kind = KJIT_HOST_PRINT_POINTER;
        width = 64;
        bits = LLVM::PtrToIntOp::create(rewriter, loc, i64, value);
      } else if (auto floatType = dyn_cast<FloatType>(type)) {
        kind = KJIT_HOST_PRINT_FLOAT;
        width = floatType.getWidth();
        Value wide = floatType.getWidth() < 64
                         ? LLVM::FPExtOp::create(rewriter, loc,
                                                 rewriter.getF64Type(), value)
                               .getResult()
                         : value;
        bits = LLVM::BitcastOp::create(rewriter, loc, i64, wide);
      } else {
        width = type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
        // An i1 prints as 0/1, not as -1.
        kind = width == 1 ? KJIT_HOST_PRINT_UNSIGNED : KJIT_HOST_PRINT_SIGNED;
        bits =
            width == 64 ? value
            : width == 1
                ? LLVM::ZExtOp::create(rewriter, loc, i64, value).getResult()
                : LLVM::SExtOp::create(rewriter, loc, i64, value).getResult();
      }
      // (A copy: C++17 lambdas cannot capture a structured binding.)
      const int32_t element = static_cast<int32_t>(i);
      auto field = [&](int32_t index) {
        return LLVM::GEPOp::create(rewriter, loc, opaquePtr(context),
                                   getPrintArgType(context), array,
                                   ArrayRef<LLVM::GEPArg>{element, index});
      };
      LLVM::StoreOp::create(
          rewriter, loc,
          LLVM::ConstantOp::create(rewriter, loc, i32,
                                   rewriter.getI32IntegerAttr(kind)),
          field(0));
      LLVM::StoreOp::create(
          rewriter, loc,
          LLVM::ConstantOp::create(rewriter, loc, i32,
                                   rewriter.getI32IntegerAttr(width)),
          field(1));
      LLVM::StoreOp::create(rewriter, loc, bits, field(2));
    }
    Value count = LLVM::ConstantOp::create(rewriter, loc, i64,
                                           rewriter.getI64IntegerAttr(numArgs));
    callRuntime(rewriter, loc, thread, PrintSlot,
                {prefix, prefixLength, array, count});
    rewriter.eraseOp(op);
    return success();
  }
};

/// A failed assertion calls the runtime's assert_fail, which does not
/// return. Outside debug mode kjit-strip-asserts erases asserts first.
struct AssertLowering : ConvertOpToLLVMPattern<AssertOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(AssertOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value thread = getThread(op);
    Block *before = op->getBlock();
    Block *after = rewriter.splitBlock(before, std::next(op->getIterator()));
    Block *failure = rewriter.createBlock(after);
    rewriter.setInsertionPointToEnd(failure);
    auto [message, length] =
        getStringConstant(rewriter, loc, op, op.getMessage());
    callRuntime(rewriter, loc, thread, AssertSlot, {message, length});
    LLVM::UnreachableOp::create(rewriter, loc);
    rewriter.setInsertionPointToEnd(before);
    LLVM::CondBrOp::create(rewriter, loc, adaptor.getCondition(), after,
                           failure);
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void kjit::host::populateKjitToHostLLVMPatterns(LLVMTypeConverter &converter,
                                                RewritePatternSet &patterns) {
  patterns
      .add<FunctionLowering<KernelOp>, FunctionLowering<FuncOp>, ReturnLowering,
           CallLowering, GpuIdLowering<gpu::ThreadIdOp, ThreadId>,
           GpuIdLowering<gpu::BlockDimOp, BlockDim>,
           GpuIdLowering<gpu::BlockIdOp, ProgramId>,
           GpuIdLowering<gpu::GridDimOp, NumPrograms>,
           BarrierLowering<gpu::BarrierOp, BarrierSlot>,
           BarrierLowering<WarpBarrierOp, WarpBarrierSlot>, GlobalLowering,
           PrintLowering, AssertLowering>(converter);
  static const HostTargetInfo info;
  populateCommonKjitPatterns(converter, patterns, info);
}
