//===- PipelineTiles.cpp - tile copies in flight across loop iterations ---===//
//
// Where the target copies asynchronously (MatrixLowering::copyAsync) and
// num_stages S is 2 or more, a loop that loads tiles keeps the copies of
// the next A iterations in flight while it multiplies, in a ring of S
// buffers per load (docs/MatrixUnits.md, "num_stages"). A is S - 1, or
// S - 2 where multiplies stay in flight (wgmma): then iteration k's
// multiply may still read its stage while k + 1 starts, so k + 1 may
// overwrite only k - 1's.
//
//   before the loop: start the copies of iterations 0 .. A-1 (stages
//                    0 .. A-1), one commit group each;
//   iteration k:     wait until at most A - 1 groups are in flight
//                    (iteration k's have landed), the target's fence,
//                    barrier, start iteration k+A's copies into stage
//                    (k+A) % S, commit; the loads read stage k % S. Past
//                    the barrier every warp has left iteration k - 1, so
//                    no multiply reads that stage any more: it is k - 1's,
//                    or k - 2's where a warp leaves k - 1 with only k - 1's
//                    multiply running. One barrier an iteration.
//   after the loop:  wait for every group (and every multiply).
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
  // With multiplies in flight, iteration k's copies overwrite the stage of
  // k - 2, whose multiply has finished, rather than k - 1's.
  const bool inFlight = lowering.multipliesStayInFlight && stages >= 3;
  const int64_t ahead = stages - (inFlight ? 2 : 1);
  if (inFlight)
    inFlightLoops.insert(loop);
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
                [&](size_t index) { return stageOf(index, constant(first)); });
  }

  // Iteration k waits for its own copies (at most ahead - 1 newer groups
  // are in flight), then, past the barrier, starts k + ahead's.
  b.setInsertionPoint(loads.front());
  Value iteration = e.divu(e.sub(loop.getInductionVar(), lower), step);
  lowering.waitCopies(b, loc, ahead - 1);
  if (lowering.afterCopy)
    lowering.afterCopy(b, loc, llvm::map_to_vector(loads, [](TileLoadOp load) {
                         return load.getType();
                       }));
  gpu::BarrierOp::create(b, loc);
  auto [next, nextValid] = later(loop.getInductionVar(), ahead);
  Value nextStage = e.remu(e.add(iteration, constant(ahead)), constant(stages));
  startCopies(next, nextValid,
              [&](size_t index) { return stageOf(index, nextStage); });
  Value stage = e.remu(iteration, constant(stages));
  for (auto [index, load] : llvm::enumerate(loads))
    buffers[load.getResult()] = stageOf(index, stage);

  // Nothing may still write shared memory or the fragments when the loop
  // is left.
  b.setInsertionPointAfter(loop);
  lowering.waitCopies(b, loc, 0);
  if (inFlight && lowering.finishMultiplies)
    lowering.finishMultiplies(b, loc);
}
