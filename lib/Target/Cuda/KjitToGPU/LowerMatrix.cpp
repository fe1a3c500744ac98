//===- LowerMatrix.cpp - the kjit-cuda-lower-matrix pass ------------------===//
//
// The portable lowering of the matrix-unit operations (kjit/Transforms/
// LowerMatrix.h) with the cuda target's tile layouts and multiplies: on
// sm_90a, tiles whose rows are whole 128-byte groups take the tensor units'
// 128-byte swizzle and warpgroups multiply them with wgmma straight from
// shared memory; otherwise rows are padded and each warp multiplies its
// fragments from ldmatrix with mma.sync (sm_80+).
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

/// Elements added to each padded tile row: 16 bytes of 16-bit elements.
constexpr int64_t kRowPadding = 8;
/// Elements per thread and step of a wide tile copy (16 bytes).
constexpr int64_t kCopyWidth = 8;
/// Elements of one 128-byte swizzle row (16-bit elements).
constexpr int64_t kSwizzleColumns = 64;

/// The SM version of `chip` ("sm_90a" -> 90), or 0 when it is not one.
int64_t smVersion(StringRef chip) {
  int64_t version = 0;
  if (!chip.consume_front("sm_"))
    return 0;
  chip.consumeInteger(10, version);
  return version;
}

/// Whether a tile takes the 128-byte swizzle on `version`: sm_90 and newer,
/// rows of whole 64-element groups.
bool isSwizzled(TileType tile, int64_t version) {
  return version >= 90 && tile.getColumns() % kSwizzleColumns == 0;
}

/// The tensor units' 128-byte swizzle. Columns come in groups of 64 (128
/// bytes), each group a block of `rows` 128-byte rows; in row r the eight
/// 16-byte chunks are permuted, chunk c stored at c ^ (r % 8). A 1024-byte
/// aligned buffer keeps the pattern where the hardware expects it.
TileLayout swizzledLayout(TileType tile) {
  int64_t rows = tile.getRows();
  TileLayout layout;
  layout.elements = rows * tile.getColumns();
  layout.alignment = 1024;
  // The 128-byte swizzle permutes chunks within each 8 rows.
  layout.rowPitch = kSwizzleColumns;
  layout.index = [rows](OpBuilder &b, Location loc, Value row,
                        Value column) -> Value {
    MatrixArith e{b, loc};
    Value group = e.divu(column, e.i32(kSwizzleColumns));
    Value inGroup = e.remu(column, e.i32(kSwizzleColumns));
    Value chunk = e.xorI(e.divu(inGroup, e.i32(8)), e.remu(row, e.i32(8)));
    Value at =
        e.add(e.mul(group, e.i32(rows * kSwizzleColumns)),
              e.add(e.mul(row, e.i32(kSwizzleColumns)),
                    e.add(e.mul(chunk, e.i32(8)), e.remu(inGroup, e.i32(8)))));
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), at);
  };
  return layout;
}

/// The shared-memory address of a tile buffer (a view into a ring, too), as
/// an i64; tiles hold 2-byte elements.
Value sharedAddress(OpBuilder &b, Location loc, Value buffer) {
  MatrixArith e{b, loc};
  Value address = e.add(
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer),
      e.mul(
          memref::ExtractStridedMetadataOp::create(b, loc, buffer).getOffset(),
          e.index(2)));
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
}

/// Emits one kjit.mma as its warpgroup's four warps each multiplying its 16
/// rows: fragments from ldmatrix, products from mma.sync.
class SyncMultiply {
public:
  SyncMultiply(OpBuilder &b, MmaOp mma, TileLayout aLayout, TileLayout bLayout)
      : e{b, mma.getLoc()}, mma(mma), aLayout(std::move(aLayout)),
        bLayout(std::move(bLayout)) {}

  Value emit(Value aBuffer, Value bBuffer);

private:
  /// `count` 8x8 matrices of 16-bit elements from the lanes' row
  /// addresses (`base` plus the layout's offset of (row, column)).
  SmallVector<Value> loadMatrices(Value base, const TileLayout &layout,
                                  Value row, Value column, int count,
                                  bool transpose);

  MatrixArith e;
  MmaOp mma;
  TileLayout aLayout, bLayout;
};

