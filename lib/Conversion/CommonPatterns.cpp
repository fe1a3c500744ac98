//===- CommonPatterns.cpp - kjit op lowerings every target shares ---------===//

#include "CommonPatterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace kjit;

LoweringTargetInfo::~LoweringTargetInfo() = default;

void LoweringTargetInfo::beforeAccess(ConversionPatternRewriter &, Operation *,
                                      PointerType, Value, Type) const {}

LLVM::LLVMPointerType
LoweringTargetInfo::getPointerType(MLIRContext *context) const {
  return LLVM::LLVMPointerType::get(context, addressSpace);
}

Type kjit::getStorageType(Type type) {
  auto bytes = [](Type t) -> Type {
    if (t.isInteger(1))
      return IntegerType::get(t.getContext(), 8);
    if (isa<FloatType>(t) && !LLVM::isCompatibleFloatingPointType(t))
      return IntegerType::get(t.getContext(), t.getIntOrFloatBitWidth());
    return t;
  };
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.clone(bytes(vector.getElementType()));
  return bytes(type);
}

Value kjit::getElementAddress(OpBuilder &b, Location loc,
                              const LoweringTargetInfo &info,
                              PointerType pointer, Value base, Value offset) {
  // (The host's type converter has made every index an i64 already.)
  if (offset.getType().isIndex())
    offset = arith::IndexCastOp::create(b, loc, b.getI64Type(), offset);
  Type element =
      getStorageType(getValueTypeForPointee(pointer.getElementType()));
  return LLVM::GEPOp::create(b, loc, info.getPointerType(b.getContext()),
                             element, base, ArrayRef<LLVM::GEPArg>{offset});
}

LogicalResult
kjit::convertSignature(const TypeConverter &converter, FunctionType type,
                       TypeConverter::SignatureConversion &signature) {
  for (auto [i, input] : llvm::enumerate(type.getInputs())) {
    Type converted = converter.convertType(input);
    if (!converted)
      return failure();
    signature.addInputs(i, converted);
  }
  return success();
}

void kjit::lowerDivisibility(ConversionPatternRewriter &rewriter,
                             FunctionOpInterface from,
                             FunctionOpInterface lowered) {
  Location loc = from.getLoc();
  ArrayRef<Type> inputs = from.getArgumentTypes();
  rewriter.setInsertionPointToStart(&lowered.getFunctionBody().front());
  for (unsigned i = 0; i < inputs.size(); ++i) {
    auto divisor = from.getArgAttrOfType<IntegerAttr>(
        i, KjitDialect::kDivisibilityAttrName);
    if (!divisor)
      continue;
    if (isa<PointerType>(inputs[i])) {
      lowered.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                         rewriter.getI64IntegerAttr(divisor.getInt()));
      continue;
    }
    // An integer divisible by N: assume (x & (N - 1)) == 0.
    Value arg = lowered.getArgument(i);
    Value mask = LLVM::ConstantOp::create(
        rewriter, loc, arg.getType(),
        rewriter.getIntegerAttr(arg.getType(), divisor.getInt() - 1));
    Value low = LLVM::AndOp::create(rewriter, loc, arg, mask);
    Value zero =
        LLVM::ConstantOp::create(rewriter, loc, arg.getType(),
                                 rewriter.getIntegerAttr(arg.getType(), 0));
    Value divisible =
        LLVM::ICmpOp::create(rewriter, loc, LLVM::ICmpPredicate::eq, low, zero);
    LLVM::AssumeOp::create(rewriter, loc, divisible);
  }
}

namespace {

/// A pattern that knows its target.
template <typename OpTy> struct TargetPattern : OpConversionPattern<OpTy> {
  TargetPattern(const TypeConverter &converter, MLIRContext *context,
                const LoweringTargetInfo &info)
      : OpConversionPattern<OpTy>(converter, context), info(info) {}

  const LoweringTargetInfo &info;
};

/// kjit.load -> llvm.load of the storage type at the element's address
/// (bools truncated, fp8 bitcast back), at the target's alignment; masked
/// per the target's MaskLowering, where a masked-off load is `other` (zero
/// without).
struct LoadLowering : TargetPattern<LoadOp> {
  using TargetPattern::TargetPattern;

