//===- LowerMatrix.cpp - the kjit-lower-matrix pass -----------------------===//
//
// Tile loads become workgroup buffers filled by the whole program between
// two barriers; fragments, coordinates and stores become the index formulas
// of the fragment layout (docs/MatrixUnits.md). The multiply is the
// target's: the portable one is a loop over K per fragment element.
//
//===----------------------------------------------------------------------===//

#include "MatrixLowerer.h"

#include <limits>

#include "kjit/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"

namespace kjit {
#define GEN_PASS_DEF_KJITLOWERMATRIX
#include "kjit/Transforms/Passes.h.inc"
} // namespace kjit

using namespace mlir;
using namespace kjit;

using namespace kjit::matrix;

namespace {

/// Where thread `tid` sits in its warpgroup's fragment layout: the row and
/// column of fragment element 0 (`16 * (warp % 4) + lane / 4` and
/// `2 * (lane % 4)`, i32).
std::pair<Value, Value> fragmentOrigin(MatrixArith &e) {
  Value tid = e.threadId();
  Value lane = e.remu(tid, e.i32(32));
  Value warp = e.remu(e.divu(tid, e.i32(32)), e.i32(4));
  Value row = e.add(e.mul(warp, e.i32(16)), e.divu(lane, e.i32(4)));
  Value column = e.mul(e.remu(lane, e.i32(4)), e.i32(2));
  return {row, column};
}

/// Whether `first` .. `first + extent - 1` lie in [0, bound): in i64, where
/// neither the sum nor a negative bound can wrap.
Value spanInside(MatrixArith &e, Value first, int64_t extent, Value bound) {
  Value start = e.toI64(first);
  return e.both(e.atLeast(start, e.i64(0)),
                e.atLeast(e.toI64(bound), e.add(start, e.i64(extent))));
}

/// The fixed offsets of fragment element `element` from the thread's origin.
int64_t rowOffset(int64_t element) { return 8 * ((element / 2) % 2); }
int64_t columnOffset(int64_t element) {
  return 8 * (element / 4) + element % 2;
}

} // namespace

Value MatrixLowerer::bufferFor(OpBuilder &b, Location loc, TileType tile,
                               Operation *kernel, int64_t count) {
  TileLayout layout = layoutOf(tile);
  layout.elements = count * ringStride(tile);
  return bufferIn(b, loc, tile, layout, kernel);
}

Value MatrixLowerer::bufferIn(OpBuilder &b, Location loc, TileType tile,
                              const TileLayout &layout, Operation *kernel) {
  if (lowering.allocate)
    return lowering.allocate(b, kernel, tile, layout);
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto type = MemRefType::get({layout.elements}, tile.getElementType(),
                              MemRefLayoutAttrInterface(), workgroup);
  OpBuilder atModule = OpBuilder::atBlockBegin(module.getBody());
  auto global = memref::GlobalOp::create(
      atModule, loc, "kjit_tile", atModule.getStringAttr("private"), type,
      /*initial_value=*/Attribute(), /*constant=*/false,
      /*alignment=*/atModule.getI64IntegerAttr(layout.alignment));
  symbols.insert(global); // renamed kjit_tile_N where taken
  return memref::GetGlobalOp::create(b, loc, type, global.getSymName());
}

int64_t MatrixLowerer::ringStride(TileType tile) const {
  TileLayout layout = layoutOf(tile);
  int64_t bytes = tile.getElementType().getIntOrFloatBitWidth() / 8;
  return llvm::alignTo(layout.elements * bytes, layout.alignment) / bytes;
}

