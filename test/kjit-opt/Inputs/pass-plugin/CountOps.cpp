//===- CountOps.cpp - an out-of-tree pass plugin for kjit-opt -------------===//
//
// --count-kernel-ops: annotates every kjit.kernel with the number of
// operations in its body (count.ops) and reports it as a remark. It knows
// kjit's ops by name only: a pass plugin needs MLIR's headers, not kjit's.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Tools/Plugins/PassPlugin.h"

namespace {

struct CountKernelOps
    : mlir::PassWrapper<CountKernelOps, mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CountKernelOps)

  llvm::StringRef getArgument() const override { return "count-kernel-ops"; }
  llvm::StringRef getDescription() const override {
    return "Annotate each kjit.kernel with its operation count";
  }

  void runOnOperation() override {
    mlir::Builder builder(&getContext());
    getOperation().walk([&](mlir::Operation *op) {
      if (op->getName().getStringRef() != "kjit.kernel")
        return;
      int64_t count = -1; // the kernel itself is not counted
      op->walk([&](mlir::Operation *) { ++count; });
      op->setAttr("count.ops", builder.getI64IntegerAttr(count));
      op->emitRemark() << "count-kernel-ops: " << count << " operations";
    });
  }
};

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "CountOps", "1",
          [] { mlir::PassRegistration<CountKernelOps>(); }};
}