SmallVector<Value> SyncMultiply::loadMatrices(Value base,
                                              const TileLayout &layout,
                                              Value row, Value column,
                                              int count, bool transpose) {
  OpBuilder &b = e.b;
  MLIRContext *context = b.getContext();
  Value index = arith::IndexCastOp::create(b, e.loc, b.getI64Type(),
                                           layout.index(b, e.loc, row, column));
  Value bytes = e.add(base, e.mul(index, e.i64(2)));
  Value address = LLVM::IntToPtrOp::create(
      b, e.loc, LLVM::LLVMPointerType::get(context, /*shared=*/3), bytes);
  SmallVector<Type> registers(count, b.getI32Type());
  Type resultType =
      count == 1 ? b.getI32Type()
                 : Type(LLVM::LLVMStructType::getLiteral(context, registers));
  Value loaded = NVVM::LdMatrixOp::create(
      b, e.loc, resultType, address, b.getI32IntegerAttr(count),
      NVVM::MMALayoutAttr::get(context, transpose ? NVVM::MMALayout::col
                                                  : NVVM::MMALayout::row),
      NVVM::LdStMatrixShapeAttr::get(context, 8, 8),
      NVVM::LdStMatrixEltTypeAttr::get(context, NVVM::LdStMatrixEltType::B16));
  if (count == 1)
    return {loaded};
  SmallVector<Value> values;
  for (int64_t i = 0; i < count; ++i)
    values.push_back(LLVM::ExtractValueOp::create(b, e.loc, loaded, i));
  return values;
}

Value SyncMultiply::emit(Value aBuffer, Value bBuffer) {
  OpBuilder &b = e.b;
  TileType aTile = mma.getA().getType(), bTile = mma.getB().getType();
  bool isBF16 = aTile.getElementType().isBF16();
  int64_t depth = aTile.getColumns(), width = bTile.getColumns();

  Value lane = e.both(e.threadId(), e.i32(31));
  Value warp = e.both(e.shr(e.threadId(), e.i32(5)), e.i32(3));
  Value half = e.shr(lane, e.i32(4)); // lanes 16-31
  // A, ldmatrix.x4: lanes 0-15 address rows 0-15 of the warp's 16 at
  // column 0 of the step, lanes 16-31 the same rows at column 8; the four
  // matrices are the m16n8k16 A fragment's registers a0..a3.
  Value aRow = e.add(e.add(mma.getRow(), e.mul(warp, e.i32(16))),
                     e.both(lane, e.i32(15)));
  Value aColumn = e.mul(half, e.i32(8));
  // B, ldmatrix.x4.trans over 16 columns: lanes 8m .. 8m + 7 address the
  // rows of matrix m, K rows 0-7 (m even) or 8-15 (m odd) of the step, in
  // columns 0-7 (m < 2) or 8-15; transposed, matrices 0, 1 are b0, b1 of
  // the first 8 columns, 2, 3 of the next 8.
  Value bRow = e.add(e.both(lane, e.i32(7)),
                     e.mul(e.both(e.shr(lane, e.i32(3)), e.i32(1)), e.i32(8)));
  Value bColumn = e.mul(half, e.i32(8));

  Value aBase = sharedAddress(b, e.loc, aBuffer);
  Value bBase = sharedAddress(b, e.loc, bBuffer);
  SmallVector<Value> fragment;
  for (int64_t i = 0, n = width / 2; i < n; ++i)
    fragment.push_back(vector::ExtractOp::create(b, e.loc, mma.getAcc(), i));

  MLIRContext *context = b.getContext();
  Type f32 = b.getF32Type();
  Type resultType =
      LLVM::LLVMStructType::getLiteral(context, {f32, f32, f32, f32});
  NVVM::MMATypes ptxType = isBF16 ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
  auto operand = [&](Value reg) -> Value {
    if (isBF16) // bf16 pairs travel as i32 (the intrinsic's form).
      return reg;
    return LLVM::BitcastOp::create(b, e.loc,
                                   VectorType::get({2}, b.getF16Type()), reg);
  };
  for (int64_t step = 0; step < depth; step += 16) {
    SmallVector<Value> a =
        loadMatrices(aBase, aLayout, aRow, e.add(aColumn, e.i32(step)), 4,
                     /*transpose=*/false);
    for (auto &reg : a)
      reg = operand(reg);
    for (int64_t column = 0; column < width; column += 16) {
      // The last 8 columns of an N that is 8 mod 16 read two matrices (the
      // lanes past them address nothing the instruction reads).
      int count = column + 16 <= width ? 4 : 2;
      Value laneColumn =
          count == 4 ? e.add(bColumn, e.i32(column)) : e.i32(column);
      SmallVector<Value> bRegs =
          loadMatrices(bBase, bLayout, e.add(bRow, e.i32(step)), laneColumn,
                       count, /*transpose=*/true);
      for (int pair = 0; pair < count / 2; ++pair) {
        int64_t first = (column / 8 + pair) * 4; // fragment element
        Value bOperands[] = {operand(bRegs[2 * pair]),
                             operand(bRegs[2 * pair + 1])};
        auto product = NVVM::MmaOp::create(
            b, e.loc, resultType, a, bOperands,
            ArrayRef<Value>(fragment).slice(first, 4),
            ArrayRef<int64_t>{16, 8, 16}, std::nullopt, std::nullopt,
            std::array<NVVM::MMATypes, 2>{ptxType, ptxType},
            std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                           NVVM::MMALayout::col});
        for (int64_t i = 0; i < 4; ++i)
          fragment[first + i] =
              LLVM::ExtractValueOp::create(b, e.loc, product, i);
      }
    }
  }
  return vector::FromElementsOp::create(b, e.loc, mma.getAcc().getType(),
                                        fragment);
}