Value MatrixLowerer::ringBuffer(OpBuilder &b, Location loc, TileType tile,
                                Value ring, Value index) {
  MatrixArith e{b, loc};
  int64_t elements = layoutOf(tile).elements;
  Value offset = e.mul(index, e.index(ringStride(tile)));
  return memref::SubViewOp::create(
      b, loc, ring, ArrayRef<OpFoldResult>{offset},
      ArrayRef<OpFoldResult>{b.getIndexAttr(elements)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
}

bool MatrixLowerer::alignedForWideCopy(TileLoadOp load, bool andColumn) const {
  auto desc = load.getDesc().getDefiningOp<TensorDescOp>();
  int64_t width = lowering.copyVectorWidth;
  return desc && width > 1 && provenMultiple(desc.getBase(), 16) &&
         provenMultiple(desc.getStrides()[0], width) &&
         provenMultiple(desc.getShape()[1], width) &&
         load.getType().getColumns() % width == 0 &&
         (!andColumn || provenMultiple(load.getCoords()[1], width));
}

/// The program copies a tile; thread `tid` takes steps tid, tid + threads,
/// ... of it in row-major order. Where the whole tile lies inside the
/// matrix (the common case, every tile but those on its right and bottom
/// edges), one uniform branch takes copies without masks, so that the
/// steady state computes no per-step bounds; the other branch masks each
/// step. A step's offset is the tile origin's (once per tile) plus its own
/// within the tile (the same in every tile, so it leaves the loop).
void MatrixLowerer::copyTile(OpBuilder &b, Location loc, TileType tile,
                             TensorDescOp desc, Value buffer, Value firstRow,
                             Value firstColumn, int64_t width, Value valid,
                             bool async) {
  MatrixArith e{b, loc};
  const Value givenColumn = firstColumn;
  if (width > 1) // Known equal: lets the lowering prove the alignment.
    firstColumn =
        e.mul(arith::DivSIOp::create(b, loc, firstColumn, e.i32(width)),
              e.i32(width));
  Value rows = desc.getShape()[0], columns = desc.getShape()[1];
  Value stride32 = desc.getStrides()[0];
  Value stride = e.toI64(stride32);
  Value origin = e.add(e.mul(e.toI64(firstRow), stride), e.toI64(firstColumn));

  // Where the threads divide the steps and a pass of them covers whole rows
  // a multiple of 8 apart, a thread's steps share one column and its rows
  // are `rowsPerPass` apart: unrolled here, each step's place in the buffer
  // a constant away from the first's, and its source the first's plus
  // `pass * rowsPerPass` rows. Unmasked, each step's source is independent
  // of the others': a chain of adds made every copy wait for the one
  // before, and with one program per multiprocessor the copies' issue then
  // left the matrix units idle (bench/results/matmul.md). Masked steps (the
  // edge tiles) keep the chain, which needs one offset live rather than
  // one per step. Otherwise thread `tid` takes steps tid, tid + threads, ...
  const int64_t stepsPerRow = tile.getColumns() / width;
  const int64_t threads = 32 * lowering.numWarps;
  const int64_t steps = tile.getRows() * stepsPerRow;
  const int64_t rowsPerPass = threads / stepsPerRow;
  const int64_t passes = steps / threads;
  TileLayout layout = layoutOf(tile);
  const bool regular = steps % threads == 0 && threads % stepsPerRow == 0 &&
                       rowsPerPass % 8 == 0 && layout.rowPitch > 0;

  // The unmasked steps' row offsets are i32 products of the stride,
  // sign-extended: loop invariants that ptxas keeps in one register each
  // (as i64 products, two, and the loop ran 3.5-5% slower on an H200). A
  // stride whose largest product could wrap copies every tile masked
  // instead: the whole-tile test then takes 0 for one of its bounds. Which
  // one: that of a coordinate the enclosing loop does not change (in a
  // matmul, A's rows and B's columns), so that the narrowed test is loop
  // invariant as a whole and the loop keeps its one compare (one more
  // condition there cost 9% on an H100).
  const int64_t lastRowOffset = regular ? (passes - 1) * rowsPerPass : 0;
  Value rowBound = rows, columnBound = columns;
  if (lastRowOffset > 0) {
    const int64_t limit = std::numeric_limits<int32_t>::max() / lastRowOffset;
    Value narrow = e.both(e.atLeast(stride32, e.i32(-limit)),
                          e.atLeast(e.i32(limit), stride32));
    auto loop =
        b.getInsertionBlock()->getParent()->getParentOfType<scf::ForOp>();
    Value &bound = loop && loop.isDefinedOutsideOfLoop(givenColumn) &&
                           !loop.isDefinedOutsideOfLoop(firstRow)
                       ? columnBound
                       : rowBound;
    bound = arith::SelectOp::create(b, loc, narrow, bound, e.i32(0));
  }
  Value whole =
      e.both(spanInside(e, firstRow, tile.getRows(), rowBound),
             spanInside(e, firstColumn, tile.getColumns(), columnBound));
  if (valid)
    whole = e.both(valid, whole);
  auto branch = scf::IfOp::create(b, loc, whole, /*withElseRegion=*/true);

  auto copySteps = [&](OpBuilder inner, bool masked) {
    MatrixArith s{inner, loc};
    // The matrix offset of the step at (row, column) of the tile.
    auto offsetOf = [&](Value row, Value column) {
      return s.add(origin, s.add(s.mul(s.toI64(row), stride), s.toI64(column)));
    };
    auto copyStep = [&](Value row, Value column, Value offset, Value at) {
      Value inside;
      if (masked) {
        inside = s.both(s.inRange(s.add(firstRow, row), rows),
                        s.inRange(s.add(firstColumn, column), columns));
        if (valid)
          inside = s.both(valid, inside);
      }
      if (async) {
        lowering.copyAsync(inner, loc, desc.getBase(), offset, inside, buffer,
                           at);
        return;
      }
      Type element = tile.getElementType();
      Type valueType =
          width > 1 ? Type(VectorType::get({width}, element)) : element;
      Value value = LoadOp::create(inner, loc, valueType, desc.getBase(),
                                   offset, inside, Value());
      if (width > 1)
        vector::StoreOp::create(inner, loc, value, buffer, at,
                                /*nontemporal=*/false,
                                llvm::MaybeAlign(width * 2));
      else
        memref::StoreOp::create(inner, loc, value, buffer, at);
    };
    Value tid = s.threadId();
    if (regular) {
      Value row = s.divu(tid, s.i32(stepsPerRow));
      Value column = s.mul(s.remu(tid, s.i32(stepsPerRow)), s.i32(width));
      Value start = offsetOf(row, column), offset = start;
      Value passOffset = masked ? s.mul(s.i64(rowsPerPass), stride) : Value();
      Value first = layout.index(inner, loc, row, column);
      for (int64_t pass = 0; pass < passes; ++pass) {
        if (pass) {
          row = s.add(row, s.i32(rowsPerPass));
          offset =
              masked
                  ? s.add(offset, passOffset)
                  : s.add(start,
                          s.toI64(s.mul(stride32, s.i32(pass * rowsPerPass))));
        }
        Value at = s.add(first, s.index(pass * rowsPerPass * layout.rowPitch));
        copyStep(row, column, offset, at);
      }
      return;
    }
    auto loop = scf::ForOp::create(inner, loc, s.toIndex(tid), s.index(steps),
                                   s.index(threads));
    inner.setInsertionPointToStart(loop.getBody());
    Value step = s.toI32(loop.getInductionVar());
    Value row = s.divu(step, s.i32(stepsPerRow));
    Value column = s.mul(s.remu(step, s.i32(stepsPerRow)), s.i32(width));
    copyStep(row, column, offsetOf(row, column),
             layout.index(inner, loc, row, column));
  };
  copySteps(branch.getThenBodyBuilder(), /*masked=*/false);
  copySteps(branch.getElseBodyBuilder(), /*masked=*/true);
  if (!async && lowering.afterCopy) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfter(branch);
    lowering.afterCopy(b, loc, tile);
  }
}

/// Fragment element e: acc[e] + sum over k of A[row + r_e][k] * B[k][c_e].
Value MatrixLowerer::multiplyByLoops(OpBuilder &b, MmaOp mma, Value a,
                                     Value bTile) {
  MatrixArith e{b, mma.getLoc()};
  auto [originRow, originColumn] = fragmentOrigin(e);
  Value firstRow = e.add(mma.getRow(), originRow);
  int64_t depth = mma.getA().getType().getColumns();
  TileLayout aLayout = layoutOf(mma.getA().getType());
  TileLayout bLayout = layoutOf(mma.getB().getType());
  Value result = mma.getAcc();
  Type f32 = b.getF32Type();
  for (int64_t element = 0, n = mma.getAcc().getType().getNumElements();
       element < n; ++element) {
    Value row = e.add(firstRow, e.i32(rowOffset(element)));
    Value column = e.add(originColumn, e.i32(columnOffset(element)));
    Value start = vector::ExtractOp::create(b, e.loc, result, element);
    auto loop = scf::ForOp::create(b, e.loc, e.index(0), e.index(depth),
                                   e.index(1), ValueRange{start});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value k = e.toI32(loop.getInductionVar());
      Value x =
          memref::LoadOp::create(b, e.loc, a, aLayout.index(b, e.loc, row, k));
      Value y = memref::LoadOp::create(b, e.loc, bTile,
                                       bLayout.index(b, e.loc, k, column));
      Value product = arith::MulFOp::create(
          b, e.loc, arith::ExtFOp::create(b, e.loc, f32, x),
          arith::ExtFOp::create(b, e.loc, f32, y));
      Value sum =
          arith::AddFOp::create(b, e.loc, loop.getRegionIterArg(0), product);
      scf::YieldOp::create(b, e.loc, sum);
    }
    result =
        vector::InsertOp::create(b, e.loc, loop.getResult(0), result, element);
  }
  return result;
}

