//===- HostToLLVM.h - the pieces of kjit-convert-host-to-llvm ---*- C++ -*-===//
//
// What the pass (ConvertHostToLLVM.cpp) assembles: the kjit op patterns
// (Patterns.cpp), workgroup memory as thread-local storage (Workgroup.cpp)
// and the ABI symbols of each kernel (Symbols.cpp). Internal to
// lib/Conversion/HostToLLVM; docs/HostTarget.md gives the rationale.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_CONVERSION_HOSTTOLLVM_HOSTTOLLVM_H
#define KJIT_LIB_CONVERSION_HOSTTOLLVM_HOSTTOLLVM_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir {
class LLVMTypeConverter;
class RewritePatternSet;
} // namespace mlir

namespace kjit::host {

/// The patterns that lower kjit's operations (kernels, functions, calls,
/// ids, barriers, loads, stores, prints, asserts) and the gpu ids to the
/// LLVM dialect of the host ABI. Masked accesses and global reads are not
/// lowered (kjit-expand-masks and kjit-bake-globals remove them first).
void populateKjitToHostLLVMPatterns(mlir::LLVMTypeConverter &converter,
                                    mlir::RewritePatternSet &patterns);

/// Workgroup memory becomes ordinary memory, held in thread-local globals
/// (see HostKernel.h). Returns the names of those globals. Runs before the
/// conversion.
llvm::SmallVector<mlir::StringAttr>
makeWorkgroupMemoryThreadLocal(mlir::ModuleOp module);

/// After the conversion: marks the workgroup globals thread-local and makes
/// every use take its address from an out-of-line accessor.
void lowerWorkgroupGlobals(mlir::OpBuilder &b, mlir::ModuleOp module,
                           llvm::ArrayRef<mlir::StringAttr> workgroup);

/// What the ABI symbols of one kernel need, taken before conversion.
struct KernelABIInfo {
  std::string name;
  /// The parameter types (kjit types), in order.
  llvm::SmallVector<mlir::Type> paramTypes;
  /// The kernel or a function it reaches has a barrier.
  bool usesBarrier = false;
  /// The signature types of the launch arguments, comma-separated
  /// ("*fp32,*kfp32,i32").
  std::string signature;
};

/// Emits, at the end of the module, kjit_host_entry_K, kjit_host_flags_K
/// and kjit_host_signature_K for `kernel`.
void emitKernelSymbols(mlir::OpBuilder &b, mlir::ModuleOp module,
                       const KernelABIInfo &kernel,
                       const mlir::LLVMTypeConverter &converter);

/// Emits kjit_host_abi_version at the end of the module.
void emitABIVersion(mlir::OpBuilder &b, mlir::ModuleOp module);

} // namespace kjit::host

#endif // KJIT_LIB_CONVERSION_HOSTTOLLVM_HOSTTOLLVM_H
