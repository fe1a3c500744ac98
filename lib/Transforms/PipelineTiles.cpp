//===- PipelineTiles.cpp - tile copies in flight across loop iterations ---===//
//
// Where the target copies asynchronously (MatrixLowering::copyAsync) and
// num_stages S is 2 or more, a loop that loads tiles keeps the copies of
// the next S - 1 iterations in flight while it multiplies, in a ring of S
// buffers per load (docs/MatrixUnits.md, "num_stages").
//
//   before the loop: start the copies of iterations 0 .. S-2 (stages
//                    0 .. S-2), one commit group each;
//   iteration k:     wait until at most S - 2 groups are in flight
//                    (iteration k's have landed), barrier; the loads read
//                    stage k % S; then start iteration k+S-1's copies into
//                    stage (k-1) % S, commit.
//   after the loop:  wait for every group (and every multiply).
//
// Where does iteration k start its copies? Into (k-1) % S, so no warp may
// still read that stage. Where multiplies finish before they return, the
// barrier at the top of k shows it (every warp has left k - 1), so the
// copies start right after it: one barrier an iteration. Where multiplies
// stay in flight (wgmma, MatrixLowering::multipliesStayInFlight), k - 1's
// may still be reading when k begins; k's multiply returns once its own
// warps' k - 1 has finished, so the copies start after it, past a second
// barrier that shows every warp's has. This is the order of Triton's and
// CUTLASS's Hopper cp.async loops; the alternative, copies at the top into
// (k-2) % S, keeps one iteration fewer in flight for the same buffers.
//
// The copies are published by the wait and the barrier alone, with no
// proxy fence (MatrixLowering::afterCopy) for wgmma's async proxy: CUTLASS's
// and Triton's Hopper cp.async loops have none either, and on an H100 it
// cost up to 2% (bench/results/matmul.md).
//
// Copies past the last iteration are started with nothing to read, which
// fills their stage with zeros, so every iteration commits one group and
// the count stays right.
//
//===----------------------------------------------------------------------===//

#include "MatrixLowerer.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SmallVectorExtras.h"

using namespace mlir;
using namespace kjit;
using namespace kjit::matrix;

namespace {

/// Whether `value` can be computed for another value of `loop`'s induction
/// variable: from the variable and values defined outside the loop, through
/// pure single-result operations of the body.
bool recomputable(Value value, scf::ForOp loop, unsigned depth = 0) {
  if (depth > 32)
    return false;
  if (value == loop.getInductionVar())
    return true;
  if (!loop.getRegion().isAncestor(value.getParentRegion()))
    return true; // defined outside the loop
  Operation *def = value.getDefiningOp();
  if (!def || def->getNumRegions() != 0 || def->getNumResults() != 1 ||
      !isPure(def))
    return false;
  return llvm::all_of(def->getOperands(), [&](Value operand) {
    return recomputable(operand, loop, depth + 1);
  });
}

/// `value` (recomputable) for the induction value `at`, cloned at the
/// builder's position.
Value recompute(OpBuilder &b, Value value, scf::ForOp loop, Value at,
                IRMapping &map) {
  if (value == loop.getInductionVar())
    return at;
  if (!loop.getRegion().isAncestor(value.getParentRegion()))
    return value;
  if (Value known = map.lookupOrNull(value))
    return known;
  Operation *def = value.getDefiningOp();
  for (Value operand : def->getOperands())
    map.map(operand, recompute(b, operand, loop, at, map));
  return b.clone(*def, map)->getResult(0);
}

} // namespace