/// Emits one kjit.mma as K/16 wgmma.mma_async m64nNk16 of the warpgroup,
/// both operands read from swizzled shared memory through descriptors: A
/// K-major (its rows), B N-major (a row-major K x N tile, transposed).
class AsyncMultiply {
public:
  AsyncMultiply(OpBuilder &b, MmaOp mma) : e{b, mma.getLoc()}, mma(mma) {}

  /// `inFlight`: wait until at most one group (this one) is running, so
  /// that it overlaps what follows; the fragment is then final only after
  /// a later wait.
  Value emit(Value aBuffer, Value bBuffer, bool inFlight);

private:
  /// A shared-memory matrix descriptor: the start address, the strides
  /// between 64-element groups (leading) and 8-row blocks (stride), the
  /// 128-byte swizzle.
  Value descriptor(Value start, int64_t leadingBytes, int64_t strideBytes);

  MatrixArith e;
  MmaOp mma;
};

Value AsyncMultiply::descriptor(Value start, int64_t leadingBytes,
                                int64_t strideBytes) {
  Value address = e.shr(e.both(start, e.i64(0x3FFFF)), e.i64(4));
  int64_t fields = ((leadingBytes >> 4) & 0x3FFF) << 16 |
                   ((strideBytes >> 4) & 0x3FFF) << 32 |
                   int64_t(1) << 62; // 128-byte swizzle
  return e.orI(address, e.i64(fields));
}

