//===- CheckNonePointers.cpp - the kjit-check-none-pointers pass ----------===//
//
// A load or store through a pointer bound to None is undefined behaviour:
// LLVM deletes it and everything it guards, and the launch "succeeds"
// having computed nothing. This pass turns that into a compile error that
// names the parameter, as Triton's compiler does.
//
//===----------------------------------------------------------------------===//

#include "kjit/Transforms/ApplySpecialization.h"
#include "kjit/Transforms/Passes.h"

#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseSet.h"

namespace kjit {
#define GEN_PASS_DEF_KJITCHECKNONEPOINTERS
#include "kjit/Transforms/Passes.h.inc"
} // namespace kjit

using namespace mlir;
using namespace kjit;

namespace {

/// A value that holds the null of one None parameter, and the call that
/// passed it into the function it lives in (null in the kernel itself).
struct Reach {
  Value value;
  Operation *through;
};

struct CheckNonePointersPass
    : kjit::impl::KjitCheckNonePointersBase<CheckNonePointersPass> {
  using KjitCheckNonePointersBase::KjitCheckNonePointersBase;

  void runOnOperation() override {
    bool failed = false;
    SymbolTableCollection symbols;
    getOperation().walk([&](NullOp null) {
      auto param = null->getAttrOfType<StringAttr>(kNoneParamAttrName);
      if (!param)
        return; // written by hand, not a None argument: nothing to name
      auto kernel = null->getParentOfType<KernelOp>();
      std::string owner =
          kernel ? ("' of '@" + kernel.getSymName() + "'").str() : "'";
      failed |= check(null, param.getValue(), owner, symbols);
    });
    if (failed)
      signalPassFailure();
  }

  /// Follows `null` into its loads, stores and the device functions it is
  /// passed to (each function parameter once: calls may recurse); reports
  /// every access. Returns whether there was one.
  static bool check(NullOp null, StringRef param, StringRef owner,
                    SymbolTableCollection &symbols) {
    bool found = false;
    SmallVector<Reach> work = {{null.getResult(), nullptr}};
    llvm::DenseSet<Value> seen = {null.getResult()};
    while (!work.empty()) {
      Reach reach = work.pop_back_val();
      for (OpOperand &use : reach.value.getUses()) {
        Operation *user = use.getOwner();
        bool dereferences = (isa<LoadOp>(user) &&
                             cast<LoadOp>(user).getBase() == reach.value) ||
                            (isa<StoreOp>(user) &&
                             cast<StoreOp>(user).getBase() == reach.value);
        if (dereferences) {
          InFlightDiagnostic diag = user->emitError()
                                    << "parameter '" << param << owner
                                    << " is None, but this '" << user->getName()
                                    << "' dereferences it";
          if (reach.through)
            diag.attachNote(reach.through->getLoc())
                << "the None pointer is passed here";
          found = true;
          continue;
        }
        auto call = dyn_cast<CallOpInterface>(user);
        if (!call)
          continue;
        auto callee = dyn_cast_or_null<FunctionOpInterface>(
            call.resolveCallableInTable(&symbols));
        if (!callee || callee.isExternal())
          continue;
        unsigned first = call.getArgOperands().getBeginOperandIndex();
        unsigned index = use.getOperandNumber() - first;
        if (use.getOperandNumber() < first || index >= callee.getNumArguments())
          continue;
        Value arg = callee.getArgument(index);
        if (seen.insert(arg).second)
          work.push_back({arg, reach.through ? reach.through : user});
      }
    }
    return found;
  }
};

} // namespace
