//===- DebugChecks.cpp - debug-mode checks of the host lowering -----------===//
//
// In debug mode the host lowering checks what would otherwise fault or
// corrupt memory silently (docs/HostTarget.md, "Debug checks"):
//
// - integer divisors: `x / 0` and `INT_MIN / -1` become a failed
//   `kjit.assert` with the operation's source location, instead of a
//   SIGFPE (or nothing: LLVM treats both as undefined behaviour and may
//   fold them away);
// - indices into memrefs of static shape (workgroup memory): each one
//   against its dimension;
// - kjit.load/kjit.store through a kernel's pointer parameter: marked here,
//   and checked by the load/store lowering (Patterns.cpp) against the
//   extent the backend passes (host kernel ABI 2).
//
// Runs on kernel IR, before scf is lowered, so that the checks are plain
// kjit.assert ops for AssertLowering.
//
//===----------------------------------------------------------------------===//

#include "HostToLLVM.h"

#include "kjit/Dialect/Kjit/IR/Kjit.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace kjit;

std::string kjit::host::describeLocation(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().getValue() + ":" + Twine(file.getLine()) + ":" +
            Twine(file.getColumn()))
        .str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (std::string text = describeLocation(inner); !text.empty())
        return text;
  if (auto named = dyn_cast<NameLoc>(loc))
    return describeLocation(named.getChildLoc());
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return describeLocation(callSite.getCallee());
  return "";
}

/// "<what> at file:line:col", or just <what> without a location.
static std::string withLocation(const Twine &what, Location loc) {
  std::string where = host::describeLocation(loc);
  return where.empty() ? what.str() : (what + " at " + where).str();
}

static Value intConstant(OpBuilder &b, Location loc, Type type,
                         const APInt &value) {
  return arith::ConstantOp::create(b, loc, type, b.getIntegerAttr(type, value));
}

/// Whether `op` may divide: its divisor is not a constant other than 0 (and
/// -1 for the signed ones).
static bool mayTrap(Value divisor, bool isSigned) {
  APInt constant;
  if (!matchPattern(divisor, m_ConstantInt(&constant)))
    return true;
  return constant.isZero() || (isSigned && constant.isAllOnes());
}

static void checkDivision(Operation *op, bool isSigned) {
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  Type type = rhs.getType();
  if (!type.isIntOrIndex() || !mayTrap(rhs, isSigned))
    return; // vectors are left to the fault handler
  OpBuilder b(op);
  Location loc = op->getLoc();
  unsigned width = type.isIndex() ? 64 : type.getIntOrFloatBitWidth();
  Value zero = intConstant(b, loc, type, APInt(width, 0));
  Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, rhs, zero);
  if (isSigned) {
    // INT_MIN / -1 overflows (and traps on x86 like a zero divisor).
    Value min = intConstant(b, loc, type, APInt::getSignedMinValue(width));
    Value minusOne = intConstant(b, loc, type, APInt::getAllOnes(width));
    Value notMin =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, lhs, min);
    Value notMinusOne =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, rhs, minusOne);
    Value noOverflow = arith::OrIOp::create(b, loc, notMin, notMinusOne);
    ok = arith::AndIOp::create(b, loc, ok, noOverflow);
  }
  AssertOp::create(
      b, loc, ok,
      b.getStringAttr(withLocation("integer division by zero" +
                                       Twine(isSigned ? " or overflow" : "") +
                                       " in " + op->getName().getStringRef(),
                                   loc)));
}

/// Each index of a memref access of static shape against its dimension
/// (unsigned, so a negative index fails too).
static void checkMemRefIndices(Operation *op, Value memref,
                               ValueRange indices) {
  auto type = dyn_cast<MemRefType>(memref.getType());
  if (!type || !type.hasStaticShape() || indices.empty())
    return;
  std::string name = "memref";
  if (auto global = memref.getDefiningOp<memref::GetGlobalOp>())
    name = ("@" + global.getName()).str();
  OpBuilder b(op);
  Location loc = op->getLoc();
  for (auto [i, index] : llvm::enumerate(indices)) {
    APInt constant;
    int64_t dim = type.getDimSize(i);
    if (matchPattern(index, m_ConstantInt(&constant)) &&
        constant.getZExtValue() < static_cast<uint64_t>(dim))
      continue;
    Value bound = arith::ConstantIndexOp::create(b, loc, dim);
    Value ok =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, index, bound);
    std::string what;
    llvm::raw_string_ostream os(what);
    os << "index " << i << " of " << op->getName() << " on " << name
       << " out of bounds (dimension " << dim << ")";
    AssertOp::create(b, loc, ok, b.getStringAttr(withLocation(what, loc)));
  }
}

bool kjit::host::insertDebugChecks(ModuleOp module) {
  bool usesExtents = false;
  module.walk([&](Operation *op) {
    if (isa<arith::DivSIOp, arith::RemSIOp, arith::CeilDivSIOp,
            arith::FloorDivSIOp>(op))
      return checkDivision(op, /*isSigned=*/true);
    if (isa<arith::DivUIOp, arith::RemUIOp, arith::CeilDivUIOp>(op))
      return checkDivision(op, /*isSigned=*/false);
    if (auto load = dyn_cast<memref::LoadOp>(op))
      return checkMemRefIndices(op, load.getMemRef(), load.getIndices());
    if (auto store = dyn_cast<memref::StoreOp>(op))
      return checkMemRefIndices(op, store.getMemRef(), store.getIndices());
    Value base;
    if (auto load = dyn_cast<LoadOp>(op))
      base = load.getBase();
    else if (auto store = dyn_cast<StoreOp>(op))
      base = store.getBase();
    // Only a kernel's own parameter has an extent the backend knows; a
    // pointer passed on to a device function is not checked there.
    auto arg = dyn_cast_or_null<BlockArgument>(base);
    if (!arg || !isa<KernelOp>(arg.getOwner()->getParentOp()))
      return;
    auto kernel = cast<KernelOp>(arg.getOwner()->getParentOp());
    std::string what;
    llvm::raw_string_ostream os(what);
    os << "out-of-bounds " << op->getName() << " through '"
       << kernel.getParamName(arg.getArgNumber()) << "'";
    op->setAttr(kBoundsArgAttrName,
                OpBuilder(op).getI64IntegerAttr(arg.getArgNumber()));
    op->setAttr(kBoundsMessageAttrName,
                OpBuilder(op).getStringAttr(withLocation(what, op->getLoc())));
    usesExtents = true;
  });
  return usesExtents;
}
