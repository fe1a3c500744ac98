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

#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <functional>

namespace mlir {
class OpBuilder;
} // namespace mlir

namespace kjit {

/// What a target changes in the portable lowering.
struct MatrixLowering {
  /// Warps per program; warpgroup operations need a multiple of 4.
  int64_t numWarps = 4;
  /// Elements added to each row of a tile buffer. The cuda target pads rows
  /// by 16 bytes so that the eight row reads of one `ldmatrix` fall in
  /// different shared-memory banks, and so that its wide reads past the
  /// last column of a row stay inside the buffer.
  int64_t rowPadding = 0;
  /// Elements per thread and copy step when a tile load is provably aligned
  /// (a 16-byte aligned base, a row stride and a column count that are
  /// multiples of it, and a column coordinate that is at run time): 1 copies
  /// element by element only.
  int64_t copyVectorWidth = 1;
  /// The multiply of one kjit.mma, given the tile buffers of its A and B
  /// operands (memrefs in workgroup memory, `rowPadding` included); returns
  /// the new fragment. Null: the portable loop over K per fragment element.
  std::function<mlir::FailureOr<mlir::Value>(mlir::OpBuilder &, MmaOp,
                                             mlir::Value a, mlir::Value b)>
      multiply;
};

/// Rewrites every matrix-unit operation of `module` as `lowering` says.
/// Fails, with an error at the operation, on a kernel whose warpgroup
/// operations have no whole warpgroups or whose multiply fails.
mlir::LogicalResult lowerMatrixOperations(mlir::ModuleOp module,
                                          const MatrixLowering &lowering);

} // namespace kjit

#endif // KJIT_TRANSFORMS_LOWERMATRIX_H