void MatrixLowerer::lowerCoords(OpBuilder &b, MmaCoordsOp coords) {
  MatrixArith e{b, coords.getLoc()};
  auto [originRow, originColumn] = fragmentOrigin(e);
  VectorType type = coords.getRows().getType();
  SmallVector<int32_t> rows, columns;
  for (int64_t element = 0; element < type.getNumElements(); ++element) {
    rows.push_back(rowOffset(element));
    columns.push_back(columnOffset(element));
  }
  auto offsets = [&](ArrayRef<int32_t> values) -> Value {
    return arith::ConstantOp::create(b, e.loc,
                                     DenseElementsAttr::get(type, values));
  };
  auto spread = [&](Value scalar) -> Value {
    return vector::BroadcastOp::create(b, e.loc, type, scalar);
  };
  coords.getRows().replaceAllUsesWith(e.add(spread(originRow), offsets(rows)));
  coords.getColumns().replaceAllUsesWith(
      e.add(spread(originColumn), offsets(columns)));
}

/// One masked store per fragment element, rounded to the pointer's type;
/// or, where the launch proves every pair of adjacent columns (e, e + 1)
/// aligned to their size (base, row stride and column origin even) and
/// the bound never splits one (an even column count), one store per pair.
/// Where the warpgroup's whole 64 x 2n block lies inside the matrix (every
/// block but those on its right and bottom edges), one uniform branch
/// stores without masks; the other masks each store. In that branch
/// 16-bit blocks go through workgroup memory (stageStore) where rows can be
/// proven 16-byte aligned.
void MatrixLowerer::lowerStore(OpBuilder &b, MmaStoreOp store) {
  MatrixArith e{b, store.getLoc()};
  const int64_t count = store.getAcc().getType().getNumElements();
  Value whole =
      e.both(spanInside(e, store.getRow(), 64, store.getRows()),
             spanInside(e, store.getColumn(), 2 * count, store.getColumns()));
  auto branch = scf::IfOp::create(b, e.loc, whole, /*withElseRegion=*/true);
  Type element = store.getBase().getType().getElementType();
  const bool pairs = provenMultiple(store.getBase(), 16) &&
                     provenMultiple(store.getStride(), 2) &&
                     provenMultiple(store.getColumn(), 2) &&
                     provenMultiple(store.getColumns(), 2);
  const int64_t width = pairs ? 2 : 1;
  auto storeAll = [&](OpBuilder inner, bool masked) {
    MatrixArith s{inner, store.getLoc()};
    auto [originRow, originColumn] = fragmentOrigin(s);
    Value firstRow = s.add(store.getRow(), originRow);
    Value firstColumn = s.add(store.getColumn(), originColumn);
    Value stride = s.toI64(store.getStride());
    for (int64_t index = 0; index < count; index += width) {
      Value row = s.add(firstRow, s.i32(rowOffset(index)));
      Value column = s.add(firstColumn, s.i32(columnOffset(index)));
      Value inside = masked ? s.both(s.inRange(row, store.getRows()),
                                     s.inRange(column, store.getColumns()))
                            : Value();
      Value offset = s.add(s.mul(s.toI64(row), stride), s.toI64(column));
      Value value = pairs ? pairValue(inner, store, index)
                          : Value(vector::ExtractOp::create(
                                inner, s.loc, store.getAcc(), index));
      if (!pairs && element != value.getType())
        value = arith::TruncFOp::create(inner, s.loc, element, value);
      StoreOp::create(inner, s.loc, value, store.getBase(), offset, inside);
    }
  };
  const bool staged = pairs && element.getIntOrFloatBitWidth() == 16 &&
                      (2 * count) % kStageColumns == 0 &&
                      provenMultiple(store.getStride(), kStoreWidth) &&
                      provenMultiple(store.getColumn(), kStoreWidth);
  if (staged)
    stageStore(branch.getThenBodyBuilder(), store);
  else
    storeAll(branch.getThenBodyBuilder(), /*masked=*/false);
  storeAll(branch.getElseBodyBuilder(), /*masked=*/true);
}