  LogicalResult
  matchAndRewrite(LoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value mask = adaptor.getMask();
    if (mask && info.masks == LoweringTargetInfo::MaskLowering::Expanded)
      return rewriter.notifyMatchFailure(op, "kjit-expand-masks comes first");
    Location loc = op.getLoc();
    PointerType pointer = op.getBase().getType();
    // The converted type: on the host an fp8 value is its bits already.
    Type type = getTypeConverter()->convertType(op.getType());
    if (!type)
      return rewriter.notifyMatchFailure(op, "unconvertible result");
    info.beforeAccess(rewriter, op, pointer, adaptor.getOffset(), op.getType());
    Value address = getElementAddress(rewriter, loc, info, pointer,
                                      adaptor.getBase(), adaptor.getOffset());
    Type storage = getStorageType(type);
    unsigned alignment = info.getAccessAlignment(op, pointer);
    auto load = [&](OpBuilder &b, Location loc) -> Value {
      Value value = LLVM::LoadOp::create(b, loc, storage, address, alignment);
      if (storage == type)
        return value;
      if (getElementTypeOrSelf(type).isInteger(1))
        return arith::TruncIOp::create(b, loc, type, value).getResult();
      return arith::BitcastOp::create(b, loc, type, value).getResult();
    };
    if (!mask) {
      rewriter.replaceOp(op, load(rewriter, loc));
      return success();
    }
    // Masked off: nothing is read, the result is `other` (zero without).
    Value other = adaptor.getOther();
    if (!other)
      other = arith::ConstantOp::create(
          rewriter, loc, cast<TypedAttr>(rewriter.getZeroAttr(type)));
    auto branch = scf::IfOp::create(
        rewriter, loc, mask,
        [&](OpBuilder &b, Location loc) {
          scf::YieldOp::create(b, loc, load(b, loc));
        },
        [&](OpBuilder &b, Location loc) {
          scf::YieldOp::create(b, loc, other);
        });
    rewriter.replaceOp(op, branch.getResults());
    return success();
  }
};

/// kjit.store -> llvm.store of the storage type (bools extended, fp8
/// bitcast) at the element's address; masked as kjit.load, where a
/// masked-off store writes nothing.
struct StoreLowering : TargetPattern<StoreOp> {
  using TargetPattern::TargetPattern;

  LogicalResult
  matchAndRewrite(StoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value mask = adaptor.getMask();
    if (mask && info.masks == LoweringTargetInfo::MaskLowering::Expanded)
      return rewriter.notifyMatchFailure(op, "kjit-expand-masks comes first");
    Location loc = op.getLoc();
    PointerType pointer = op.getBase().getType();
    info.beforeAccess(rewriter, op, pointer, adaptor.getOffset(),
                      op.getValue().getType());
    Value address = getElementAddress(rewriter, loc, info, pointer,
                                      adaptor.getBase(), adaptor.getOffset());
    Value value = adaptor.getValue();
    Type storage = getStorageType(value.getType());
    unsigned alignment = info.getAccessAlignment(op, pointer);
    auto store = [&](OpBuilder &b, Location loc) {
      Value stored = value;
      if (storage != value.getType())
        stored =
            getElementTypeOrSelf(value.getType()).isInteger(1)
                ? arith::ExtUIOp::create(b, loc, storage, value).getResult()
                : arith::BitcastOp::create(b, loc, storage, value).getResult();
      LLVM::StoreOp::create(b, loc, stored, address, alignment);
    };
    if (!mask) {
      store(rewriter, loc);
      rewriter.eraseOp(op);
      return success();
    }
    // Masked off: nothing is written.
    scf::IfOp::create(rewriter, loc, mask, [&](OpBuilder &b, Location loc) {
      store(b, loc);
      scf::YieldOp::create(b, loc);
    });
    rewriter.eraseOp(op);
    return success();
  }
};

struct NullLowering : TargetPattern<NullOp> {
  using TargetPattern::TargetPattern;

  LogicalResult
  matchAndRewrite(NullOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<LLVM::ZeroOp>(
        op, info.getPointerType(op.getContext()));
    return success();
  }
};

/// kjit.program_id and kjit.num_programs: the target's i32 values.
template <typename OpTy> struct ProgramLowering : TargetPattern<OpTy> {
  using TargetPattern<OpTy>::TargetPattern;

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    const LoweringTargetInfo &info = this->info;
    Value value = std::is_same_v<OpTy, ProgramIdOp>
                      ? info.getProgramId(rewriter, op, op.getAxis())
                      : info.getNumPrograms(rewriter, op, op.getAxis());
    rewriter.replaceOp(op, value);
    return success();
  }
};

} // namespace

void kjit::populateCommonKjitPatterns(const TypeConverter &converter,
                                      RewritePatternSet &patterns,
                                      const LoweringTargetInfo &info) {
  patterns.add<LoadLowering, StoreLowering, NullLowering,
               ProgramLowering<ProgramIdOp>, ProgramLowering<NumProgramsOp>>(
      converter, patterns.getContext(), info);
}
