//===- LowerMatrix.cpp - the kjit-cuda-lower-matrix pass ------------------===//
//
// The portable lowering of the matrix-unit operations (kjit/Transforms/
// LowerMatrix.h) with the cuda target's tile layout, copies and multiply:
// ldmatrix from padded shared-memory rows and mma.sync m16n8k16.
//
//===----------------------------------------------------------------------===//

#include "kjit/Transforms/LowerMatrix.h"
#include "kjit/Target/Cuda/Passes.h"
#include "kjit/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace kjit {
#define GEN_PASS_DEF_KJITCUDALOWERMATRIX
#include "kjit/Target/Cuda/Passes.h.inc"
} // namespace kjit

using namespace mlir;
using namespace kjit;

namespace {

/// Elements added to each tile row: 16 bytes of 16-bit elements.
constexpr int64_t kRowPadding = 8;
/// Elements per thread and step of a wide tile copy (16 bytes).
constexpr int64_t kCopyWidth = 8;

/// The SM version of `chip` ("sm_90a" -> 90), or 0 when it is not one.
int64_t smVersion(StringRef chip) {
  int64_t version = 0;
  if (!chip.consume_front("sm_"))
    return 0;
  chip.consumeInteger(10, version);
  return version;
}

/// Emits one kjit.mma as its warpgroup's four warps each multiplying its 16
/// rows: fragments from ldmatrix, products from mma.sync.
class SyncMultiply {
public:
  SyncMultiply(OpBuilder &b, MmaOp mma) : b(b), loc(mma.getLoc()), mma(mma) {}

  Value emit(Value aBuffer, Value bBuffer);

private:
  Value i32(int64_t value) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(value));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value andI(Value x, int64_t mask) {
    return arith::AndIOp::create(b, loc, x, i32(mask));
  }
  Value shr(Value x, int64_t bits) {
    return arith::ShRUIOp::create(b, loc, x, i32(bits));
  }
  /// The shared-memory address of a tile buffer.
  Value baseAddress(Value buffer);
  /// `count` 8x8 matrices of 16-bit elements from the row addresses of the
  /// lanes, as i32 registers.
  SmallVector<Value> loadMatrices(Value base, Value byteOffset, int count,
                                  bool transpose);

  OpBuilder &b;
  Location loc;
  MmaOp mma;
};

Value SyncMultiply::baseAddress(Value buffer) {
  Value address =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  Value wide = arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), /*shared=*/3), wide);
}

SmallVector<Value> SyncMultiply::loadMatrices(Value base, Value byteOffset,
                                              int count, bool transpose) {
  MLIRContext *context = b.getContext();
  Value address = LLVM::GEPOp::create(b, loc, base.getType(), b.getI8Type(),
                                      base, ValueRange{byteOffset});
  SmallVector<Type> registers(count, b.getI32Type());
  Type resultType =
      count == 1 ? b.getI32Type()
                 : Type(LLVM::LLVMStructType::getLiteral(context, registers));
  Value loaded = NVVM::LdMatrixOp::create(
      b, loc, resultType, address, b.getI32IntegerAttr(count),
      NVVM::MMALayoutAttr::get(context, transpose ? NVVM::MMALayout::col
                                                  : NVVM::MMALayout::row),
      NVVM::LdStMatrixShapeAttr::get(context, 8, 8),
      NVVM::LdStMatrixEltTypeAttr::get(context, NVVM::LdStMatrixEltType::B16));
  if (count == 1)
    return {loaded};
  SmallVector<Value> values;
  for (int64_t i = 0; i < count; ++i)
    values.push_back(LLVM::ExtractValueOp::create(b, loc, loaded, i));
  return values;
}