Value MatrixLowerer::pairValue(OpBuilder &b, MmaStoreOp store, int64_t index) {
  Location loc = store.getLoc();
  Value both[] = {vector::ExtractOp::create(b, loc, store.getAcc(), index),
                  vector::ExtractOp::create(b, loc, store.getAcc(), index + 1)};
  Value value = vector::FromElementsOp::create(
      b, loc, VectorType::get({2}, b.getF32Type()), both);
  Type element = store.getBase().getType().getElementType();
  if (element == b.getF32Type())
    return value;
  return arith::TruncFOp::create(b, loc, VectorType::get({2}, element), value);
}

/// A warpgroup's block, wholly inside C, through workgroup memory. Each
/// warp owns 16 rows of the fragment (all its columns), so the exchange
/// stays inside the warp: for each kStageColumns-wide slice, every thread
/// puts its pairs at their place in the warp's 16 rows of a staging tile,
/// the warp meets at its barrier, and each thread stores 16-byte pieces of
/// rows, 8 threads a row, 4 rows a pass; a second barrier frees the rows
/// for the next slice. A warp's store then writes 4 whole 128-byte rows
/// rather than 8 rows of 16 bytes, and a thread issues a quarter of the
/// global stores.
void MatrixLowerer::stageStore(OpBuilder b, MmaStoreOp store) {
  MatrixArith e{b, store.getLoc()};
  Location loc = store.getLoc();
  Type element = store.getBase().getType().getElementType();
  const int64_t count = store.getAcc().getType().getNumElements();
  auto tile = TileType::get(b.getContext(),
                            {16 * lowering.numWarps, kStageColumns}, element);
  // Row-major with 16 bytes of padding a row, whatever the target's tile
  // layout: rows are 36 words apart (4 banks), so a warp's 4-byte stores
  // (8 rows, 4 adjacent pairs each) and each 8 threads' 16-byte loads (one
  // row) meet no bank twice, and a thread's places differ by constants.
  TileLayout layout = rowMajorLayout(tile, kStoreWidth);
  Value buffer =
      bufferIn(b, loc, tile, layout, store->getParentOfType<KernelOp>());

  // The warp's 16 rows: of the staging tile (16 per warp of the program)
  // and of C (16 per warp of the warpgroup, below the block's first row).
  Value tid = e.threadId();
  Value warp = e.divu(tid, e.i32(32));
  Value tileRow = e.mul(warp, e.i32(16));
  Value blockRow = e.mul(e.remu(warp, e.i32(4)), e.i32(16));
  auto [originRow, originColumn] = fragmentOrigin(e);
  Value fragmentRow = e.add(tileRow, e.sub(originRow, blockRow));
  constexpr int64_t piecesPerRow = kStageColumns / kStoreWidth;
  constexpr int64_t rowsPerPass = 32 / piecesPerRow;
  Value lane = e.remu(tid, e.i32(32));
  Value readRow = e.divu(lane, e.i32(piecesPerRow));
  Value readColumn =
      e.mul(e.remu(lane, e.i32(piecesPerRow)), e.i32(kStoreWidth));
  Value stride = e.toI64(store.getStride());
  Value rowInC = e.add(store.getRow(), e.add(blockRow, readRow));
  Value rowStart = e.mul(e.toI64(rowInC), stride);
  auto pieceType = VectorType::get({kStoreWidth}, element);
  // Four fragment elements for every 8 columns (two rows, two columns).
  const int64_t perSlice = kStageColumns / 8 * 4;
  for (int64_t slice = 0; slice < 2 * count / kStageColumns; ++slice) {
    for (int64_t index = slice * perSlice; index < (slice + 1) * perSlice;
         index += 2) {
      Value row = e.add(fragmentRow, e.i32(rowOffset(index)));
      Value column = e.add(originColumn,
                           e.i32(columnOffset(index) - slice * kStageColumns));
      vector::StoreOp::create(b, loc, pairValue(b, store, index), buffer,
                              layout.index(b, loc, row, column),
                              /*nontemporal=*/false, llvm::MaybeAlign(4));
    }
    WarpBarrierOp::create(b, loc);
    Value firstColumn = e.toI64(e.add(
        store.getColumn(), e.add(readColumn, e.i32(slice * kStageColumns))));
    for (int64_t pass = 0; pass < 16 / rowsPerPass; ++pass) {
      Value row = e.add(tileRow, e.add(readRow, e.i32(pass * rowsPerPass)));
      Value piece = vector::LoadOp::create(
          b, loc, pieceType, buffer, layout.index(b, loc, row, readColumn),
          /*nontemporal=*/false, llvm::MaybeAlign(16));
      Value offset =
          e.add(e.add(rowStart, e.mul(e.i64(pass * rowsPerPass), stride)),
                firstColumn);
      StoreOp::create(b, loc, piece, store.getBase(), offset, Value());
    }
    WarpBarrierOp::create(b, loc);
  }
}

