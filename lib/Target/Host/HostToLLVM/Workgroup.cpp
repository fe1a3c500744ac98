//===- Workgroup.cpp - workgroup memory as thread-local storage -----------===//
//
// The host backend runs all SIMT threads of a program on one OS thread and
// one program at a time per OS thread, so workgroup memory is thread-local
// storage (include/kjit-c/HostKernel.h, docs/HostTarget.md).
//
//===----------------------------------------------------------------------===//

#include "HostToLLVM.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/AttrTypeSubElements.h"

using namespace mlir;

/// Bytes of one element of a workgroup memref (ints, floats, vectors of
/// them), 0 when the type has no fixed size here.
static uint64_t elementBytes(Type type) {
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.isScalable() ? 0
                               : vector.getNumElements() *
                                     elementBytes(vector.getElementType());
  if (type.isIntOrFloat())
    return (type.getIntOrFloatBitWidth() + 7) / 8;
  if (type.isIndex())
    return 8;
  return 0;
}

/// Workgroup memory is thread-local storage of every worker, allocated on a
/// worker's first access: without a limit a kernel can ask for GiB per
/// worker and be OOM-killed, or abort glibc's TLS allocation.
LogicalResult kjit::host::checkWorkgroupSize(ModuleOp module) {
  uint64_t total = 0;
  WalkResult result = module.walk([&](memref::GlobalOp global) {
    MemRefType type = global.getType();
    auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(type.getMemorySpace());
    if (!space || space.getValue() != gpu::AddressSpace::Workgroup)
      return WalkResult::advance();
    uint64_t element = elementBytes(type.getElementType());
    if (!type.hasStaticShape() || element == 0) {
      global.emitError() << "workgroup memory @" << global.getSymName()
                         << " has no static size; the host target needs "
                            "one (at most "
                         << kMaxWorkgroupBytes << " bytes per program)";
      return WalkResult::interrupt();
    }
    // Checked step by step so that a product past 2^64 cannot wrap below
    // the limit.
    uint64_t bytes = element;
    for (int64_t dim : type.getShape())
      bytes =
          dim != 0 && bytes > kMaxWorkgroupBytes / static_cast<uint64_t>(dim)
              ? kMaxWorkgroupBytes + 1
              : bytes * static_cast<uint64_t>(dim);
    total += std::min<uint64_t>(bytes, kMaxWorkgroupBytes + 1);
    if (total <= kMaxWorkgroupBytes)
      return WalkResult::advance();
    InFlightDiagnostic diag = global.emitError();
    diag << "workgroup memory @" << global.getSymName() << " (" << type << ") ";
    if (bytes > kMaxWorkgroupBytes)
      diag << "needs more than " << kMaxWorkgroupBytes << " bytes";
    else
      diag << "brings the module's workgroup memory to " << total << " bytes";
    diag << ", above the host target's limit of " << kMaxWorkgroupBytes
         << " bytes (1 MiB) per program: it is thread-local storage of "
            "every worker thread (docs/HostTarget.md)";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

/// Workgroup memory becomes ordinary memory, held in thread-local globals
/// (see HostKernel.h). Returns the names of those globals.
SmallVector<StringAttr>
kjit::host::makeWorkgroupMemoryThreadLocal(ModuleOp module) {
  SmallVector<StringAttr> names;
  module.walk([&](memref::GlobalOp global) {
    auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(
        global.getType().getMemorySpace());
    if (space && space.getValue() == gpu::AddressSpace::Workgroup)
      names.push_back(global.getSymNameAttr());
  });
  AttrTypeReplacer replacer;
  replacer.addReplacement([](MemRefType type) -> std::optional<Type> {
    auto space = dyn_cast_or_null<gpu::AddressSpaceAttr>(type.getMemorySpace());
    if (!space || space.getValue() != gpu::AddressSpace::Workgroup)
      return std::nullopt;
    return MemRefType::get(type.getShape(), type.getElementType(),
                           type.getLayout());
  });
  replacer.recursivelyReplaceElementsIn(module, /*replaceAttrs=*/true,
                                        /*replaceLocs=*/false,
                                        /*replaceTypes=*/true);
  return names;
}

/// Makes every use of a workgroup (thread-local) global take its address
/// from a call to a small out-of-line accessor instead of an inline
/// general/local-dynamic TLS sequence.
///
/// Why: LLVM's x86-64 TLS_addr64/TLS_base_addr64 pseudos model the call to
/// __tls_get_addr as clobbering only the scratch GPRs and xmm0-15, so with
/// AVX-512 (the host CPU's features are enabled) the register allocator
/// keeps values in xmm16-31 / k0-7 live across it. __tls_get_addr's slow
/// path (first access of a dlopen'ed module's block on a thread, or a DTV
/// update after another dlopen) calls malloc/realloc/memcpy, and glibc's
/// EVEX string functions (and ASan's allocator, which memsets through
/// them) use ymm16+/k registers: the live value is lost. The accessor is
/// an ordinary call, which clobbers every caller-saved register, so
/// nothing can be live across the TLS sequence inside it. The empty asm
/// keeps IPSCCP from folding the returned address back into the callers.
/// The accessor is readnone, so LLVM still hoists it to one call per
/// kernel invocation (a fiber never changes OS thread).
static void
routeWorkgroupAddressesThroughCalls(OpBuilder &b, ModuleOp module,
                                    ArrayRef<StringAttr> workgroup) {
  MLIRContext *context = module.getContext();
  Type ptr = LLVM::LLVMPointerType::get(context);
  for (StringAttr name : workgroup) {
    auto global = module.lookupSymbol<LLVM::GlobalOp>(name);
    if (!global)
      continue;
    std::string accessorName = ("__kjit_workgroup_" + name.getValue()).str();
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(module.getBody());
    auto accessor = LLVM::LLVMFuncOp::create(
        b, global.getLoc(), accessorName, LLVM::LLVMFunctionType::get(ptr, {}));
    accessor.setVisibility_(LLVM::Visibility::Hidden);
    accessor.setNoInline(true);
    accessor.setPassthroughAttr(b.getArrayAttr(
        {b.getStringAttr("nounwind"), b.getStringAttr("willreturn")}));
    accessor.setMemoryEffectsAttr(LLVM::MemoryEffectsAttr::get(
        context, {LLVM::ModRefInfo::NoModRef, LLVM::ModRefInfo::NoModRef,
                  LLVM::ModRefInfo::NoModRef}));
    b.setInsertionPointToStart(accessor.addEntryBlock(b));
    Value address = LLVM::AddressOfOp::create(b, global.getLoc(), global);
    Value opaque = LLVM::InlineAsmOp::create(
                       b, global.getLoc(), ptr, ValueRange{address}, "", "=r,0",
                       /*has_side_effects=*/false, /*is_align_stack=*/false,
                       LLVM::tailcallkind::TailCallKind::None,
                       /*asm_dialect=*/LLVM::AsmDialectAttr(),
                       /*operand_attrs=*/ArrayAttr())
                       .getRes();
    LLVM::ReturnOp::create(b, global.getLoc(), opaque);

    SmallVector<LLVM::AddressOfOp> uses;
    module.walk([&](LLVM::AddressOfOp op) {
      if (op.getGlobalName() == name.getValue() &&
          op->getParentOfType<LLVM::LLVMFuncOp>() != accessor)
        uses.push_back(op);
    });
    for (LLVM::AddressOfOp op : uses) {
      b.setInsertionPoint(op);
      auto call = LLVM::CallOp::create(b, op.getLoc(), accessor, ValueRange{});
      op.replaceAllUsesWith(call.getResult());
      op.erase();
    }
  }
}

void kjit::host::lowerWorkgroupGlobals(OpBuilder &b, ModuleOp module,
                                       ArrayRef<StringAttr> workgroup) {
  for (StringAttr name : workgroup)
    if (auto global = module.lookupSymbol<LLVM::GlobalOp>(name))
      global.setThreadLocal_(true);
  routeWorkgroupAddressesThroughCalls(b, module, workgroup);
}