Value SyncMultiply::emit(Value aBuffer, Value bBuffer) {
  TileType aTile = mma.getA().getType(), bTile = mma.getB().getType();
  Type element = aTile.getElementType();
  bool isBF16 = element.isBF16();
  int64_t depth = aTile.getColumns(), width = bTile.getColumns();
  int64_t aRowBytes = (depth + kRowPadding) * 2;
  int64_t bRowBytes = (width + kRowPadding) * 2;

  Value tid = arith::IndexCastOp::create(
      b, loc, b.getI32Type(),
      gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  Value lane = andI(tid, 31);
  Value warp = andI(shr(tid, 5), 3);
  // A, ldmatrix.x4: lanes 0-15 address rows 0-15 of the warp's 16 at
  // column 0 of the step, lanes 16-31 the same rows at column 8; the four
  // matrices are the m16n8k16 A fragment's registers a0..a3.
  Value aRow = add(add(mma.getRow(), mul(warp, i32(16))), andI(lane, 15));
  Value aLane = add(mul(aRow, i32(aRowBytes)), mul(shr(lane, 4), i32(16)));
  // B, ldmatrix.x4.trans over 16 columns: lanes 8m .. 8m + 7 address the
  // rows of matrix m, K rows 0-7 (m even) or 8-15 (m odd) of the step, in
  // columns 0-7 (m < 2) or 8-15; transposed, matrices 0, 1 are b0, b1 of
  // the first 8 columns, 2, 3 of the next 8.
  Value bRow = add(andI(lane, 7), mul(andI(shr(lane, 3), 1), i32(8)));
  Value bLane = add(mul(bRow, i32(bRowBytes)), mul(shr(lane, 4), i32(16)));

  Value aBase = baseAddress(aBuffer), bBase = baseAddress(bBuffer);
  SmallVector<Value> fragment;
  for (int64_t i = 0, n = width / 2; i < n; ++i)
    fragment.push_back(vector::ExtractOp::create(b, loc, mma.getAcc(), i));

  MLIRContext *context = b.getContext();
  Type f32 = b.getF32Type();
  Type resultType =
      LLVM::LLVMStructType::getLiteral(context, {f32, f32, f32, f32});
  NVVM::MMATypes ptxType = isBF16 ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
  auto operand = [&](Value reg) -> Value {
    if (isBF16) // bf16 pairs travel as i32 (the intrinsic's form).
      return reg;
    return LLVM::BitcastOp::create(b, loc, VectorType::get({2}, b.getF16Type()),
                                   reg);
  };
  for (int64_t step = 0; step < depth / 16; ++step) {
    SmallVector<Value> a = loadMatrices(aBase, add(aLane, i32(step * 32)), 4,
                                        /*transpose=*/false);
    for (auto &reg : a)
      reg = operand(reg);
    for (int64_t column = 0; column < width; column += 16) {
      // The last 8 columns of an N that is 8 mod 16 read two matrices; the
      // lanes' addresses past them stay in the row's padding.
      int count = column + 16 <= width ? 4 : 2;
      SmallVector<Value> bRegs = loadMatrices(
          bBase, add(bLane, i32(step * 16 * bRowBytes + column * 2)), count,
          /*transpose=*/true);
      for (int half = 0; half < count / 2; ++half) {
        int64_t first = (column / 8 + half) * 4; // fragment element
        Value bOperands[] = {operand(bRegs[2 * half]),
                             operand(bRegs[2 * half + 1])};
        auto product = NVVM::MmaOp::create(
            b, loc, resultType, a, bOperands,
            ArrayRef<Value>(fragment).slice(first, 4),
            ArrayRef<int64_t>{16, 8, 16}, std::nullopt, std::nullopt,
            std::array<NVVM::MMATypes, 2>{ptxType, ptxType},
            std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                           NVVM::MMALayout::col});
        for (int64_t i = 0; i < 4; ++i)
          fragment[first + i] =
              LLVM::ExtractValueOp::create(b, loc, product, i);
      }
    }
  }
  return vector::FromElementsOp::create(b, loc, mma.getAcc().getType(),
                                        fragment);
}

struct CudaLowerMatrixPass
    : kjit::impl::KjitCudaLowerMatrixBase<CudaLowerMatrixPass> {
  using KjitCudaLowerMatrixBase::KjitCudaLowerMatrixBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkNumWarpsOption(module, getArgument(), numWarps)))
      return signalPassFailure();
    int64_t version = smVersion(chip);
    MatrixLowering lowering;
    lowering.numWarps = numWarps;
    lowering.rowPadding = kRowPadding;
    lowering.copyVectorWidth = kCopyWidth;
    lowering.multiply = [&](OpBuilder &b, MmaOp mma, Value a,
                            Value bTile) -> FailureOr<Value> {
      if (version < 80)
        return mma.emitOpError()
               << "needs sm_80 or newer (mma.sync); the target is " << chip;
      return SyncMultiply(b, mma).emit(a, bTile);
    };
    if (failed(lowerMatrixOperations(module, lowering)))
      signalPassFailure();
  }
};

} // namespace
