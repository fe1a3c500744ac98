//===- Target.cpp - the target registry -----------------------------------===//

#include "kjit/Compiler/Target.h"

#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <mutex>
#include <shared_mutex>

using namespace kjit;

// Each built-in target's factory (lib/Target/<Name>).
namespace kjit {
#define KJIT_TARGET(Name) std::unique_ptr<Target> create##Name##Target();
#include "kjit/Target/Targets.inc"
#undef KJIT_TARGET
} // namespace kjit

namespace {

/// Renames the file of every location to its base name
/// ("/src/k/add.mlir" -> "add.mlir"), keeping lines and columns.
class BaseNameLocationsPass
    : public mlir::PassWrapper<BaseNameLocationsPass, mlir::OperationPass<>> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(BaseNameLocationsPass)
  llvm::StringRef getArgument() const override {
    return "kjit-base-name-locations";
  }
  void runOnOperation() override {
    mlir::AttrTypeReplacer replacer;
    replacer.addReplacement(
        [](mlir::FileLineColRange loc) -> std::optional<mlir::Attribute> {
          llvm::StringRef file = loc.getFilename().getValue();
          llvm::StringRef base = llvm::sys::path::filename(file);
          if (base == file)
            return std::nullopt;
          return mlir::FileLineColRange::get(
              loc.getContext(), base, loc.getStartLine(), loc.getStartColumn(),
              loc.getEndLine(), loc.getEndColumn());
        });
    replacer.recursivelyReplaceElementsIn(getOperation(),
                                          /*replaceAttrs=*/false,
                                          /*replaceLocs=*/true,
                                          /*replaceTypes=*/false);
  }
};

} // namespace

void kjit::addLineInfoPasses(mlir::OpPassManager &pm,
                             const TargetOptions &options,
                             bool directivesOnly) {
  if (!options.debug)
    pm.addPass(std::make_unique<BaseNameLocationsPass>());
  mlir::LLVM::DIScopeForLLVMFuncOpPassOptions lines;
  if (directivesOnly)
    lines.emissionKind = mlir::LLVM::DIEmissionKind::DebugDirectivesOnly;
  pm.addPass(mlir::LLVM::createDIScopeForLLVMFuncOpPass(lines));
}

Target::~Target() = default;

void Target::registerDialects(mlir::DialectRegistry &) const {}

llvm::Error Target::validateOptions(const TargetOptions &options) const {
  // A target that takes no backend options refuses every one: an option it
  // ignored would still change the key and mean nothing.
  if (options.backendOptions.empty())
    return llvm::Error::success();
  return llvm::createStringError("target '" + name() + "' takes no option '" +
                                 options.backendOptions.front().first + "'");
}

namespace {

/// The registered targets. They are never removed, so lookups hand out
/// plain pointers.
struct Registry {
  std::mutex mutex;
  std::vector<std::unique_ptr<Target>> targets;

  Target *find(llvm::StringRef name) {
    for (const std::unique_ptr<Target> &target : targets)
      if (target->name() == name)
        return target.get();
    return nullptr;
  }
};

/// The registry, with the built-in targets in it (KJIT_TARGETS, generated
/// into kjit/Target/Targets.inc: docs/Targets.md). A target outside the
/// tree is added by its own library through registerTarget.
Registry &getRegistry() {
  static Registry *registry = [] {
    auto *built = new Registry;
#define KJIT_TARGET(Name) built->targets.push_back(create##Name##Target());
#include "kjit/Target/Targets.inc"
#undef KJIT_TARGET
    return built;
  }();
  return *registry;
}

} // namespace

bool kjit::registerTarget(std::unique_ptr<Target> target) {
  Registry &registry = getRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  if (registry.find(target->name()))
    return false;
  registry.targets.push_back(std::move(target));
  return true;
}

const Target *kjit::lookupTarget(llvm::StringRef name) {
  Registry &registry = getRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  return registry.find(name);
}

std::vector<std::string> kjit::getRegisteredTargetNames() {
  Registry &registry = getRegistry();
  std::vector<std::string> names;
  {
    std::lock_guard<std::mutex> lock(registry.mutex);
    for (const std::unique_ptr<Target> &target : registry.targets)
      names.push_back(target->name().str());
  }
  std::sort(names.begin(), names.end());
  return names;
}

namespace {
/// The gate of LLVM's command-line options (Target.h), and how deep the
/// calling thread is in readers.
std::shared_mutex &commandLineGate() {
  static std::shared_mutex gate;
  return gate;
}
thread_local int commandLineReaders = 0;
} // namespace

kjit::CommandLineReader::CommandLineReader() {
  if (commandLineReaders++ == 0)
    commandLineGate().lock_shared();
}

kjit::CommandLineReader::~CommandLineReader() {
  if (--commandLineReaders == 0)
    commandLineGate().unlock_shared();
}

kjit::CommandLineWriter::CommandLineWriter() : readers(commandLineReaders) {
  if (readers)
    commandLineGate().unlock_shared();
  commandLineReaders = 0;
  commandLineGate().lock();
}

kjit::CommandLineWriter::~CommandLineWriter() {
  commandLineGate().unlock();
  commandLineReaders = readers;
  if (readers)
    commandLineGate().lock_shared();
}
