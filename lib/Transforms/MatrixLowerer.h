//===- MatrixLowerer.h - the matrix lowering's internals --------*- C++ -*-===//
//
// What LowerMatrix.cpp (the operations) and PipelineTiles.cpp (loops whose
// tile copies stay in flight) share: the lowerer's state. Private to
// lib/Transforms.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_TRANSFORMS_MATRIXLOWERER_H
#define KJIT_LIB_TRANSFORMS_MATRIXLOWERER_H

#include "kjit/Analysis/Divisibility.h"
#include "kjit/Transforms/LowerMatrix.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace kjit::matrix {

/// Whether the specialization proves `value` a multiple of `divisor` (a
/// power of two).
inline bool provenMultiple(mlir::Value value, int64_t divisor) {
  return knownDivisor(value) % uint64_t(divisor) == 0;
}

/// Rewrites the matrix-unit operations of one module.
class MatrixLowerer {
public:
  MatrixLowerer(mlir::ModuleOp module, const MatrixLowering &lowering)
      : module(module), symbols(module), lowering(lowering) {}

  mlir::LogicalResult run();

private:
  TileLayout layoutOf(TileType tile) const {
    return lowering.layout ? lowering.layout(tile) : rowMajorLayout(tile);
  }
  /// A buffer of its own for a tile, or a ring of `count` of them one
  /// after another (`ringStride` elements apart, each as aligned as the
  /// layout asks), valid from the builder's position (or everywhere in
  /// `kernel`, where the target places buffers).
  mlir::Value bufferFor(mlir::OpBuilder &b, mlir::Location loc, TileType tile,
                        mlir::Operation *kernel, int64_t count = 1);
  /// A buffer for a tile in `layout` rather than the target's.
  mlir::Value bufferIn(mlir::OpBuilder &b, mlir::Location loc, TileType tile,
                       const TileLayout &layout, mlir::Operation *kernel);
  int64_t ringStride(TileType tile) const;
  /// The buffer at `index` (index type) of a ring: a view, so that a
  /// pipelined loop finds its stage by arithmetic rather than by choosing.
  mlir::Value ringBuffer(mlir::OpBuilder &b, mlir::Location loc, TileType tile,
                         mlir::Value ring, mlir::Value index);
  /// Whether a load's tile may be copied `copyVectorWidth` elements a step
  /// whatever its column coordinate is at run time (`andColumn`: the
  /// coordinate proven too).
  bool alignedForWideCopy(TileLoadOp load, bool andColumn) const;
  /// The program copies the tile at (row, column) of `desc` into `buffer`,
  /// `width` elements a step, zeros outside the matrix or where `valid`
  /// (may be null) is false: synchronously, or as asynchronous copies.
  void copyTile(mlir::OpBuilder &b, mlir::Location loc, TileType tile,
                TensorDescOp desc, mlir::Value buffer, mlir::Value row,
                mlir::Value column, int64_t width, mlir::Value valid,
                bool async);
  mlir::Value multiplyByLoops(mlir::OpBuilder &b, MmaOp mma, mlir::Value a,
                              mlir::Value bTile);
  void lowerCoords(mlir::OpBuilder &b, MmaCoordsOp coords);
  void lowerStore(mlir::OpBuilder &b, MmaStoreOp store);
  /// The fragment pair (index, index + 1) of `store`, rounded to C's type.
  mlir::Value pairValue(mlir::OpBuilder &b, MmaStoreOp store, int64_t index);
  /// The staged store of a warpgroup's block wholly inside C (16-bit).
  void stageStore(mlir::OpBuilder b, MmaStoreOp store);
  /// Columns of C a staged store moves at a time, and elements per store.
  static constexpr int64_t kStageColumns = 64;
  static constexpr int64_t kStoreWidth = 8;

  /// PipelineTiles.cpp: pipelines every loop that qualifies, recording its
  /// loads' buffers in `buffers`.
  void pipelineLoops();
  bool canPipeline(mlir::scf::ForOp loop,
                   llvm::SmallVectorImpl<TileLoadOp> &loads) const;
  void pipeline(mlir::scf::ForOp loop, llvm::ArrayRef<TileLoadOp> loads);

  mlir::ModuleOp module;
  mlir::SymbolTable symbols;
  const MatrixLowering &lowering;
  /// Each lowered tile's buffer.
  llvm::DenseMap<mlir::Value, mlir::Value> buffers;
  /// The pipelined loops whose multiplies may stay in flight.
  llvm::DenseSet<mlir::Operation *> inFlightLoops;
};

} // namespace kjit::matrix

#endif // KJIT_LIB_TRANSFORMS_MATRIXLOWERER_H
