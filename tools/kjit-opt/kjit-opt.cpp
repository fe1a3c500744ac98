//===- kjit-opt.cpp - the kjit optimizer driver ---------------------------===//
//
// mlir-opt for kernel IR: parses, verifies, runs pass pipelines and prints.
// Registers the kjit dialect, the upstream dialects kernel bodies use, the
// kjit passes and the compile pipelines (--kjit-host-pipeline='kernel=K
// record=R.json' replays a launch's compile); all of mlir-opt's flags work
// (--split-input-file, --verify-diagnostics, --mlir-print-ir-after-all, ...).
//
// Out-of-tree MLIR plugins load as in mlir-opt: --load-pass-plugin and
// --load-dialect-plugin come with MlirOptMain (test/kjit-opt/pass-plugin.test).
//
// --load-plugin loads kjit plugins (the stable C ABI of include/kjit-c), as
// KJIT_PLUGINS does, so that kjit-cache-hook and kjit-compiled-hook show
// their hooks working on IR alone.
//
// Some inputs would hang or crash MLIR itself, so the input is checked
// before MlirOptMain reads it: only a regular file of bounded size, nesting
// no deeper than the parser's recursion survives, and no operation MLIR
// 22's verifiers crash on outside kjit functions
// (hasUpstreamVerifierHazard). Standard input is read whole for the check
// and put back as an anonymous file (readStandardInputAndPutBack). The MLIR
// plugins named on the command line must be regular files too.
//
//===----------------------------------------------------------------------===//

#include "HookPasses.h"
#include "kjit/Compiler/Pipeline.h"
#include "kjit/Compiler/Registration.h"
#include "kjit/Conversion/Passes.h"
#include "kjit/Model/InputFile.h"
#include "kjit/Plugin/PluginHost.h"
#include "kjit/Transforms/Passes.h"

#include "kjit/Dialect/Kjit/IR/Kjit.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>

static llvm::cl::list<std::string>
    pluginPaths("load-plugin",
                llvm::cl::desc("Load a kjit plugin (shared library with the "
                               "stable C ABI); repeatable. A plugin that "
                               "fails to load is reported and skipped"),
                llvm::cl::value_desc("path"));

/// Whether `text` (the file `name`, split at `marker` lines unless it is
/// empty, as --split-input-file does) holds an operation that MLIR 22's own
/// verifier crashes on instead of reporting, outside kjit functions (whose
/// verifiers report those in their bodies before MLIR reaches them): an
/// arith.select with a vector condition and a scalar result in an upstream
/// func.func. Each part is parsed without verifying, quietly (MlirOptMain
/// reports what does not parse); what is found is reported at its location.
/// Every part keeps the file's line numbers: the lines before it are blank.
static bool hasUpstreamVerifierHazard(llvm::StringRef text,
                                      llvm::StringRef name,
                                      llvm::StringRef marker,
                                      const mlir::DialectRegistry &registry,
                                      bool allowUnregistered) {
  mlir::MLIRContext context(registry);
  context.allowUnregisteredDialects(allowUnregistered);
  bool found = false;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.size();
    if (!marker.empty()) {
      // A marker counts where it starts a line, as in MLIR's splitter.
      for (size_t at = text.find(marker, begin); at != llvm::StringRef::npos;
           at = text.find(marker, at + 1))
        if (at == 0 || text[at - 1] == '\n') {
          end = at;
          break;
        }
    }
    std::string part(size_t(text.substr(0, begin).count('\n')), '\n');
    part += text.slice(begin, end).str();
    llvm::SourceMgr sources;
    sources.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(part, name),
                               llvm::SMLoc());
    mlir::OwningOpRef<mlir::ModuleOp> module;
    {
      mlir::ScopedDiagnosticHandler quiet(
          &context, [](mlir::Diagnostic &) { return mlir::success(); });
      module = mlir::parseSourceFile<mlir::ModuleOp>(
          sources, mlir::ParserConfig(&context, /*verifyAfterParse=*/false));
    }
    if (module) {
      mlir::SourceMgrDiagnosticHandler report(sources, &context);
      found |= mlir::failed(
          kjit::verifyUpstreamVerifierHazardsOutsideKjitFunctions(*module));
    }
    if (end == text.size())
      break;
    size_t lineEnd = text.find('\n', end);
    begin = lineEnd == llvm::StringRef::npos ? text.size() : lineEnd + 1;
  }
  return found;
}

/// Standard input, read whole; the text is then put back at descriptor 0 as
/// an anonymous temporary file, so that MlirOptMain reads the same text as
/// from a file and still names it <stdin> in its diagnostics. Null, with the
/// reason printed, when it cannot be read or put back.
static std::unique_ptr<llvm::MemoryBuffer> readStandardInputAndPutBack() {
  // MlirOptMain says this when it would wait on a terminal; it is kjit-opt
  // that waits now.
  if (isatty(STDIN_FILENO))
    llvm::errs() << "(processing input from stdin now, hit ctrl-c/ctrl-d to "
                    "interrupt)\n";
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text =
      llvm::MemoryBuffer::getSTDIN();
  if (!text) {
    llvm::errs() << "kjit-opt: error: cannot read standard input: "
                 << text.getError().message() << "\n";
    return nullptr;
  }
  std::FILE *copy = std::tmpfile();
  bool putBack =
      copy &&
      std::fwrite((*text)->getBufferStart(), 1, (*text)->getBufferSize(),
                  copy) == (*text)->getBufferSize() &&
      std::fflush(copy) == 0 && lseek(fileno(copy), 0, SEEK_SET) == 0 &&
      dup2(fileno(copy), STDIN_FILENO) == STDIN_FILENO;
  int why = errno; // before fclose, which may set it
  if (copy)
    std::fclose(copy); // descriptor 0 keeps the file open
  if (!putBack) {
    llvm::errs() << "kjit-opt: error: cannot keep standard input in a "
                    "temporary file: "
                 << std::strerror(why) << "\n";
    return nullptr;
  }
  return std::move(*text);
}