LogicalResult MatrixLowerer::run() {
  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) {
    if (isa<TensorDescOp, TileLoadOp, MmaOp, MmaCoordsOp, MmaStoreOp>(op))
      ops.push_back(op);
  });
  for (Operation *op : ops)
    if (isa<MmaOp, MmaCoordsOp, MmaStoreOp>(op) && lowering.numWarps % 4 != 0)
      return op->emitOpError()
             << "needs whole warpgroups: num_warps = " << lowering.numWarps
             << " is not a multiple of 4";

  pipelineLoops();
  for (Operation *op : ops) {
    OpBuilder b(op);
    if (auto load = dyn_cast<TileLoadOp>(op)) {
      if (buffers.count(load.getResult()))
        continue; // in a pipelined loop
      auto desc = load.getDesc().getDefiningOp<TensorDescOp>();
      if (!desc)
        return load.emitOpError()
               << "reads a descriptor that no kjit.tensor_desc of this "
                  "function made";
      Location loc = load.getLoc();
      TileType tile = load.getType();
      Value buffer = bufferFor(b, loc, tile, load->getParentOfType<KernelOp>());
      buffers[load.getResult()] = buffer;
      gpu::BarrierOp::create(b, loc);
      Value row = load.getCoords()[0], column = load.getCoords()[1];
      int64_t width = lowering.copyVectorWidth;
      if (alignedForWideCopy(load, /*andColumn=*/true)) {
        copyTile(b, loc, tile, desc, buffer, row, column, width, {}, false);
      } else if (alignedForWideCopy(load, /*andColumn=*/false)) {
        // The wide copy needs the column coordinate aligned too, which only
        // the launch knows; all threads take the same branch.
        MatrixArith e{b, loc};
        Value columnAligned = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::eq,
            arith::RemSIOp::create(b, loc, column, e.i32(width)), e.i32(0));
        auto branch =
            scf::IfOp::create(b, loc, columnAligned, /*withElseRegion=*/true);
        OpBuilder inThen = branch.getThenBodyBuilder();
        copyTile(inThen, loc, tile, desc, buffer, row, column, width, {},
                 false);
        OpBuilder inElse = branch.getElseBodyBuilder();
        copyTile(inElse, loc, tile, desc, buffer, row, column, 1, {}, false);
      } else {
        copyTile(b, loc, tile, desc, buffer, row, column, 1, {}, false);
      }
      gpu::BarrierOp::create(b, loc);
    } else if (auto mma = dyn_cast<MmaOp>(op)) {
      Value a = buffers.lookup(mma.getA()), bTile = buffers.lookup(mma.getB());
      FailureOr<Value> result =
          lowering.multiply
              ? lowering.multiply(
                    b, mma, a, bTile,
                    inFlightLoops.contains(mma->getParentOfType<scf::ForOp>()))
              : FailureOr<Value>(multiplyByLoops(b, mma, a, bTile));
      if (failed(result))
        return failure();
      mma.getResult().replaceAllUsesWith(*result);
    } else if (auto coords = dyn_cast<MmaCoordsOp>(op)) {
      lowerCoords(b, coords);
    } else if (auto store = dyn_cast<MmaStoreOp>(op)) {
      lowerStore(b, store);
    }
  }
  // Users before what they use: multiplies, then loads, then descriptors.
  for (Operation *op : llvm::reverse(ops))
    op->erase();
  return success();
}

namespace {

struct LowerMatrixPass : kjit::impl::KjitLowerMatrixBase<LowerMatrixPass> {
  using KjitLowerMatrixBase::KjitLowerMatrixBase;

  void runOnOperation() override {
    if (failed(checkNumWarpsOption(getOperation(), getArgument(), numWarps)))
      return signalPassFailure();
    MatrixLowering lowering;
    lowering.numWarps = numWarps;
    if (failed(lowerMatrixOperations(getOperation(), lowering)))
      signalPassFailure();
  }
};

} // namespace

TileLayout kjit::rowMajorLayout(TileType tile, int64_t padding) {
  int64_t stride = tile.getColumns() + padding;
  TileLayout layout;
  layout.elements = tile.getRows() * stride;
  layout.rowPitch = stride;
  layout.index = [stride](OpBuilder &b, Location loc, Value row,
                          Value column) -> Value {
    MatrixArith e{b, loc};
    return arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                      e.add(e.mul(row, e.i32(stride)), column));
  };
  return layout;
}

LogicalResult kjit::lowerMatrixOperations(ModuleOp module,
                                          const MatrixLowering &lowering) {
  return MatrixLowerer(module, lowering).run();
}
