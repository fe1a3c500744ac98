//===- LowerMatrix.h - lowering of the matrix-unit operations ---*- C++ -*-===//
//
// The lowering of kjit-lower-matrix as a function a target calls with its
// own multiply: the tile buffers, copies, coordinates and stores are the same
// on every target; how a warpgroup multiplies two tiles is the target's.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_TRANSFORMS_LOWERMATRIX_H
#define KJIT_TRANSFORMS_LOWERMATRIX_H

#include "kjit/Dialect/Kjit/IR/Kjit.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <functional>

namespace kjit {

/// Builds the integer arithmetic of the lowering and of a target's hooks
/// at one place.
struct MatrixArith {
  mlir::OpBuilder &b;
  mlir::Location loc;

  mlir::Value i32(int64_t value) {
    return mlir::arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(value));
  }
  mlir::Value i64(int64_t value) {
    return mlir::arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(value));
  }
  mlir::Value index(int64_t value) {
    return mlir::arith::ConstantIndexOp::create(b, loc, value);
  }
  mlir::Value add(mlir::Value x, mlir::Value y) {
    return mlir::arith::AddIOp::create(b, loc, x, y);
  }
  mlir::Value sub(mlir::Value x, mlir::Value y) {
    return mlir::arith::SubIOp::create(b, loc, x, y);
  }
  mlir::Value mul(mlir::Value x, mlir::Value y) {
    return mlir::arith::MulIOp::create(b, loc, x, y);
  }
  mlir::Value divu(mlir::Value x, mlir::Value y) {
    return mlir::arith::DivUIOp::create(b, loc, x, y);
  }
  mlir::Value remu(mlir::Value x, mlir::Value y) {
    return mlir::arith::RemUIOp::create(b, loc, x, y);
  }
  /// Bitwise and: of two conditions, both.
  mlir::Value both(mlir::Value x, mlir::Value y) {
    return mlir::arith::AndIOp::create(b, loc, x, y);
  }
  mlir::Value orI(mlir::Value x, mlir::Value y) {
    return mlir::arith::OrIOp::create(b, loc, x, y);
  }
  mlir::Value xorI(mlir::Value x, mlir::Value y) {
    return mlir::arith::XOrIOp::create(b, loc, x, y);
  }
  mlir::Value shr(mlir::Value x, mlir::Value y) {
    return mlir::arith::ShRUIOp::create(b, loc, x, y);
  }
  mlir::Value less(mlir::Value x, mlir::Value y) {
    return mlir::arith::CmpIOp::create(b, loc, mlir::arith::CmpIPredicate::slt,
                                       x, y);
  }
  mlir::Value atLeast(mlir::Value x, mlir::Value y) {
    return mlir::arith::CmpIOp::create(b, loc, mlir::arith::CmpIPredicate::sge,
                                       x, y);
  }
  mlir::Value toI32(mlir::Value indexValue) {
    return mlir::arith::IndexCastOp::create(b, loc, b.getI32Type(), indexValue);
  }
  /// An integer as an index (an index as it is).
  mlir::Value toIndex(mlir::Value integer) {
    if (integer.getType().isIndex())
      return integer;
    return mlir::arith::IndexCastOp::create(b, loc, b.getIndexType(), integer);
  }
  /// An i32 widened as a signed value.
  mlir::Value toI64(mlir::Value i32Value) {
    return mlir::arith::ExtSIOp::create(b, loc, b.getI64Type(), i32Value);
  }
  /// An i32 widened as an unsigned value.
  mlir::Value toU64(mlir::Value i32Value) {
    return mlir::arith::ExtUIOp::create(b, loc, b.getI64Type(), i32Value);
  }
  /// Whether 0 <= value < bound (i32).
  mlir::Value inRange(mlir::Value value, mlir::Value bound) {
    return both(atLeast(value, i32(0)), less(value, bound));
  }
  /// The thread's x id, as i32.
  mlir::Value threadId() {
    return toI32(
        mlir::gpu::ThreadIdOp::create(b, loc, mlir::gpu::Dimension::x));
  }
};

/// Where a tile's elements sit in its workgroup buffer, a 1-D memref of the
/// tile's element type. A layout keeps each run of 8 elements that starts at
/// a column multiple of 8 contiguous and 16-byte aligned (what a wide copy
/// writes at once).
struct TileLayout {
  /// Elements the buffer holds.
  int64_t elements = 0;
  /// Byte alignment of the buffer.
  int64_t alignment = 16;
  /// Every layout repeats every 8 rows: index(row + 8k, column) is
  /// index(row, column) + 8k * rowPitch inside the tile. Copies use it to
  /// place rows 8k apart at constant offsets from each other.
  int64_t rowPitch = 0;
  /// The buffer index (index type) of the tile's element (row, column),
  /// both i32.
  std::function<mlir::Value(mlir::OpBuilder &, mlir::Location, mlir::Value row,
                            mlir::Value column)>
      index;
};

