//===- FinalizeNVVM.cpp - the kjit-finalize-nvvm pass ---------------------===//
//
// Runs on a gpu.module after convert-gpu-to-nvvm: erases the unused
// `_mlir_ciface_*` wrappers the lowering adds to every func.func, makes the
// dynamic shared memory an external array and,
// when libdevice will not be linked, refuses a module that needs it
// instead of leaving `.extern .func __nv_...` in the PTX.
//
//===----------------------------------------------------------------------===//

#include "kjit/Target/Cuda/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace kjit {
#define GEN_PASS_DEF_KJITFINALIZENVVM
#include "kjit/Target/Cuda/Passes.h.inc"
} // namespace kjit

using namespace mlir;

namespace {

struct FinalizeNVVMPass : kjit::impl::KjitFinalizeNVVMBase<FinalizeNVVMPass> {
  using KjitFinalizeNVVMBase::KjitFinalizeNVVMBase;

  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    SmallVector<LLVM::LLVMFuncOp> wrappers;
    SmallVector<StringRef> needed;
    std::string kernels;
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>()) {
      StringRef name = fn.getSymName();
      if (fn->hasAttr("nvvm.kernel"))
        kernels += (kernels.empty() ? "'" : ", '") + name.str() + "'";
      if (name.starts_with("_mlir_ciface_") &&
          SymbolTable::symbolKnownUseEmpty(fn, module))
        wrappers.push_back(fn);
      else if (fn.isExternal() && name.starts_with("__nv_"))
        needed.push_back(name);
    }
    for (LLVM::LLVMFuncOp fn : wrappers)
      fn.erase();
    externDynamicSharedMemory(module);
    if (failed(checkLowered(module)))
      return signalPassFailure();
    if (libdevice || needed.empty())
      return;
    // Reported where the first call is: its location is the math operation
    // that became it.
    Location where = module.getLoc();
    module.walk([&](LLVM::CallOp call) {
      std::optional<StringRef> callee = call.getCallee();
      if (!callee || !callee->starts_with("__nv_"))
        return WalkResult::advance();
      where = call.getLoc();
      return WalkResult::interrupt();
    });
    InFlightDiagnostic diag = mlir::emitError(where);
    diag << "kernel " << kernels
         << " needs libdevice, which the backend did not give: it calls ";
    llvm::interleave(
        needed, diag, [&](StringRef name) { diag << "'" << name << "'"; },
        ", ");
    diag << " (the lowering of math operations); set the cuda compile "
            "option libdevice=PATH (e.g. "
            "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc)";
    signalPassFailure();
  }

  /// convert-gpu-to-nvvm makes `gpu.dynamic_shared_memory` an internal
  /// zero-length shared array, which NVPTX demotes to a static one-byte
  /// variable: made external, it is PTX's `.extern .shared` array that the
  /// launch's dynamic shared memory backs, aligned to 1024 bytes for the
  /// matrix tiles' swizzle (docs/MatrixUnits.md).
  static void externDynamicSharedMemory(gpu::GPUModuleOp module) {
    for (auto global : module.getOps<LLVM::GlobalOp>()) {
      auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
      if (global.getAddrSpace() != 3 || !array || array.getNumElements() != 0)
        continue;
      global.setLinkage(LLVM::Linkage::External);
      global.setAlignment(1024);
    }
  }

  /// Every operation must now be LLVM's or NVVM's: one that the lowering
  /// left (an n-D vector operation, say) is reported here, at its own
  /// location, rather than as the translation's "Failed creating the
  /// llvm::Module" at the cast in front of it.
  static LogicalResult checkLowered(gpu::GPUModuleOp module) {
    MLIRContext *context = module.getContext();
    Dialect *llvmDialect = context->getLoadedDialect<LLVM::LLVMDialect>();
    Operation *left = nullptr, *cast = nullptr;
    module.walk([&](Operation *op) {
      if (op == module || op->getDialect() == llvmDialect ||
          op->getName().getDialectNamespace() == "nvvm")
        return WalkResult::advance();
      if (isa<UnrealizedConversionCastOp>(op)) {
        cast = cast ? cast : op;
        return WalkResult::advance();
      }
      left = op;
      return WalkResult::interrupt();
    });
    if (!left && !cast)
      return success();
    Operation *op = left ? left : cast;
    auto isMultiDimensional = [](Type type) {
      auto vector = dyn_cast<VectorType>(type);
      return vector && vector.getRank() > 1;
    };
    bool multiDimensional =
        llvm::any_of(op->getOperandTypes(), isMultiDimensional) ||
        llvm::any_of(op->getResultTypes(), isMultiDimensional);
    InFlightDiagnostic diag = op->emitError();
    if (left)
      diag << "'" << op->getName() << "' was not lowered for the cuda target";
    else
      diag << "a value of type " << op->getResultTypes()
           << " was not lowered for the cuda target";
    if (multiDimensional)
      diag << ": vectors of more than one dimension are not lowered (use "
              "1-D vectors)";
    return failure();
  }
};

} // namespace