Value AsyncMultiply::emit(Value aBuffer, Value bBuffer, bool inFlight) {
  OpBuilder &b = e.b;
  MLIRContext *context = b.getContext();
  TileType aTile = mma.getA().getType(), bTile = mma.getB().getType();
  int64_t depth = aTile.getColumns(), width = bTile.getColumns();
  int64_t groupRowBytes = kSwizzleColumns * 2;
  Value aBase = sharedAddress(b, e.loc, aBuffer);
  Value bBase = sharedAddress(b, e.loc, bBuffer);
  // The warpgroup's 64 rows of A start `row` rows into each column group.
  Value aRows = e.mul(e.toU64(mma.getRow()), e.i64(groupRowBytes));

  Type f32 = b.getF32Type();
  int64_t count = width / 2;
  auto accType =
      LLVM::LLVMStructType::getLiteral(context, SmallVector<Type>(count, f32));
  Value acc = LLVM::UndefOp::create(b, e.loc, accType);
  for (int64_t i = 0; i < count; ++i)
    acc = LLVM::InsertValueOp::create(
        b, e.loc, acc, vector::ExtractOp::create(b, e.loc, mma.getAcc(), i), i);

  auto type = aTile.getElementType().isBF16() ? NVVM::WGMMATypes::bf16
                                              : NVVM::WGMMATypes::f16;
  auto typeAttr = NVVM::WGMMATypesAttr::get(context, type);
  auto one = NVVM::WGMMAScaleInAttr::get(context, NVVM::WGMMAScaleIn::one);
  NVVM::WgmmaFenceAlignedOp::create(b, e.loc);
  for (int64_t step = 0; step < depth; step += 16) {
    // A: 16 columns of a 128-byte row are 32 bytes into it; K past 64
    // moves to the next column group.
    int64_t aGroup = step / kSwizzleColumns * aTile.getRows() * groupRowBytes;
    Value aStart =
        e.add(e.add(aBase, aRows), e.i64(aGroup + step % kSwizzleColumns * 2));
    // B: 16 rows further down; its column groups are a block of rows apart.
    Value bStart = e.add(bBase, e.i64(step * groupRowBytes));
    Value descA = descriptor(aStart, 16, 8 * groupRowBytes);
    Value descB =
        descriptor(bStart, bTile.getRows() * groupRowBytes, 8 * groupRowBytes);
    acc = NVVM::WgmmaMmaAsyncOp::create(
        b, e.loc, accType, acc, descA, descB,
        NVVM::MMAShapeAttr::get(context, 64, width, 16), typeAttr, typeAttr,
        NVVM::WGMMATypesAttr::get(context, NVVM::WGMMATypes::f32),
        NVVM::WGMMAScaleOutAttr::get(context, NVVM::WGMMAScaleOut::one), one,
        one, NVVM::MMALayoutAttr::get(context, NVVM::MMALayout::row),
        NVVM::MMALayoutAttr::get(context, NVVM::MMALayout::row),
        /*satfinite=*/nullptr);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, e.loc);
  NVVM::WgmmaWaitGroupSyncOp::create(b, e.loc, inFlight ? 1 : 0);
  SmallVector<Value> fragment;
  for (int64_t i = 0; i < count; ++i)
    fragment.push_back(LLVM::ExtractValueOp::create(b, e.loc, acc, i));
  return vector::FromElementsOp::create(b, e.loc, mma.getAcc().getType(),
                                        fragment);
}

/// One cp.async of 16 bytes from `base[offset]` (global) to `buffer[index]`
/// (shared), reading nothing and writing zeros where `inside` is false (a
/// null `inside`: always inside, no source size). A copy outside reads from
/// offset 0 with a source size of 0, so no address outside the matrix is
/// formed.
void copyChunkAsync(OpBuilder &b, Location loc, Value base, Value offset,
                    Value inside, Value buffer, Value index) {
  MLIRContext *context = b.getContext();
  MatrixArith e{b, loc};
  auto global = LLVM::LLVMPointerType::get(context, /*global=*/1);
  // The kjit pointer is the global pointer the cuda lowering makes of it.
  Value pointer =
      UnrealizedConversionCastOp::create(b, loc, global, base).getResult(0);
  auto element = cast<MemRefType>(buffer.getType()).getElementType();
  if (inside)
    offset = arith::SelectOp::create(b, loc, inside, offset, e.i64(0));
  Value source =
      LLVM::GEPOp::create(b, loc, global, element, pointer, ValueRange{offset});
  Value at = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  // An element offset from the buffer (rather than integer arithmetic on its
  // address) lets the code generator fold the constant part of it into the
  // instruction's address.
  auto shared = LLVM::LLVMPointerType::get(context, /*shared=*/3);
  Value target = LLVM::GEPOp::create(
      b, loc, shared, element,
      LLVM::IntToPtrOp::create(b, loc, shared, sharedAddress(b, loc, buffer)),
      ValueRange{at});
  Value size =
      inside
          ? Value(arith::SelectOp::create(b, loc, inside, e.i32(16), e.i32(0)))
          : Value();
  NVVM::CpAsyncOp::create(b, loc, target, source, b.getI32IntegerAttr(16),
                          NVVM::LoadCacheModifierKindAttr::get(
                              context, NVVM::LoadCacheModifierKind::CG),
                          size);
}

