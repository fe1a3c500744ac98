//===- HostToLLVM.cpp - kernel IR to the LLVM dialect for the host -------===//
//
// The kjit-convert-host-to-llvm pass: lowers a specialized module to the
// LLVM dialect following the host kernel ABI (include/kjit-c/HostKernel.h):
// every function takes the SIMT thread's `kjit_host_thread *` as its last
// argument, ids are loads from it, barriers, prints and asserts are calls
// through its runtime table, workgroup memory is thread-local, and each
// kernel K gets an exported `kjit_host_entry_K(thread, args)`.
// Rationale: docs/HostTarget.md.
//
//===----------------------------------------------------------------------===//

#include "kjit/Dialect/Kjit/IR/Kjit.h"
#include "kjit/Transforms/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/Pattern.h"
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
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/DialectConversion.h"

#include "kjit-c/HostKernel.h"

namespace kjit {
#define GEN_PASS_DEF_KJITCONVERTHOSTTOLLVM
#include "kjit/Transforms/Passes.h.inc"
} // namespace kjit

using namespace mlir;
using namespace kjit;

namespace {

//===----------------------------------------------------------------------===//
// The host ABI as LLVM types
//===----------------------------------------------------------------------===//

/// Field indices of kjit_host_thread.
enum ThreadField : int32_t {
  ThreadId = 0,
  BlockDim = 1,
  ProgramId = 2,
  NumPrograms = 3,
  Runtime = 4,
};
/// Slot indices of kjit_host_runtime.
enum RuntimeSlot : int32_t { BarrierSlot = 0, PrintSlot = 1, AssertSlot = 2 };

Type opaquePtr(MLIRContext *context) {
  return LLVM::LLVMPointerType::get(context);
}

LLVM::LLVMStructType getThreadType(MLIRContext *context) {
  Type dims = LLVM::LLVMArrayType::get(IntegerType::get(context, 32), 3);
  Type ptr = opaquePtr(context);
  return LLVM::LLVMStructType::getLiteral(context,
                                          {dims, dims, dims, dims, ptr, ptr});
}

LLVM::LLVMStructType getRuntimeType(MLIRContext *context) {
  Type ptr = opaquePtr(context);
  return LLVM::LLVMStructType::getLiteral(context, {ptr, ptr, ptr});
}

/// kjit_host_print_arg {u32 kind; u32 bits_width; u64 bits}.
LLVM::LLVMStructType getPrintArgType(MLIRContext *context) {
  Type i32 = IntegerType::get(context, 32);
  return LLVM::LLVMStructType::getLiteral(
      context, {i32, i32, IntegerType::get(context, 64)});
}

/// Every function converted from kjit takes the thread last.
Value getThread(Operation *op) {
  auto fn = op->getParentOfType<LLVM::LLVMFuncOp>();
  return fn.getBody().front().getArguments().back();
}

Value loadThreadField(OpBuilder &b, Location loc, Value thread,
                      ThreadField field, int32_t index, Type type) {
  MLIRContext *context = b.getContext();
  SmallVector<LLVM::GEPArg> indices = {0, field};
  if (field != Runtime)
    indices.push_back(index);
  Value address = LLVM::GEPOp::create(b, loc, opaquePtr(context),
                                      getThreadType(context), thread, indices);
  return LLVM::LoadOp::create(b, loc, type, address);
}

/// Loads slot `slot` of the thread's runtime table.
Value loadRuntimeSlot(OpBuilder &b, Location loc, Value thread,
                      RuntimeSlot slot) {
  MLIRContext *context = b.getContext();
  Value runtime =
      loadThreadField(b, loc, thread, Runtime, 0, opaquePtr(context));
  Value address =
      LLVM::GEPOp::create(b, loc, opaquePtr(context), getRuntimeType(context),
                          runtime, ArrayRef<LLVM::GEPArg>{0, slot});
  return LLVM::LoadOp::create(b, loc, opaquePtr(context), address);
}

/// Calls slot `slot` of the thread's runtime table with `args` (the thread
/// first); every runtime entry returns void.
void callRuntime(OpBuilder &b, Location loc, Value thread, RuntimeSlot slot,
                 ValueRange args) {
  Value callee = loadRuntimeSlot(b, loc, thread, slot);
  SmallVector<Value> operands = {callee, thread};
  operands.append(args.begin(), args.end());
  auto type = LLVM::LLVMFunctionType::get(
      LLVM::LLVMVoidType::get(b.getContext()),
      llvm::to_vector(ValueRange(operands).drop_front().getTypes()));
  LLVM::CallOp::create(b, loc, type, operands);
}

/// A pointer to a private constant holding `text`, with its length.
std::pair<Value, Value> getStringConstant(OpBuilder &b, Location loc,
                                          Operation *from, StringRef text) {
  auto module = from->getParentOfType<ModuleOp>();
  MLIRContext *context = b.getContext();
  // One global per distinct text.
  std::string name = "kjit_str_" + llvm::utohexstr(llvm::hash_value(text));
  auto global = module.lookupSymbol<LLVM::GlobalOp>(name);
  if (!global) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    auto type = LLVM::LLVMArrayType::get(IntegerType::get(context, 8),
                                         std::max<size_t>(text.size(), 1));
    global = LLVM::GlobalOp::create(
        b, loc, type, /*isConstant=*/true, LLVM::Linkage::Private, name,
        b.getStringAttr(text.empty() ? StringRef("\0", 1) : text));
  }
  Value address = LLVM::AddressOfOp::create(b, loc, global);
  Value length = LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                          b.getI64IntegerAttr(text.size()));
  return {address, length};
}