bool MatrixLowerer::canPipeline(scf::ForOp loop,
                                SmallVectorImpl<TileLoadOp> &loads) const {
  for (Operation &op : loop.getBody()->without_terminator())
    if (auto load = dyn_cast<TileLoadOp>(op))
      loads.push_back(load);
  if (loads.empty())
    return false;
  // A store in the body could feed a later iteration's load, which the
  // copies started early would read too soon.
  WalkResult writes = loop.getBody()->walk([&](Operation *op) {
    if (isa<TileLoadOp, MmaOp, scf::YieldOp>(op) || isPure(op))
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() ||
        (effects && effects.onlyHasEffect<MemoryEffects::Read>()))
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  if (writes.wasInterrupted())
    return false;
  return llvm::all_of(loads, [&](TileLoadOp load) {
    auto desc = load.getDesc().getDefiningOp<TensorDescOp>();
    return desc && !loop->isAncestor(desc) &&
           alignedForWideCopy(load, /*andColumn=*/true) &&
           llvm::all_of(load.getCoords(), [&](Value coordinate) {
             return recomputable(coordinate, loop);
           });
  });
}

void MatrixLowerer::pipelineLoops() {
  if (!lowering.copyAsync || lowering.numStages < 2)
    return;
  SmallVector<std::pair<scf::ForOp, SmallVector<TileLoadOp>>> loops;
  module.walk([&](scf::ForOp loop) {
    SmallVector<TileLoadOp> loads;
    if (canPipeline(loop, loads))
      loops.emplace_back(loop, std::move(loads));
  });
  for (auto &[loop, loads] : loops)
    pipeline(loop, loads);
}

void MatrixLowerer::pipeline(scf::ForOp loop, ArrayRef<TileLoadOp> loadList) {
  SmallVector<TileLoadOp> loads(loadList);
  const int64_t stages = lowering.numStages;
  const int64_t width = lowering.copyVectorWidth;
  const int64_t ahead = stages - 1;
  Location loc = loop.getLoc();
  Operation *kernel = loop->getParentOfType<KernelOp>();
  OpBuilder b(loop);
  MatrixArith e{b, loc};
  Value lower = loop.getLowerBound(), upper = loop.getUpperBound();
  Value step = loop.getStep();
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantOp::create(b, loc,
                                     b.getIntegerAttr(lower.getType(), value));
  };
  // The induction value `ahead` iterations after `from`, and whether the
  // loop reaches it.
  auto later = [&](Value from, int64_t ahead) {
    Value at = e.add(from, e.mul(step, constant(ahead)));
    return std::pair{at, e.less(at, upper)};
  };

  SmallVector<Value> rings;
  for (TileLoadOp load : loads)
    rings.push_back(bufferFor(b, loc, load.getType(), kernel, stages));
  auto stageOf = [&](size_t index, Value stage) {
    return ringBuffer(b, loc, loads[index].getType(), rings[index],
                      e.toIndex(stage));
  };
  auto startCopies = [&](Value at, Value valid,
                         function_ref<Value(size_t)> bufferOf) {
    for (auto [index, load] : llvm::enumerate(loads)) {
      IRMapping map;
      Value row = recompute(b, load.getCoords()[0], loop, at, map);
      Value column = recompute(b, load.getCoords()[1], loop, at, map);
      copyTile(b, load.getLoc(), load.getType(),
               load.getDesc().getDefiningOp<TensorDescOp>(), bufferOf(index),
               row, column, width, valid, /*async=*/true);
    }
    lowering.commitCopies(b, loc);
  };

  // Iterations 0 .. ahead - 1, each into its own stage.
  for (int64_t first = 0; first < ahead; ++first) {
    auto [at, valid] = later(lower, first);
    startCopies(at, valid,
                [&](size_t index) { return stageOf(index, e.i32(first)); });
  }

  // The loop carries the stage it reads (k % S) and the one it fills
  // ((k - 1) % S, the stage read one iteration before): counters rather
  // than remainders of k, which LLVM's loop strength reduction turns into
  // several 64-bit induction variables (spilling registers at S = 3).
  IRRewriter rewriter(b);
  rewriter.setInsertionPoint(loop);
  auto carried = loop.replaceWithAdditionalYields(
      rewriter, ValueRange{e.i32(0), e.i32(stages - 1)},
      /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &yield, Location, ArrayRef<BlockArgument> stage) {
        MatrixArith y{yield, loc};
        Value next = y.add(stage[0], y.i32(1));
        Value wrapped = arith::CmpIOp::create(
            yield, loc, arith::CmpIPredicate::eq, next, y.i32(stages));
        next = arith::SelectOp::create(yield, loc, wrapped, y.i32(0), next);
        return SmallVector<Value>{next, stage[0]};
      });
  loop = cast<scf::ForOp>(carried->getOperation());
  Value readStage = loop.getRegionIterArgs().drop_back().back();
  Value fillStage = loop.getRegionIterArgs().back();
  const bool inFlight = lowering.multipliesStayInFlight;
  if (inFlight)
    inFlightLoops.insert(loop);

  // Iteration k waits for its own copies (at most ahead - 1 newer groups
  // are in flight), meets the others, and starts k + ahead's: right away,
  // or after its multiplies and a second barrier where they stay in flight.
  b.setInsertionPoint(loads.front());
  lowering.waitCopies(b, loc, ahead - 1);
  gpu::BarrierOp::create(b, loc);
  for (auto [index, load] : llvm::enumerate(loads))
    buffers[load.getResult()] = stageOf(index, readStage);
  if (inFlight) {
    b.setInsertionPoint(loop.getBody()->getTerminator());
    gpu::BarrierOp::create(b, loc);
  }
  auto [next, nextValid] = later(loop.getInductionVar(), ahead);
  startCopies(next, nextValid,
              [&](size_t index) { return stageOf(index, fillStage); });

  // Nothing may still write shared memory or the fragments when the loop
  // is left.
  b.setInsertionPointAfter(loop);
  lowering.waitCopies(b, loc, 0);
  if (inFlight && lowering.finishMultiplies)
    lowering.finishMultiplies(b, loc);
}