/// Whether every MLIR pass and dialect plugin named on the command line
/// (--load-pass-plugin, --load-dialect-plugin: one or two dashes, the path
/// after '=' or as the next argument, as LLVM's option parser reads them)
/// that exists is a regular file, else the reason printed. They are checked
/// before that parser runs, since it dlopens them as it reads them: a FIFO
/// would block it, and a device or directory is no library. A missing
/// file is left to MLIR's own message.
static bool mlirPluginsAreRegularFiles(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "--")
      break;
    if (!arg.consume_front("-"))
      continue;
    arg.consume_front("-");
    for (auto [option, kind] : {std::pair{"load-pass-plugin", "pass"},
                                std::pair{"load-dialect-plugin", "dialect"}}) {
      llvm::StringRef value = arg;
      if (!value.consume_front(option))
        continue;
      std::string path;
      if (value.consume_front("="))
        path = value.str();
      else if (value.empty() && i + 1 < argc)
        path = argv[i + 1];
      else
        continue;
      absl::Status regular = kjit::rt::checkRegularFile(path);
      if (regular.ok() || regular.code() == absl::StatusCode::kNotFound)
        continue;
      llvm::errs() << "kjit-opt: error: cannot load MLIR " << kind
                   << " plugin '" << path << "': "
                   << std::string_view(regular.message().data(),
                                       regular.message().size())
                   << "\n";
      return false;
    }
  }
  return true;
}

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  kjit::registerKjitDialects(registry);
  // What the targets' pipelines need (cuda: the NVVM lowering).
  kjit::registerKjitTargetDialects(registry);
  kjit::registerKjitPasses();
  // Every built-in target's passes (kjit/Target/Targets.inc).
  kjit::registerKjitConversionPasses();
  kjit::registerKjitHookPasses();
  // kjit-host-pipeline (and one per registered target): a launch's compile.
  kjit::registerKernelPipelines();
  // The generic transforms (canonicalize, cse, inline, symbol-dce, ...) that
  // pipelines over kernel IR use.
  mlir::registerTransformsPasses();

  if (!mlirPluginsAreRegularFiles(argc, argv))
    return 1;
  auto [input, output] = mlir::registerAndParseCLIOptions(
      argc, argv, "kjit optimizer: parse, verify and transform kernel IR\n",
      registry);
  // MLIR's parser recurses once per nesting level without a limit and
  // overflows the stack at about 4000 nested regions: refuse such an input
  // first, as the runtime does. The input is read as the runtime reads
  // kernel files: only a regular file of bounded size (a FIFO would block
  // MlirOptMain, /dev/zero exhaust its memory). A missing input is left to
  // MlirOptMain's message.
  std::unique_ptr<llvm::MemoryBuffer> text;
  if (input == "-") {
    if (!(text = readStandardInputAndPutBack()))
      return 1;
  } else {
    absl::StatusOr<std::string> file = kjit::rt::readInputFile(
        input, kjit::rt::kMaxKernelFileBytes, "input file");
    if (file.ok()) {
      text = llvm::MemoryBuffer::getMemBufferCopy(*file, input);
    } else if (file.status().code() != absl::StatusCode::kNotFound) {
      llvm::errs() << "kjit-opt: error: "
                   << std::string_view(file.status().message().data(),
                                       file.status().message().size())
                   << "\n";
      return 1;
    }
  }
  if (text) {
    llvm::StringRef name = input == "-" ? "<stdin>" : llvm::StringRef(input);
    std::string_view view(text->getBufferStart(), text->getBufferSize());
    if (std::string deep = kjit::rt::checkIRNesting(view); !deep.empty()) {
      llvm::errs() << name << ": error: " << deep << "\n";
      return 1;
    }
    mlir::MlirOptMainConfig config =
        mlir::MlirOptMainConfig::createFromCLOptions();
    if (hasUpstreamVerifierHazard(text->getBuffer(), name,
                                  config.inputSplitMarker(), registry,
                                  config.shouldAllowUnregisteredDialects()))
      return 1;
  }
  kjit::plugin::PluginHost &plugins = kjit::hookPluginHost();
  plugins.loadFromEnvironment();
  for (const std::string &path : pluginPaths)
    (void)plugins.loadPlugin(path); // reported by the host; go on
  mlir::LogicalResult result =
      mlir::MlirOptMain(argc, argv, input, output, registry);
  // Plugins finish their work (summaries, trace files) at shutdown.
  plugins.shutdown();
  return mlir::asMainReturnCode(result);
}
