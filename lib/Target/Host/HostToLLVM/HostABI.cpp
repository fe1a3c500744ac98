//===- HostABI.cpp - the host kernel ABI as LLVM-dialect IR ---------------===//

#include "HostABI.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace kjit::host {

Type opaquePtr(MLIRContext *context) {
  return LLVM::LLVMPointerType::get(context);
}

LLVM::LLVMStructType getThreadType(MLIRContext *context) {
  Type dims = LLVM::LLVMArrayType::get(IntegerType::get(context, 32), 3);
  Type ptr = opaquePtr(context);
  // ABI 2 appended `extents`; objects of version 1 never read it.
  return LLVM::LLVMStructType::getLiteral(
      context, {dims, dims, dims, dims, ptr, ptr, ptr});
}

LLVM::LLVMStructType getRuntimeType(MLIRContext *context) {
  Type ptr = opaquePtr(context);
  // ABI 2 appended bounds_fail, ABI 3 warp_barrier.
  return LLVM::LLVMStructType::getLiteral(context, {ptr, ptr, ptr, ptr, ptr});
}

/// kjit_host_print_arg {u32 kind; u32 bits_width; u64 bits}.
LLVM::LLVMStructType getPrintArgType(MLIRContext *context) {
  Type i32 = IntegerType::get(context, 32);
  return LLVM::LLVMStructType::getLiteral(
      context, {i32, i32, IntegerType::get(context, 64)});
}

/// Every function converted from kjit takes the thread last.
Value getThread(Operation *op) {
  auto fn = op->getParentOfType<LLVM::LLVMFuncOp>();
  return fn.getBody().front().getArguments().back();
}

Value loadThreadField(OpBuilder &b, Location loc, Value thread,
                      ThreadField field, int32_t index, Type type) {
  MLIRContext *context = b.getContext();
  SmallVector<LLVM::GEPArg> indices = {0, field};
  if (field != Runtime && field != Extents)
    indices.push_back(index);
  Value address = LLVM::GEPOp::create(b, loc, opaquePtr(context),
                                      getThreadType(context), thread, indices);
  return LLVM::LoadOp::create(b, loc, type, address);
}

/// Loads slot `slot` of the thread's runtime table.
Value loadRuntimeSlot(OpBuilder &b, Location loc, Value thread,
                      RuntimeSlot slot) {
  MLIRContext *context = b.getContext();
  Value runtime =
      loadThreadField(b, loc, thread, Runtime, 0, opaquePtr(context));
  Value address =
      LLVM::GEPOp::create(b, loc, opaquePtr(context), getRuntimeType(context),
                          runtime, ArrayRef<LLVM::GEPArg>{0, slot});
  return LLVM::LoadOp::create(b, loc, opaquePtr(context), address);
}

/// Calls slot `slot` of the thread's runtime table with `args` (the thread
/// first); every runtime entry returns void.
void callRuntime(OpBuilder &b, Location loc, Value thread, RuntimeSlot slot,
                 ValueRange args) {
  Value callee = loadRuntimeSlot(b, loc, thread, slot);
  SmallVector<Value> operands = {callee, thread};
  operands.append(args.begin(), args.end());
  auto type = LLVM::LLVMFunctionType::get(
      LLVM::LLVMVoidType::get(b.getContext()),
      llvm::to_vector(ValueRange(operands).drop_front().getTypes()));
  LLVM::CallOp::create(b, loc, type, operands);
}

/// A pointer to a private constant holding `text`, with its length.
std::pair<Value, Value> getStringConstant(OpBuilder &b, Location loc,
                                          Operation *from, StringRef text) {
  auto module = from->getParentOfType<ModuleOp>();
  MLIRContext *context = b.getContext();
  // One global per distinct text.
  std::string name = "kjit_str_" + llvm::utohexstr(llvm::hash_value(text));
  auto global = module.lookupSymbol<LLVM::GlobalOp>(name);
  if (!global) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    auto type = LLVM::LLVMArrayType::get(IntegerType::get(context, 8),
                                         std::max<size_t>(text.size(), 1));
    global = LLVM::GlobalOp::create(
        b, loc, type, /*isConstant=*/true, LLVM::Linkage::Private, name,
        b.getStringAttr(text.empty() ? StringRef("\0", 1) : text));
  }
  Value address = LLVM::AddressOfOp::create(b, loc, global);
  Value length = LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                          b.getI64IntegerAttr(text.size()));
  return {address, length};
}

} // namespace kjit::host
