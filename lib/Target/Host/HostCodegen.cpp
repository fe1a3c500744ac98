//===- HostCodegen.cpp - LLVM dialect to a host shared object -------------===//

#include "kjit/Target/Host/HostCodegen.h"

#include "kjit/Compiler/Target.h"

#include "lld/Common/Driver.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

// The ELF driver of lld (liblldELF.a), the only one linked.
LLD_HAS_DRIVER(elf)

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

namespace {

/// A file descriptor closed when it goes out of scope.
struct FileDescriptor {
  int fd = -1;
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) : fd(fd) {}
  FileDescriptor(const FileDescriptor &) = delete;
  FileDescriptor &operator=(const FileDescriptor &) = delete;
  ~FileDescriptor() { reset(); }
  void reset() {
    if (fd >= 0)
      ::close(fd);
    fd = -1;
  }
  std::string procPath() const { return "/proc/self/fd/" + std::to_string(fd); }
};

/// The libraries a kernel may call into, as the files this process loaded:
/// libm (math functions), libgcc_s (the compiler builtins: 128-bit division,
/// half conversions, powi), libc (memcpy, memset) and the dynamic linker
/// (__tls_get_addr, for workgroup memory). They are the files the backend's
/// dlopen will bind the kernel to, and they exist without a C toolchain
/// (no libc6-dev linker scripts, no libgcc.a, no crt files).
struct RuntimeLibraries {
  std::vector<std::string> paths;
  std::string error;
};

} // namespace

extern "C" void *__tls_get_addr(void *);

static std::string loadedPath(void *handle) {
  struct link_map *map = nullptr;
  if (!handle || dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map ||
      !map->l_name || !*map->l_name)
    return {};
  return map->l_name;
}

/// The dynamic linker this process runs under: the loaded object at the
/// base the kernel gave the interpreter (AT_BASE), else the one that
/// defines __tls_get_addr. (Found by its address first: a sanitizer's
/// runtime intercepts __tls_get_addr, and a kernel linked against the
/// interceptor would need the sanitizer's library.)
static std::string dynamicLinkerPath() {
  struct Search {
    uintptr_t base;
    std::string path;
  } search{getauxval(AT_BASE), {}};
  if (search.base)
    dl_iterate_phdr(
        [](struct dl_phdr_info *info, size_t, void *data) {
          auto *wanted = static_cast<Search *>(data);
          if (info->dlpi_addr != wanted->base || !info->dlpi_name ||
              !*info->dlpi_name)
            return 0;
          wanted->path = info->dlpi_name;
          return 1;
        },
        &search);
  if (!search.path.empty())
    return search.path;
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&__tls_get_addr), &info) &&
      info.dli_fname)
    return info.dli_fname;
  return {};
}

static const RuntimeLibraries &runtimeLibraries() {
  static const RuntimeLibraries libraries = [] {
    RuntimeLibraries found;
    // Opened and never closed: libm and libc are loaded already (LLVM needs
    // them), libgcc_s is where the static bundle module does not load it.
    for (const char *soname : {"libm.so.6", "libgcc_s.so.1", "libc.so.6"}) {
      std::string path = loadedPath(dlopen(soname, RTLD_LAZY | RTLD_LOCAL));
      if (path.empty()) {
        found.error = std::string("cannot find ") + soname +
                      " to link the host kernel against";
        return found;
      }
      found.paths.push_back(std::move(path));
    }
    std::string linker = dynamicLinkerPath();
    if (linker.empty()) {
      found.error = "cannot find the dynamic linker to link the host kernel "
                    "against";
      return found;
    }
    found.paths.push_back(std::move(linker));
    return found;
  }();
  return libraries;
}

/// lld's ELF driver resets every LLVM command-line option of the process
/// to its default (cl::ResetAllOptionOccurrences, before it parses its
/// -mllvm options). A tool whose command line set LLVM or MLIR options
/// (kjit-opt's --mlir-print-debuginfo, read when it prints after the
/// pipeline) would lose them. The options a command line set are
/// unregistered for the link, out of the reset's reach, and registered
/// again after it.
namespace {
class CommandLineShield {
public:
  CommandLineShield() {
    llvm::SmallPtrSet<llvm::cl::Option *, 16> seen;
    for (llvm::cl::SubCommand *sub : llvm::cl::getRegisteredSubcommands())
      for (auto &entry : sub->OptionsMap)
        if (entry.second->getNumOccurrences() > 0 &&
            seen.insert(entry.second).second)
          shielded.push_back(entry.second);
    for (llvm::cl::Option *option : shielded)
      option->removeArgument();
  }
  ~CommandLineShield() {
    for (llvm::cl::Option *option : shielded)
      option->addArgument();
  }
  CommandLineShield(const CommandLineShield &) = delete;
  CommandLineShield &operator=(const CommandLineShield &) = delete;

private:
  std::vector<llvm::cl::Option *> shielded;
};
} // namespace