//===----------------------------------------------------------------------===//
// Functions, calls, returns
//===----------------------------------------------------------------------===//

/// kjit.kernel and kjit.func become internal llvm.funcs taking the thread
/// last. `kjit.divisibility` becomes `llvm.align` on pointers and an
/// assumption on integers.
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
    for (auto [i, input] : llvm::enumerate(type.getInputs())) {
      Type converted = converter.convertType(input);
      if (!converted)
        return rewriter.notifyMatchFailure(op, "unconvertible parameter");
      signature.addInputs(i, converted);
    }
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
    rewriter.inlineRegionBefore(op.getBody(), fn.getBody(), fn.end());
    if (failed(
            rewriter.convertRegionTypes(&fn.getBody(), converter, &signature)))
      return failure();

    rewriter.setInsertionPointToStart(&fn.getBody().front());
    for (unsigned i = 0; i < type.getNumInputs(); ++i) {
      auto divisor = op.template getArgAttrOfType<IntegerAttr>(
          i, KjitDialect::kDivisibilityAttrName);
      if (!divisor)
        continue;
      if (isa<PointerType>(type.getInput(i))) {
        fn.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                      rewriter.getI64IntegerAttr(divisor.getInt()));
        continue;
      }
      // An integer divisible by N: (x & (N - 1)) == 0.
      Value arg = fn.getArgument(i);
      Value mask = LLVM::ConstantOp::create(
          rewriter, op.getLoc(), arg.getType(),
          rewriter.getIntegerAttr(arg.getType(), divisor.getInt() - 1));
      Value low = LLVM::AndOp::create(rewriter, op.getLoc(), arg, mask);
      Value zero =
          LLVM::ConstantOp::create(rewriter, op.getLoc(), arg.getType(),
                                   rewriter.getIntegerAttr(arg.getType(), 0));
      Value divisible = LLVM::ICmpOp::create(
          rewriter, op.getLoc(), LLVM::ICmpPredicate::eq, low, zero);
      LLVM::AssumeOp::create(rewriter, op.getLoc(), divisible);
    }
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

template <typename OpTy, ThreadField field>
struct ProgramLowering : ConvertOpToLLVMPattern<OpTy> {
  using ConvertOpToLLVMPattern<OpTy>::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, loadThreadField(rewriter, op.getLoc(), getThread(op),
                                           field,
                                           static_cast<int32_t>(op.getAxis()),
                                           rewriter.getI32Type()));
    return success();
  }
};

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

