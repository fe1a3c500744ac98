//===- Target.h - compile targets and their registry ------------*- C++ -*-===//
//
// A target turns a specialized kernel into an artifact a backend loads: it
// adds its lowering to a pass pipeline and emits the artifact's bytes from
// the lowered module. Targets are looked up by name (a launch's target,
// `kjit_compile_request::target`); `host` and `cuda` are built in. Nothing
// here assumes a particular target. docs/Architecture.md
// shows where the pieces sit.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_COMPILER_TARGET_H
#define KJIT_COMPILER_TARGET_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

// Declared only: a caller that looks targets up needs no MLIR header; an
// implementation includes mlir/IR/BuiltinOps.h and mlir/Pass/PassManager.h.
namespace mlir {
class DialectRegistry;
class ModuleOp;
class OpPassManager;
} // namespace mlir

namespace kjit {

/// What a compile asks of a target, from the launch options.
struct TargetOptions {
  /// Keep device asserts (the `debug` launch option, or KJIT_DEBUG=1).
  bool debug = false;
  /// The `enable_fp_fusion` launch option: whether the target may fuse a
  /// multiply and an add into one rounding. The host target does not use
  /// it yet (its code generator contracts nothing it is not told to).
  bool enableFpFusion = true;
  /// The `num_warps` launch option: a program is 32 * numWarps threads
  /// (cuda: the kernel's `.maxntid`).
  int numWarps = 4;
  /// The `num_stages` launch option: how many iterations' tiles a
  /// pipelined loop keeps in flight (cuda, docs/MatrixUnits.md).
  int numStages = 3;
  /// The `maxnreg` launch option; 0: unset (cuda: `.maxnreg` of the entry).
  int64_t maxNReg = 0;
  /// The `ptx_version` launch option (80 for PTX 8.0); 0: unset, the
  /// backend's option or the target's default decides.
  int64_t ptxVersion = 0;
  /// The architecture to compile for, as the backend describes its device
  /// ("sm_90", "x86_64"); empty: the target's default.
  std::string arch;
  /// `name=value` options the backend asks every compile of its target to
  /// use (kjit_backend_describe_args::compile_options: for cuda, the PTX
  /// version and the libdevice path). A target refuses a name it does not
  /// know and validates every value before LLVM sees it.
  std::vector<std::pair<std::string, std::string>> backendOptions;
};

/// The result of a compile, handed to the backend.
struct TargetArtifact {
  /// The bytes, in the target's artifactFormat().
  std::string bytes;
  /// What the target wants known about them (JSON object): the compiled
  /// hook's metadata.
  std::string metadataJson;
};

/// One compile target.
class Target {
public:
  virtual ~Target();

  /// The name launches and pipelines use: "host".
  virtual llvm::StringRef name() const = 0;

  /// The format of the artifact bytes, as the backend's finalize hook sees
  /// it: "elf-shared-object".
  virtual llvm::StringRef artifactFormat() const = 0;

  /// Checks options.arch and options.backendOptions: an error names the
  /// bad value and what would be accepted. Called before buildPipeline,
  /// which may then assume them valid (LLVM aborts on a bad CPU or PTX
  /// version, so nothing unchecked may reach it).
  virtual llvm::Error validateOptions(const TargetOptions &options) const;

  /// Registers what the target's pipeline needs beyond the kernel-IR
  /// dialects of registerKjitDialects (interfaces, translations). A compile
  /// for this target calls it on its context's registry; other compiles
  /// (and analyses) do not pay for it.
  virtual void registerDialects(mlir::DialectRegistry &registry) const;

  /// Adds the passes that lower a specialized module holding one kernel (no
  /// `!kjit.any`, no constexpr left; its globals hold the values to bake)
  /// to the form emitArtifact takes.
  virtual void buildPipeline(mlir::OpPassManager &pm,
                             const TargetOptions &options) const = 0;

  /// The artifact of a module that buildPipeline's passes lowered.
  virtual llvm::Expected<TargetArtifact>
  emitArtifact(mlir::ModuleOp module, const TargetOptions &options) const = 0;
};

/// Adds the passes that give a lowered module's LLVM functions line
/// information from the operations' locations, in every build (as Triton's
/// kernels carry it): a debugger, a profiler's source view and the host
/// backend's fault reports name the kernel's lines. A release build names
/// the file by its base name, so that its artifact is the same wherever the
/// file lies (its key does not name the file); a debug build names it as it
/// was loaded, as its assert messages do (its key includes that name).
/// `directivesOnly`: .file/.loc directives alone (cuda: a line table makes
/// NVPTX declare `.target sm_90, debug`, which ptxas refuses at -O3), else
/// a line table. docs/HostTarget.md and docs/CudaTarget.md give the cost.
void addLineInfoPasses(mlir::OpPassManager &pm, const TargetOptions &options,
                       bool directivesOnly);

/// Adds a target to the registry. Returns false, and drops `target`, when a
/// target of its name is registered already. Thread-safe.
bool registerTarget(std::unique_ptr<Target> target);

/// The registered target called `name`, or null. The built-in targets
/// (host) are always registered. Targets live as long as the process.
const Target *lookupTarget(llvm::StringRef name);

/// The names of the registered targets, sorted (for error messages).
std::vector<std::string> getRegisteredTargetNames();

/// LLVM's command-line options (cl::opt) are globals of the process: LLVM's
/// passes and code generators read them during every compile, and lld's
/// driver writes every one of them (it resets them to their defaults before
/// each link, cl::ResetAllOptionOccurrences). A compile, an analysis and an
/// extension of the compiler service hold a reader for their whole run on
/// their thread; a link holds the writer, which waits until no other thread
/// holds a reader and keeps new readers out (so links also take turns). A
/// writer inside its own thread's reader leaves it for the write and takes
/// it back after, so a compile that links waits for the others' readers,
/// never for itself. Readers nest on a thread. Thread-safe.
class CommandLineReader {
public:
  CommandLineReader();
  ~CommandLineReader();
  CommandLineReader(const CommandLineReader &) = delete;
  CommandLineReader &operator=(const CommandLineReader &) = delete;
};

class CommandLineWriter {
public:
  CommandLineWriter();
  ~CommandLineWriter();
  CommandLineWriter(const CommandLineWriter &) = delete;
  CommandLineWriter &operator=(const CommandLineWriter &) = delete;

private:
  /// The thread's reader depth, left for the write.
  int readers = 0;
};

} // namespace kjit

#endif // KJIT_COMPILER_TARGET_H