/// The portable layout: row-major, rows `columns + padding` elements apart.
TileLayout rowMajorLayout(TileType tile, int64_t padding = 0);

/// What a target changes in the portable lowering.
struct MatrixLowering {
  /// Warps per program; warpgroup operations need a multiple of 4.
  int64_t numWarps = 4;
  /// The layout of each tile's buffer. Null: rowMajorLayout.
  std::function<TileLayout(TileType)> layout;
  /// Elements per thread and copy step when a tile load is provably aligned
  /// (a 16-byte aligned base, a row stride and a column count that are
  /// multiples of it, and a column coordinate that is at run time): 1 copies
  /// element by element only.
  int64_t copyVectorWidth = 1;
  /// Emitted by each thread after its part of the synchronous copies of
  /// `tiles`, before the barrier that publishes them (the cuda target's
  /// proxy fence, when an asynchronous unit reads one). A pipelined loop's
  /// asynchronous copies are published by their wait and the barrier alone
  /// (lib/Transforms/PipelineTiles.cpp says why). Null: nothing.
  std::function<void(mlir::OpBuilder &, mlir::Location,
                     llvm::ArrayRef<TileType> tiles)>
      afterCopy;
  /// Places a tile's buffer (`layout.elements` elements of the tile's
  /// type) and returns it, a 1-D memref in workgroup memory that dominates
  /// every use in `kernel`. Null: a `memref.global` of its own.
  std::function<mlir::Value(mlir::OpBuilder &, mlir::Operation *kernel,
                            TileType, const TileLayout &)>
      allocate;
  /// Iterations whose tiles a pipelined loop keeps in flight (the
  /// num_stages launch option); below 2, or without `copyAsync`, every tile
  /// is copied where it is loaded. A loop is pipelined when its body loads
  /// tiles at coordinates computed from the induction variable by pure
  /// operations, writes no memory, and every load is provably aligned for
  /// `copyVectorWidth`-element copies (its column coordinate included).
  int64_t numStages = 1;
  /// Starts an asynchronous copy of `copyVectorWidth` elements from
  /// `base[offset]` (a `!kjit.ptr`, i64 offset) into `buffer[index]`,
  /// writing zeros instead where `inside` is false (null where the copy is
  /// known inside the matrix). Null: no pipelining.
  std::function<void(mlir::OpBuilder &, mlir::Location, mlir::Value base,
                     mlir::Value offset, mlir::Value inside, mlir::Value buffer,
                     mlir::Value index)>
      copyAsync;
  /// Closes the group of asynchronous copies this thread started since the
  /// last commit.
  std::function<void(mlir::OpBuilder &, mlir::Location)> commitCopies;
  /// Waits until at most `pending` of this thread's groups are in flight.
  std::function<void(mlir::OpBuilder &, mlir::Location, int64_t pending)>
      waitCopies;
  /// Whether a multiply may leave its work running when it returns (the
  /// cuda target's wgmma, one group in flight). In a pipelined loop the
  /// multiply is then told it may (`inFlight`), each iteration starts its
  /// copies after its multiplies and a second barrier, so that none
  /// overwrites a stage a running multiply still reads, and
  /// `finishMultiplies` runs after the loop.
  bool multipliesStayInFlight = false;
  std::function<void(mlir::OpBuilder &, mlir::Location)> finishMultiplies;
  /// The multiply of one kjit.mma, given the buffers of its A and B tiles
  /// (in `layout`); returns the new fragment. Null: the portable loop over
  /// K per fragment element.
  std::function<mlir::FailureOr<mlir::Value>(
      mlir::OpBuilder &, MmaOp, mlir::Value a, mlir::Value b, bool inFlight)>
      multiply;
};

/// Rewrites every matrix-unit operation of `module` as `lowering` says.
/// Fails, with an error at the operation, on a kernel whose warpgroup
/// operations have no whole warpgroups or whose multiply fails.
mlir::LogicalResult lowerMatrixOperations(mlir::ModuleOp module,
                                          const MatrixLowering &lowering);

} // namespace kjit

#endif // KJIT_TRANSFORMS_LOWERMATRIX_H