struct BarrierLowering : ConvertOpToLLVMPattern<gpu::BarrierOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(gpu::BarrierOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    callRuntime(rewriter, op.getLoc(), getThread(op), BarrierSlot, {});
    rewriter.eraseOp(op);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

/// The LLVM type elements of `pointer` are stored as (i1 is a byte).
Type getStorageType(PointerType pointer) {
  Type element = getValueTypeForPointee(pointer.getElementType());
  if (element.isInteger(1))
    return IntegerType::get(pointer.getContext(), 8);
  return element;
}

Value getElementAddress(OpBuilder &b, Location loc, PointerType pointer,
                        Value base, Value offset) {
  return LLVM::GEPOp::create(b, loc, opaquePtr(b.getContext()),
                             getStorageType(pointer), base,
                             ArrayRef<LLVM::GEPArg>{offset});
}

struct LoadLowering : ConvertOpToLLVMPattern<LoadOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(LoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getMask())
      return rewriter.notifyMatchFailure(op, "masks are expanded first");
    PointerType pointer = op.getBase().getType();
    Value address = getElementAddress(rewriter, op.getLoc(), pointer,
                                      adaptor.getBase(), adaptor.getOffset());
    Type type = op.getType();
    bool isBool = type.isInteger(1);
    Value value = LLVM::LoadOp::create(rewriter, op.getLoc(),
                                       isBool ? rewriter.getI8Type() : type,
                                       address, pointer.getElementByteWidth());
    if (isBool)
      value = LLVM::TruncOp::create(rewriter, op.getLoc(), type, value);
    rewriter.replaceOp(op, value);
    return success();
  }
};

struct StoreLowering : ConvertOpToLLVMPattern<StoreOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(StoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getMask())
      return rewriter.notifyMatchFailure(op, "masks are expanded first");
    PointerType pointer = op.getBase().getType();
    Value address = getElementAddress(rewriter, op.getLoc(), pointer,
                                      adaptor.getBase(), adaptor.getOffset());
    Value value = adaptor.getValue();
    if (value.getType().isInteger(1))
      value = LLVM::ZExtOp::create(rewriter, op.getLoc(), rewriter.getI8Type(),
                                   value);
    rewriter.replaceOpWithNewOp<LLVM::StoreOp>(op, value, address,
                                               pointer.getElementByteWidth());
    return success();
  }
};

