//===- HostCodegen.cpp - LLVM dialect to a host shared object ------------===//

#include "kjit/Compiler/HostCodegen.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <memory>
#include <mutex>

using namespace mlir;

static void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

kjit::HostTargetInfo kjit::getHostTargetInfo() {
  return {llvm::sys::getProcessTriple(), llvm::sys::getHostCPUName().str()};
}

/// Removes a file when it goes out of scope.
namespace {
struct TemporaryFile {
  llvm::SmallString<128> path;
  ~TemporaryFile() {
    if (!path.empty())
      llvm::sys::fs::remove(path);
  }
};
} // namespace

bool kjit::buildHostSharedObject(ModuleOp module,
                                 const HostCodegenOptions &codegen,
                                 std::string &sharedObject,
                                 std::string &error) {
  // The runtime's compile does not verify after every pass (docs/Runtime.md,
  // "Verification"): LLVM's translation must never see an invalid module.
  // The verifier's diagnostics go to the context's handler (the compile
  // session collects them into its message).
  if (failed(mlir::verify(module))) {
    error = "the lowered kernel module is not valid IR; nothing was translated";
    return false;
  }
  initializeNativeTarget();
  HostTargetInfo host = getHostTargetInfo();
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(llvm::Triple(host.triple), error);
  if (!target)
    return false;
  llvm::StringMap<bool> hostFeatures = llvm::sys::getHostCPUFeatures();
  std::string features;
  for (const auto &feature : hostFeatures)
    features += (feature.second ? "+" : "-") + feature.first().str() + ",";
  llvm::TargetOptions options;
  // Fusion follows the instructions' `contract` flags (Standard also fuses
  // llvm.fmuladd); Strict keeps every multiply and add rounded on its own.
  options.AllowFPOpFusion =
      codegen.fpFusion ? llvm::FPOpFusion::Standard : llvm::FPOpFusion::Strict;
  // Shared objects need position-independent code.
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      llvm::Triple(host.triple), host.cpu, features, options, llvm::Reloc::PIC_,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!machine) {
    error = "cannot create a target machine for " + host.triple;
    return false;
  }

  registerBuiltinDialectTranslation(*module.getContext());
  registerLLVMDialectTranslation(*module.getContext());
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "kjit-host-kernel");
  if (!llvmModule) {
    error = "cannot translate the kernel to LLVM IR";
    return false;
  }
  llvmModule->setTargetTriple(machine->getTargetTriple());
  llvmModule->setDataLayout(machine->createDataLayout());
  std::string verifyMessages;
  llvm::raw_string_ostream verifyStream(verifyMessages);
  if (llvm::verifyModule(*llvmModule, &verifyStream)) {
    error = "invalid LLVM IR: " + verifyMessages;
    return false;
  }

  // O2 with the host's target information: the loop and SLP vectorizers
  // need it to use the CPU's vector width.
  {
    llvm::LoopAnalysisManager loops;
    llvm::FunctionAnalysisManager functions;
    llvm::CGSCCAnalysisManager cgscc;
    llvm::ModuleAnalysisManager modules;
    llvm::PassBuilder builder(machine.get());
    builder.registerModuleAnalyses(modules);
    builder.registerCGSCCAnalyses(cgscc);
    builder.registerFunctionAnalyses(functions);
    builder.registerLoopAnalyses(loops);
    builder.crossRegisterProxies(loops, functions, cgscc, modules);
    llvm::ModulePassManager passes =
        builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2);
    passes.run(*llvmModule, modules);
  }

  TemporaryFile object, library;
  int objectFd;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
          "kjit-kernel", "o", objectFd, object.path)) {
    error = "cannot create a temporary object file: " + ec.message();
    return false;
  }
  {
    llvm::raw_fd_ostream out(objectFd, /*shouldClose=*/true);
    llvm::legacy::PassManager emit;
    if (machine->addPassesToEmitFile(emit, out, nullptr,
                                     llvm::CodeGenFileType::ObjectFile)) {
      error = "the target cannot emit object files";
      return false;
    }
    emit.run(*llvmModule);
    out.flush();
    if (out.has_error()) {
      error = "cannot write the object file '" + object.path.str().str() +
              "': " + out.error().message();
      out.clear_error();
      return false;
    }
  }

  // Link with the system compiler driver: it knows where libc and libm are.
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
          "kjit-kernel", "so", library.path)) {
    error = "cannot create a temporary library file: " + ec.message();
    return false;
  }
  llvm::ErrorOr<std::string> cc = llvm::sys::findProgramByName("cc");
  if (!cc) {
    error = "no C compiler driver ('cc') on PATH to link the host kernel";
    return false;
  }
  TemporaryFile log;
  llvm::sys::fs::createTemporaryFile("kjit-link", "log", log.path);
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log.path.str(),
                                                log.path.str()};
  llvm::StringRef args[] = {*cc,          "-shared",   "-o",
                            library.path, object.path, "-lm"};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(*cc, args, std::nullopt, redirects, 0, 0,
                                     &execError);
  if (rc != 0) {
    auto output = llvm::MemoryBuffer::getFile(log.path);
    error =
        "linking the host kernel failed (" +
        (execError.empty() ? "exit code " + std::to_string(rc) : execError) +
        ")" + (output ? ": " + (*output)->getBuffer().str() : "");
    return false;
  }
  auto bytes = llvm::MemoryBuffer::getFile(library.path, /*IsText=*/false);
  if (!bytes) {
    error = "cannot read the linked kernel: " + bytes.getError().message();
    return false;
  }
  sharedObject = (*bytes)->getBuffer().str();
  return true;
}