/// Links `object` into a shared object with lld, in this process. The object
/// goes in through a memfd and the library comes out through a pipe, both
/// named by /proc/self/fd: no file is written anywhere.
static bool linkSharedObject(llvm::StringRef object, std::string &sharedObject,
                             std::string &error) {
  const RuntimeLibraries &libraries = runtimeLibraries();
  if (!libraries.error.empty()) {
    error = libraries.error;
    return false;
  }
  static constexpr const char *kObjectName = "kjit-host-kernel.o";
  FileDescriptor input(memfd_create(kObjectName, MFD_CLOEXEC));
  if (input.fd < 0) {
    error = std::string("cannot create a memfd for the kernel's object: ") +
            std::strerror(errno);
    return false;
  }
  for (size_t at = 0; at < object.size();) {
    ssize_t n = ::write(input.fd, object.data() + at, object.size() - at);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      error = std::string("cannot write the kernel's object to a memfd: ") +
              std::strerror(errno);
      return false;
    }
    at += size_t(n);
  }
  // lld writes to a path. For one that is not a regular file (a pipe) it
  // builds the output in memory and writes it out whole at the end; a thread
  // reads it meanwhile, so that no pipe capacity limits the library's size.
  int ends[2];
  if (pipe2(ends, O_CLOEXEC) != 0) {
    error = std::string("cannot create a pipe for the linked kernel: ") +
            std::strerror(errno);
    return false;
  }
  FileDescriptor readEnd(ends[0]), writeEnd(ends[1]);
  std::string output;
  int readErrno = 0;
  std::thread reader([&] {
    char buffer[1 << 16];
    for (;;) {
      ssize_t n = ::read(readEnd.fd, buffer, sizeof buffer);
      if (n > 0)
        output.append(buffer, size_t(n));
      else if (n == 0)
        return;
      else if (errno != EINTR) {
        readErrno = errno;
        return;
      }
    }
  });

  std::string inputPath = input.procPath(), outputPath = writeEnd.procPath();
  // The C compiler driver's link of a shared object on Debian (build id,
  // .eh_frame_hdr for unwinders, GNU hash, libraries as needed), without its
  // crt files (a kernel has no constructors and calls no atexit), and with
  // -z defs: a symbol that none of the runtime libraries defines is an error
  // here, naming the symbol, instead of the backend's dlopen failing later.
  std::vector<const char *> args = {"ld.lld",
                                    "-shared",
                                    "--build-id",
                                    "--eh-frame-hdr",
                                    "--hash-style=gnu",
                                    "--as-needed",
                                    "-z",
                                    "defs",
                                    "--threads=1",
                                    "-o",
                                    outputPath.c_str(),
                                    inputPath.c_str()};
  for (const std::string &path : libraries.paths)
    args.push_back(path.c_str());

  std::string messages;
  llvm::raw_string_ostream stdoutStream(messages), stderrStream(messages);
  int rc;
  {
    // lld 22's library entry point may be called again after a link (it
    // resets its state), but not from two threads at once: every link uses
    // one process-wide context (lld::commonContext(), with the error
    // handler and the allocators) and sets llvm::parallel's process-wide
    // strategy from --threads; it also resets the process's command-line
    // options (CommandLineShield), which other threads' compiles read. So
    // a link holds the options' writer (Target.h): links take turns, and
    // wait until no other compile runs.
    static bool lldUnusable = false;
    kjit::CommandLineWriter writingOptions;
    if (lldUnusable) {
      rc = -1;
      messages = "an earlier link crashed inside lld, which cannot run again "
                 "in this process";
    } else {
      CommandLineShield shield;
      lld::Result result = lld::lldMain(args, stdoutStream, stderrStream,
                                        {{lld::Gnu, &lld::elf::link}});
      rc = result.retCode;
      lldUnusable = !result.canRunAgain;
    }
  }
  // lld has closed its own descriptor of the pipe: this is the last writer.
  writeEnd.reset();
  reader.join();
  if (rc != 0) {
    // lld names the object by the path it was given: the memfd's number
    // means nothing to the user.
    std::string text = llvm::StringRef(messages).rtrim().str();
    for (size_t at = 0; (at = text.find(inputPath, at)) != std::string::npos;) {
      size_t end = at + inputPath.size();
      if (end < text.size() && std::isdigit((unsigned char)text[end])) {
        at = end;
        continue;
      }
      text.replace(at, inputPath.size(), kObjectName);
      at += std::strlen(kObjectName);
    }
    error = "linking the host kernel failed" +
            (text.empty() ? " (lld returned " + std::to_string(rc) + ")"
                          : ": " + text);
    return false;
  }
  if (readErrno != 0 || output.empty()) {
    error = "cannot read the linked kernel back from lld" +
            (readErrno ? ": " + std::string(std::strerror(readErrno))
                       : std::string(": lld wrote nothing"));
    return false;
  }
  sharedObject = std::move(output);
  return true;
}

bool kjit::buildHostSharedObject(ModuleOp module,
                                 const HostCodegenOptions &codegen,
                                 std::string &sharedObject,
                                 std::string &error) {
  // The runtime's compile does not verify after every pass (docs/Runtime.md,
  // "Verification"): LLVM's translation must never see an invalid module.
  // The verifier's diagnostics go to the context's handler (the compile
  // collects them into its message).
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

  // The object in memory, then linked in process (docs/HostTarget.md, "From
  // LLVM IR to a shared object").
  llvm::SmallString<0> object;
  {
    llvm::raw_svector_ostream out(object);
    llvm::legacy::PassManager emit;
    if (machine->addPassesToEmitFile(emit, out, nullptr,
                                     llvm::CodeGenFileType::ObjectFile)) {
      error = "the target cannot emit object files";
      return false;
    }
    emit.run(*llvmModule);
  }
  return linkSharedObject(object, sharedObject, error);
}
