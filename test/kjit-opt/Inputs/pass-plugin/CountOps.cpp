//===- CountOps.cpp - an out-of-tree MLIR plugin for kjit -----------------===//
//
// A pass and dialect plugin that knows kjit's ops by name only: a plugin
// needs MLIR's headers, not kjit's. Its passes:
//
//   --count-kernel-ops  annotates every kjit.kernel with the number of
//                       operations in its body (count.ops) and reports it
//                       as a remark;
//   --swap-addf         replaces every arith.addf with COUNT_OPS_SWAP_TO
//                       (arith.subf; the second build: arith.mulf), so that
//                       a launch shows by its output that the pass ran;
//   --erase-count-ops   erases the ops of the `count` dialect;
//   --break-addf        a broken pass: adds an invalid arith.addf beside
//                       every arith.addf (the runtime must report it).
//
// Its dialect, `count`, has no op of its own and accepts any op in its
// namespace: with the dialect plugin loaded a kernel may hold
// "count.marker"(), which erase-count-ops removes before lowering.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Dialect.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/ADT/SmallVector.h"

#ifndef COUNT_OPS_SWAP_TO
#define COUNT_OPS_SWAP_TO "arith.subf"
#endif

namespace {

/// The arith.addf operations under `root`, collected before a pass changes
/// any.
llvm::SmallVector<mlir::Operation *> collectAddFs(mlir::Operation *root) {
  llvm::SmallVector<mlir::Operation *> adds;
  root->walk([&](mlir::Operation *op) {
    if (op->getName().getStringRef() == "arith.addf")
      adds.push_back(op);
  });
  return adds;
}

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

struct SwapAddF
    : mlir::PassWrapper<SwapAddF, mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(SwapAddF)

  llvm::StringRef getArgument() const override { return "swap-addf"; }
  llvm::StringRef getDescription() const override {
    return "Replace every arith.addf with " COUNT_OPS_SWAP_TO;
  }

  void runOnOperation() override {
    for (mlir::Operation *add : collectAddFs(getOperation())) {
      mlir::OpBuilder builder(add);
      mlir::OperationState state(add->getLoc(), COUNT_OPS_SWAP_TO);
      state.addOperands(add->getOperands());
      state.addTypes(add->getResultTypes());
      state.addAttributes(add->getAttrs());
      mlir::Operation *swapped = builder.create(state);
      add->replaceAllUsesWith(swapped);
      add->erase();
    }
  }
};

struct EraseCountOps
    : mlir::PassWrapper<EraseCountOps, mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(EraseCountOps)

  llvm::StringRef getArgument() const override { return "erase-count-ops"; }
  llvm::StringRef getDescription() const override {
    return "Erase the ops of the count dialect";
  }

  void runOnOperation() override {
    llvm::SmallVector<mlir::Operation *> marks;
    getOperation().walk([&](mlir::Operation *op) {
      if (op->getName().getDialectNamespace() == "count" && op->use_empty())
        marks.push_back(op);
    });
    for (mlir::Operation *mark : marks)
      mark->erase();
  }
};

/// A broken plugin pass: beside every arith.addf it adds an unused one
/// whose result is i64, which the verifier refuses. The runtime must report
/// it (test/kjit-run/pass-plugin.test); nothing else would, since the
/// lowering's canonicalizer erases unused operations.
struct BreakAddF
    : mlir::PassWrapper<BreakAddF, mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(BreakAddF)

  llvm::StringRef getArgument() const override { return "break-addf"; }
  llvm::StringRef getDescription() const override {
    return "Add an invalid arith.addf (an i64 result of f32 operands) beside "
           "every arith.addf";
  }

  void runOnOperation() override {
    for (mlir::Operation *add : collectAddFs(getOperation())) {
      mlir::OpBuilder builder(add);
      mlir::OperationState state(add->getLoc(), "arith.addf");
      state.addOperands(add->getOperands());
      state.addTypes(builder.getI64Type());
      builder.create(state);
    }
  }
};

/// A dialect with no op of its own: any op in its namespace parses.
struct CountDialect : mlir::Dialect {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CountDialect)
  explicit CountDialect(mlir::MLIRContext *context)
      : mlir::Dialect(getDialectNamespace(), context,
                      mlir::TypeID::get<CountDialect>()) {
    allowUnknownOperations();
  }
  static llvm::StringRef getDialectNamespace() { return "count"; }
};

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "CountOps", "1", [] {
            mlir::PassRegistration<CountKernelOps>();
            mlir::PassRegistration<SwapAddF>();
            mlir::PassRegistration<EraseCountOps>();
            mlir::PassRegistration<BreakAddF>();
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "CountOps", "1",
          [](mlir::DialectRegistry *registry) {
            registry->insert<CountDialect>();
          }};
}
