//===- HostABI.h - the host kernel ABI as LLVM-dialect IR -------*- C++ -*-===//
//
// The structures of include/kjit-c/HostKernel.h (kjit_host_thread,
// kjit_host_runtime, kjit_host_print_arg) as LLVM types, and the helpers the
// host lowering uses to read the thread and call its runtime table. Internal
// to lib/Target/Host/HostToLLVM.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_TARGET_HOST_HOSTTOLLVM_HOSTABI_H
#define KJIT_LIB_TARGET_HOST_HOSTTOLLVM_HOSTABI_H

#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/Builders.h"

#include <utility>

namespace kjit::host {

/// Field indices of kjit_host_thread.
enum ThreadField : int32_t {
  ThreadId = 0,
  BlockDim = 1,
  ProgramId = 2,
  NumPrograms = 3,
  Runtime = 4,
  Extents = 6, ///< ABI 2
};
/// Slot indices of kjit_host_runtime.
enum RuntimeSlot : int32_t {
  BarrierSlot = 0,
  PrintSlot = 1,
  AssertSlot = 2,
  BoundsFailSlot = 3,  ///< ABI 2
  WarpBarrierSlot = 4, ///< ABI 3
};

mlir::Type opaquePtr(mlir::MLIRContext *context);

/// kjit_host_thread {u32[3] x 4; runtime; backend; extents}.
mlir::LLVM::LLVMStructType getThreadType(mlir::MLIRContext *context);

/// kjit_host_runtime {barrier; print; assert_fail; bounds_fail;
/// warp_barrier}.
mlir::LLVM::LLVMStructType getRuntimeType(mlir::MLIRContext *context);

/// kjit_host_print_arg {u32 kind; u32 bits_width; u64 bits}.
mlir::LLVM::LLVMStructType getPrintArgType(mlir::MLIRContext *context);

/// The thread of the llvm.func `op` is in: every function converted from
/// kjit takes it last.
mlir::Value getThread(mlir::Operation *op);

/// Loads `thread->field[index]` (`index` is ignored for Runtime and
/// Extents).
mlir::Value loadThreadField(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value thread, ThreadField field,
                            int32_t index, mlir::Type type);

/// Loads slot `slot` of the thread's runtime table.
mlir::Value loadRuntimeSlot(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value thread, RuntimeSlot slot);

/// Calls slot `slot` of the thread's runtime table with `args` (the thread
/// first); every runtime entry returns void.
void callRuntime(mlir::OpBuilder &b, mlir::Location loc, mlir::Value thread,
                 RuntimeSlot slot, mlir::ValueRange args);

/// A pointer to a private constant holding `text`, with its length; one
/// global per distinct text in the module of `from`.
std::pair<mlir::Value, mlir::Value> getStringConstant(mlir::OpBuilder &b,
                                                      mlir::Location loc,
                                                      mlir::Operation *from,
                                                      llvm::StringRef text);

} // namespace kjit::host

#endif // KJIT_LIB_TARGET_HOST_HOSTTOLLVM_HOSTABI_H
