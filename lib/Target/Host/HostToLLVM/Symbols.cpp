//===- Symbols.cpp - the host kernel ABI symbols --------------------------===//
//
// What a compiled host kernel exports (include/kjit-c/HostKernel.h): for
// each kernel K, kjit_host_entry_K, kjit_host_flags_K and
// kjit_host_signature_K; and kjit_host_abi_version. Every one of them is
// emitted here, so the lowered module is the whole artifact's content.
//
//===----------------------------------------------------------------------===//

#include "HostABI.h"
#include "HostToLLVM.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include "kjit-c/HostKernel.h"

using namespace mlir;
using namespace kjit::host;

/// kjit_host_entry_K(thread, args): loads each argument from args[i] and
/// calls K.
static void buildEntry(OpBuilder &b, ModuleOp module, StringRef name,
                       ArrayRef<Type> paramTypes,
                       const LLVMTypeConverter &converter) {
  MLIRContext *context = b.getContext();
  Location loc = module.getLoc();
  Type ptr = opaquePtr(context);
  auto type =
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context), {ptr, ptr});
  auto entry =
      LLVM::LLVMFuncOp::create(b, loc, ("kjit_host_entry_" + name).str(), type);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(entry.addEntryBlock(b));
  Value thread = entry.getArgument(0), args = entry.getArgument(1);
  SmallVector<Value> values;
  for (auto [i, paramType] : llvm::enumerate(paramTypes)) {
    Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, args,
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
    Value address = LLVM::LoadOp::create(b, loc, ptr, slot);
    Type converted = converter.convertType(paramType);
    // Booleans arrive as one byte.
    bool isBool = converted.isInteger(1);
    Value value = LLVM::LoadOp::create(
        b, loc, isBool ? b.getI8Type() : converted, address);
    if (isBool)
      value = LLVM::TruncOp::create(b, loc, converted, value);
    values.push_back(value);
  }
  values.push_back(thread);
  LLVM::CallOp::create(b, loc, TypeRange(), name, values);
  LLVM::ReturnOp::create(b, loc, ValueRange());
}

void kjit::host::emitKernelSymbols(OpBuilder &b, ModuleOp module,
                                   const KernelABIInfo &kernel,
                                   const LLVMTypeConverter &converter) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  Location loc = module.getLoc();
  buildEntry(b, module, kernel.name, kernel.paramTypes, converter);
  // How the backend must run it.
  LLVM::GlobalOp::create(
      b, loc, b.getI32Type(), /*isConstant=*/true, LLVM::Linkage::External,
      "kjit_host_flags_" + kernel.name,
      b.getI32IntegerAttr(kernel.usesBarrier ? KJIT_HOST_USES_BARRIER : 0));
  // What the backend checks each launch's argument types against: a
  // NUL-terminated string.
  LLVM::GlobalOp::create(
      b, loc,
      LLVM::LLVMArrayType::get(b.getI8Type(), kernel.signature.size() + 1),
      /*isConstant=*/true, LLVM::Linkage::External,
      "kjit_host_signature_" + kernel.name,
      b.getStringAttr(kernel.signature + std::string(1, '\0')));
}

void kjit::host::emitABIVersion(OpBuilder &b, ModuleOp module,
                                uint32_t version) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  LLVM::GlobalOp::create(b, module.getLoc(), b.getI32Type(),
                         /*isConstant=*/true, LLVM::Linkage::External,
                         "kjit_host_abi_version", b.getI32IntegerAttr(version));
}