/// Tile buffers in the kernel's dynamic shared memory, one after another,
/// each 1024-byte aligned (what the swizzle needs): views made at the
/// kernel's entry, so that they dominate every use. The module's
/// `kjit.shared_dynamic_bytes` says how much a launch must provide.
class DynamicSharedMemory {
public:
  Value allocate(OpBuilder &b, Operation *kernel, TileType tile,
                 const TileLayout &layout) {
    Region &body = kernel->getRegion(0);
    Location loc = kernel->getLoc();
    auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(),
                                                gpu::AddressSpace::Workgroup);
    OpBuilder::InsertionGuard guard(b);
    Placement &place = placements[kernel];
    if (!place.base) {
      b.setInsertionPointToStart(&body.front());
      place.base = gpu::DynamicSharedMemoryOp::create(
          b, loc,
          MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                          MemRefLayoutAttrInterface(), workgroup));
      place.last = place.base.getDefiningOp();
    }
    b.setInsertionPointAfter(place.last);
    int64_t bytes = layout.elements * 2;
    int64_t offset = llvm::alignTo(place.bytes, 1024);
    Value shift = arith::ConstantIndexOp::create(b, loc, offset);
    auto view = memref::ViewOp::create(
        b, loc,
        MemRefType::get({layout.elements}, tile.getElementType(),
                        MemRefLayoutAttrInterface(), workgroup),
        place.base, shift, ValueRange{});
    place.last = view;
    place.bytes = offset + bytes;
    total = std::max(total, place.bytes);
    return view;
  }
  int64_t bytes() const { return total; }

private:
  struct Placement {
    Value base;
    Operation *last = nullptr;
    int64_t bytes = 0;
  };
  DenseMap<Operation *, Placement> placements;
  int64_t total = 0;
};

struct CudaLowerMatrixPass
    : kjit::impl::KjitCudaLowerMatrixBase<CudaLowerMatrixPass> {
  using KjitCudaLowerMatrixBase::KjitCudaLowerMatrixBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkNumWarpsOption(module, getArgument(), numWarps)))
      return signalPassFailure();
    int64_t version = smVersion(chip);
    bool hasWgmma = version == 90 && StringRef(chip).ends_with("a");
    auto layout = [version](TileType tile) {
      return isSwizzled(tile, version) ? swizzledLayout(tile)
                                       : rowMajorLayout(tile, kRowPadding);
    };
    DynamicSharedMemory shared;
    MatrixLowering lowering;
    lowering.numWarps = numWarps;
    lowering.layout = layout;
    lowering.copyVectorWidth = kCopyWidth;
    lowering.allocate = [&](OpBuilder &b, Operation *kernel, TileType tile,
                            const TileLayout &tileLayout) {
      return shared.allocate(b, kernel, tile, tileLayout);
    };
    if (version >= 80) {
      lowering.numStages = numStages;
      lowering.copyAsync = [](OpBuilder &b, Location loc, Value base,
                              Value offset, Value inside, Value buffer,
                              Value index) {
        copyChunkAsync(b, loc, base, offset, inside, buffer, index);
      };
      lowering.commitCopies = [](OpBuilder &b, Location loc) {
        NVVM::CpAsyncCommitGroupOp::create(b, loc);
      };
      lowering.waitCopies = [](OpBuilder &b, Location loc, int64_t pending) {
        NVVM::CpAsyncWaitGroupOp::create(b, loc, pending);
      };
    }
    lowering.afterCopy = [version, hasWgmma](OpBuilder &b, Location loc,
                                             ArrayRef<TileType> tiles) {
      // wgmma reads through the async proxy, which sees the copy's
      // generic-proxy stores only after this fence (then the barrier).
      if (hasWgmma && llvm::any_of(tiles, [&](TileType tile) {
            return isSwizzled(tile, version);
          }))
        NVVM::FenceProxyOp::create(
            b, loc, NVVM::ProxyKind::async_shared,
            NVVM::SharedSpaceAttr::get(b.getContext(),
                                       NVVM::SharedSpace::shared_cta));
    };
    lowering.multipliesStayInFlight = hasWgmma;
    lowering.finishMultiplies = [](OpBuilder &b, Location loc) {
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    };
    lowering.multiply = [&](OpBuilder &b, MmaOp mma, Value a, Value bTile,
                            bool inFlight) -> FailureOr<Value> {
      if (version < 80)
        return mma.emitOpError()
               << "needs sm_80 or newer (mma.sync); the target is " << chip;
      TileType aTile = mma.getA().getType(), bType = mma.getB().getType();
      if (hasWgmma && isSwizzled(aTile, version) && isSwizzled(bType, version))
        return AsyncMultiply(b, mma).emit(a, bTile, inFlight);
      return SyncMultiply(b, mma, layout(aTile), layout(bType)).emit(a, bTile);
    };
    if (failed(lowerMatrixOperations(module, lowering)))
      return signalPassFailure();
    if (shared.bytes())
      module->setAttr("kjit.shared_dynamic_bytes",
                      OpBuilder(module).getI64IntegerAttr(shared.bytes()));
  }
};

} // namespace