struct NullLowering : ConvertOpToLLVMPattern<NullOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(NullOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<LLVM::ZeroOp>(op, opaquePtr(op.getContext()));
    return success();
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
      auto field = [&](int32_t index) {
        return LLVM::GEPOp::create(
            rewriter, loc, opaquePtr(context), getPrintArgType(context), array,
            ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i), index});
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
/// return. Without debug mode asserts are erased before conversion.
struct AssertLowering : ConvertOpToLLVMPattern<AssertOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(AssertOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = op.getContext();
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

//===----------------------------------------------------------------------===//
// Preparation at the kjit level
//===----------------------------------------------------------------------===//

/// Masked accesses become an scf.if around an unmasked one: the host has no
/// predicated loads, and a branch keeps a masked-off address unread.
void expandMasks(ModuleOp module) {
  module.walk([](LoadOp load) {
    Value mask = load.getMask();
    if (!mask)
      return;
    OpBuilder b(load);
    Location loc = load.getLoc();
    Type type = load.getType();
    auto branch = scf::IfOp::create(b, loc, type, mask, /*withElse=*/true);
    b.setInsertionPointToStart(branch.thenBlock());
    Value loaded = LoadOp::create(b, loc, type, load.getBase(),
                                  load.getOffset(), Value(), Value());
    scf::YieldOp::create(b, loc, loaded);
    b.setInsertionPointToStart(branch.elseBlock());
    Value other = load.getOther();
    if (!other)
      other = arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
    scf::YieldOp::create(b, loc, other);
    load.replaceAllUsesWith(branch.getResult(0));
    load.erase();
  });
  module.walk([](StoreOp store) {
    Value mask = store.getMask();
    if (!mask)
      return;
    OpBuilder b(store);
    auto branch = scf::IfOp::create(b, store.getLoc(), mask);
    b.setInsertionPointToStart(branch.thenBlock());
    StoreOp::create(b, store.getLoc(), store.getValue(), store.getBase(),
                    store.getOffset(), Value());
    store.erase();
  });
}

/// Workgroup memory becomes ordinary memory, held in thread-local globals
/// (see HostKernel.h). Returns the names of those globals.
SmallVector<StringAttr> makeWorkgroupMemoryThreadLocal(ModuleOp module) {
  SmallVector<StringAttr> names;
  module.walk([&](memref::GlobalOp global) {
    auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(
        global.getType().getMemorySpace());
    if (space && space.getValue() == gpu::AddressSpace::Workgroup)
      names.push_back(global.getSymNameAttr());
  });
  AttrTypeReplacer replacer;
  replacer.addReplacement([](MemRefType type) -> std::optional<Type> {
    auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(type.getMemorySpace());
    if (!space || space.getValue() != gpu::AddressSpace::Workgroup)
      return std::nullopt;
    return MemRefType::get(type.getShape(), type.getElementType(),
                           type.getLayout());
  });
  replacer.recursivelyReplaceElementsIn(module, /*replaceAttrs=*/true,
                                        /*replaceLocs=*/false,
                                        /*replaceTypes=*/true);
  return names;
}

/// Whether `kernel` or a function it reaches through calls contains a
/// barrier. A plain walk over the reachable set: memoizing per function would
/// record "no barrier" for a function still being explored in a cycle.
bool usesBarrier(FunctionOpInterface kernel, SymbolTableCollection &symbols) {
  SmallVector<Operation *> work = {kernel};
  llvm::SmallPtrSet<Operation *, 8> seen = {kernel};
  while (!work.empty()) {
    Operation *fn = work.pop_back_val();
    bool found = false;
    fn->walk([&](Operation *op) {
      if (isa<gpu::BarrierOp>(op))
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

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct ConvertHostToLLVMPass
    : kjit::impl::KjitConvertHostToLLVMBase<ConvertHostToLLVMPass> {
  using KjitConvertHostToLLVMBase::KjitConvertHostToLLVMBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    if (failed(checkSpecialized(module)))
      return signalPassFailure();

    // Bake global values in, expand masks, drop asserts outside debug mode.
    module.walk([](GetGlobalOp read) {
      auto global = SymbolTable::lookupNearestSymbolFrom<GlobalOp>(
          read, read.getGlobalAttr());
      OpBuilder b(read);
      read.replaceAllUsesWith(
          arith::ConstantOp::create(b, read.getLoc(), global.getValue())
              .getResult());
      read.erase();
    });
    expandMasks(module);
    if (!debug)
      module.walk([](AssertOp op) { op.erase(); });
    SmallVector<StringAttr> workgroup = makeWorkgroupMemoryThreadLocal(module);

    // What the entries need, taken before the kernels are converted.
    struct KernelInfo {
      std::string name;
      SmallVector<Type> paramTypes;
      bool barrier;
    };
    SmallVector<KernelInfo> kernels;
    SymbolTableCollection symbols;
    for (auto kernel : module.getOps<KernelOp>())
      kernels.push_back({kernel.getSymName().str(),
                         llvm::to_vector(kernel.getArgumentTypes()),
                         usesBarrier(kernel, symbols)});

    // scf -> cf, then everything -> llvm.
    OpPassManager scfToCf(ModuleOp::getOperationName());
    scfToCf.addPass(createSCFToControlFlowPass());
    if (failed(runPipeline(scfToCf, module)))
      return signalPassFailure();

    LowerToLLVMOptions options(context);
    LLVMTypeConverter converter(context, options);
    converter.addConversion(
        [&](PointerType) -> Type { return opaquePtr(context); });
    RewritePatternSet patterns(context);
    patterns.add<FunctionLowering<KernelOp>, FunctionLowering<FuncOp>,
                 ReturnLowering, CallLowering,
                 ProgramLowering<ProgramIdOp, ProgramId>,
                 ProgramLowering<NumProgramsOp, NumPrograms>,
                 GpuIdLowering<gpu::ThreadIdOp, ThreadId>,
                 GpuIdLowering<gpu::BlockDimOp, BlockDim>,
                 GpuIdLowering<gpu::BlockIdOp, ProgramId>,
                 GpuIdLowering<gpu::GridDimOp, NumPrograms>, BarrierLowering,
                 LoadLowering, StoreLowering, NullLowering, GlobalLowering,
                 PrintLowering, AssertLowering>(converter);
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

    for (StringAttr name : workgroup)
      if (auto global = module.lookupSymbol<LLVM::GlobalOp>(name))
        global.setThreadLocal_(true);
    OpBuilder b(context);
    routeWorkgroupAddressesThroughCalls(b, module, workgroup);
    b.setInsertionPointToEnd(module.getBody());
    for (const KernelInfo &kernel : kernels)
      buildEntry(b, module, kernel.name, kernel.paramTypes, kernel.barrier,
                 converter);
    LLVM::GlobalOp::create(b, module.getLoc(), b.getI32Type(),
                           /*isConstant=*/true, LLVM::Linkage::External,
                           "kjit_host_abi_version",
                           b.getI32IntegerAttr(KJIT_HOST_ABI_VERSION));
  }

  /// Makes every use of a workgroup (thread-local) global take its address
  /// from a call to a small out-of-line accessor instead of an inline
  /// general/local-dynamic TLS sequence.
  ///
  /// Why: LLVM's x86-64 TLS_addr64/TLS_base_addr64 pseudos model the call to
  /// __tls_get_addr as clobbering only the scratch GPRs and xmm0-15, so with
  /// AVX-512 (the host CPU's features are enabled) the register allocator
  /// keeps values in xmm16-31 / k0-7 live across it. __tls_get_addr's slow
  /// path (first access of a dlopen'ed module's block on a thread, or a DTV
  /// update after another dlopen) calls malloc/realloc/memcpy, and glibc's
  /// EVEX string functions (and ASan's allocator, which memsets through
  /// them) use ymm16+/k registers: the live value is lost. The accessor is
  /// an ordinary call, which clobbers every caller-saved register, so
  /// nothing can be live across the TLS sequence inside it. The empty asm
  /// keeps IPSCCP from folding the returned address back into the callers.
  /// The accessor is readnone, so LLVM still hoists it to one call per
  /// kernel invocation (a fiber never changes OS thread).
  static void routeWorkgroupAddressesThroughCalls(
      OpBuilder &b, ModuleOp module, ArrayRef<StringAttr> workgroup) {
    MLIRContext *context = module.getContext();
    Type ptr = LLVM::LLVMPointerType::get(context);
    for (StringAttr name : workgroup) {
      auto global = module.lookupSymbol<LLVM::GlobalOp>(name);
      if (!global)
        continue;
      std::string accessorName = ("__kjit_workgroup_" + name.getValue()).str();
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToEnd(module.getBody());
      auto accessor = LLVM::LLVMFuncOp::create(
          b, global.getLoc(), accessorName,
          LLVM::LLVMFunctionType::get(ptr, {}));
      accessor.setVisibility_(LLVM::Visibility::Hidden);
      accessor.setNoInline(true);
      accessor.setPassthroughAttr(b.getArrayAttr(
          {b.getStringAttr("nounwind"), b.getStringAttr("willreturn")}));
      accessor.setMemoryEffectsAttr(LLVM::MemoryEffectsAttr::get(
          context, {LLVM::ModRefInfo::NoModRef, LLVM::ModRefInfo::NoModRef,
                    LLVM::ModRefInfo::NoModRef}));
      b.setInsertionPointToStart(accessor.addEntryBlock(b));
      Value address = LLVM::AddressOfOp::create(b, global.getLoc(), global);
      Value opaque =
          LLVM::InlineAsmOp::create(
              b, global.getLoc(), ptr, ValueRange{address}, "", "=r,0",
              /*has_side_effects=*/false, /*is_align_stack=*/false,
              LLVM::tailcallkind::TailCallKind::None,
              /*asm_dialect=*/LLVM::AsmDialectAttr(),
              /*operand_attrs=*/ArrayAttr())
              .getRes();
      LLVM::ReturnOp::create(b, global.getLoc(), opaque);

      SmallVector<LLVM::AddressOfOp> uses;
      module.walk([&](LLVM::AddressOfOp op) {
        if (op.getGlobalName() == name.getValue() &&
            op->getParentOfType<LLVM::LLVMFuncOp>() != accessor)
          uses.push_back(op);
      });
      for (LLVM::AddressOfOp op : uses) {
        b.setInsertionPoint(op);
        auto call = LLVM::CallOp::create(b, op.getLoc(), accessor, ValueRange{});
        op.replaceAllUsesWith(call.getResult());
        op.erase();
      }
    }
  }

  /// Everything the binder resolves must be resolved before lowering, and
  /// kjit's body operations must be in kernels or device functions (they
  /// need the thread those take).
  LogicalResult checkSpecialized(ModuleOp module) {
    WalkResult placed = module.walk([](Operation *op) {
      if (op->getDialect() != op->getContext()->getLoadedDialect<KjitDialect>() ||
          isa<KernelOp, FuncOp, GlobalOp>(op) ||
          op->getParentOfType<KernelOp>() || op->getParentOfType<FuncOp>())
        return WalkResult::advance();
      op->emitError() << "'" << op->getName()
                      << "' can only be lowered inside a kjit.kernel or "
                         "kjit.func";
      return WalkResult::interrupt();
    });
    if (placed.wasInterrupted())
      return failure();
    WalkResult result = module.walk([](CastOp castOp) {
      auto kernel = castOp->getParentOfType<KernelOp>();
      unsigned index = cast<BlockArgument>(castOp.getInput()).getArgNumber();
      castOp.emitError() << "parameter '" << kernel.getParamName(index)
                         << "' of '@" << kernel.getSymName()
                         << "' has no type yet; run kjit-specialize first";
      return WalkResult::interrupt();
    });
    return failure(result.wasInterrupted());
  }

  /// kjit_host_entry_K(thread, args): loads each argument from args[i] and
  /// calls K; kjit_host_flags_K says how the backend must run it.
  void buildEntry(OpBuilder &b, ModuleOp module, StringRef name,
                  ArrayRef<Type> paramTypes, bool barrier,
                  const LLVMTypeConverter &converter) {
    MLIRContext *context = b.getContext();
    Location loc = module.getLoc();
    Type ptr = opaquePtr(context);
    auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context),
                                            {ptr, ptr});
    auto entry = LLVM::LLVMFuncOp::create(
        b, loc, ("kjit_host_entry_" + name).str(), type);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(entry.addEntryBlock(b));
    Value thread = entry.getArgument(0), args = entry.getArgument(1);
    SmallVector<Value> values;
    for (auto [i, paramType] : llvm::enumerate(paramTypes)) {
      Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, args,
                                       ArrayRef<LLVM::GEPArg>{int32_t(i)});
      Value address = LLVM::LoadOp::create(b, loc, ptr, slot);
      Type converted = converter.convertType(paramType);
      // Booleans arrive as one byte.
      bool isBool = converted.isInteger(1);
      Value value = LLVM::LoadOp::create(
          b, loc, isBool ? b.getI8Type() : converted, address);
      if (isBool)
        value = LLVM::TruncOp::create(b, loc, converted, value);
      values.push_back(value);
    }
    values.push_back(thread);
    LLVM::CallOp::create(b, loc, TypeRange(), name, values);
    LLVM::ReturnOp::create(b, loc, ValueRange());
    b.setInsertionPointAfter(entry);
    LLVM::GlobalOp::create(
        b, loc, b.getI32Type(), /*isConstant=*/true, LLVM::Linkage::External,
        ("kjit_host_flags_" + name).str(),
        b.getI32IntegerAttr(barrier ? KJIT_HOST_USES_BARRIER : 0));
  }
};

} // namespace
