//===- CompilerService.cpp - the compiler as the runtime sees it ----------===//
//
// libkjit-compiler.so: the runtime's CompilerService (include/kjit/Runtime/
// CompilerService.h) over the kjit dialect, passes and targets. analyze
// parses a module once and hands back its manifests, keys and globals with
// the module as MLIR bytecode; compile reads that bytecode, bakes the
// globals' values in, specializes one kernel from the runtime's typed
// record and lowers it for a target. extend loads the runtime's MLIR
// plugins (MlirPlugins.h) and checks its extra passes, which every compile
// runs after specialization. Every symbol but the factory is hidden
// (compiler.map).
//
//===----------------------------------------------------------------------===//

#include "kjit/Runtime/CompilerService.h"

#include "MlirPlugins.h"
#include "kjit/Analysis/Dependencies.h"
#include "kjit/Compiler/Pipeline.h"
#include "kjit/Compiler/Registration.h"
#include "kjit/Compiler/Target.h"
#include "kjit/Conversion/Passes.h"
#include "kjit/Dialect/Kjit/IR/Kjit.h"
#include "kjit/Model/DType.h"
#include "kjit/Model/GlobalPath.h"
#include "kjit/Model/InputFile.h"
#include "kjit/Model/Json.h"
#include "kjit/Model/KernelManifest.h"
#include "kjit/Model/Specialization.h"
#include "kjit/Support/StrCat.h"
#include "kjit/Transforms/ApplySpecialization.h"
#include "kjit/Transforms/Passes.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <vector>

using namespace mlir;

namespace {

/// `file:line:col`, as compilers print locations.
std::string formatLocation(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().getValue() + ":" + Twine(file.getLine()) + ":" +
            Twine(file.getColumn()))
        .str();
  std::string text;
  llvm::raw_string_ostream os(text);
  os << loc;
  return text;
}

/// A context with the dialects kernel IR uses (and the dialect plugins',
/// and, for a compile, the target's). Threading is off: kernels are small
/// and the runtime compiles on the launching thread.
std::unique_ptr<MLIRContext>
makeContext(llvm::ArrayRef<kjit::DialectPluginCallback> dialectPlugins,
            const kjit::Target *target) {
  DialectRegistry registry;
  kjit::registerKjitDialects(registry);
  if (target)
    target->registerDialects(registry);
  for (const kjit::DialectPluginCallback &plugin : dialectPlugins)
    plugin(registry);
  auto context =
      std::make_unique<MLIRContext>(registry, MLIRContext::Threading::DISABLED);
  context->loadAllAvailableDialects();
  // The messages name the operation; its generic form would only repeat
  // it less readably.
  context->printOpOnDiagnostic(false);
  return context;
}

/// Compile contexts kept from one compile of a target to the next. Making
/// one (the registry, loading about 20 dialects, the NVVM interfaces) and
/// destroying it cost about 1.2 ms of a 9.5 ms later cuda compile here. A
/// context holds no operation between compiles (each compile's module is
/// its own and destroyed with its session), only what the context uniques:
/// types, attributes (the artifact's text among them) and identifiers,
/// which nothing reads back; they grow with each compile, so a context is
/// retired after kMaxUses compiles. A compile takes a context no other
/// compile holds (several threads: several contexts, at most kMaxIdle kept
/// per target), and one whose compile failed is not kept.
class ContextPool {
public:
  static constexpr unsigned kMaxUses = 64;
  static constexpr size_t kMaxIdle = 4;

  struct Lease {
    std::unique_ptr<MLIRContext> context;
    unsigned uses = 0;
  };

  Lease take(const kjit::Target *target,
             llvm::ArrayRef<kjit::DialectPluginCallback> dialectPlugins) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      std::vector<Lease> &idle = pools[target];
      if (!idle.empty()) {
        Lease lease = std::move(idle.back());
        idle.pop_back();
        return lease;
      }
    }
    return {makeContext(dialectPlugins, target), 0};
  }

  void give(const kjit::Target *target, Lease lease) {
    if (++lease.uses >= kMaxUses)
      return;
    std::lock_guard<std::mutex> lock(mutex);
    std::vector<Lease> &idle = pools[target];
    if (idle.size() < kMaxIdle)
      idle.push_back(std::move(lease));
  }

  /// Drops every kept context (the dialect plugins changed).
  void clear() {
    std::lock_guard<std::mutex> lock(mutex);
    pools.clear();
  }

private:
  std::mutex mutex;
  llvm::DenseMap<const kjit::Target *, std::vector<Lease>> pools;
};

/// One analysis or compile: a context, and its diagnostics collected as
/// text.
struct CompileSession {
  /// A fresh context (an analysis).
  explicit CompileSession(
      llvm::ArrayRef<kjit::DialectPluginCallback> dialectPlugins)
      : CompileSession(
            ContextPool::Lease{makeContext(dialectPlugins, nullptr), 0}) {}

  /// A context of `pool`'s for `target`'s compile, given back by keep().
  CompileSession(ContextPool &pool, const kjit::Target *target,
                 llvm::ArrayRef<kjit::DialectPluginCallback> dialectPlugins)
      : CompileSession(pool.take(target, dialectPlugins)) {
    this->pool = &pool;
    this->target = target;
  }

  /// Hands the context back to its pool for the next compile, once this
  /// session's module is destroyed (a session that is not kept destroys
  /// its context).
  void keep() { kept = true; }

  ~CompileSession() {
    handler.reset();
    if (pool && kept)
      pool->give(target, std::move(lease));
  }

  explicit CompileSession(ContextPool::Lease leased)
      : lease(std::move(leased)), context(*lease.context) {
    handler.emplace(&context, [this](Diagnostic &diag) {
      llvm::raw_string_ostream os(diagnostics);
      if (!diagnostics.empty())
        os << '\n';
      os << formatLocation(diag.getLocation()) << ": "
         << (diag.getSeverity() == DiagnosticSeverity::Error ? "error: "
                                                             : "note: ")
         << diag;
      for (Diagnostic &note : diag.getNotes())
        os << '\n' << formatLocation(note.getLocation()) << ": note: " << note;
      return success();
    });
  }

  /// Parses text or bytecode (the parser tells them apart). Verified, the
  /// operations MLIR's verifiers would crash on are refused first.
  OwningOpRef<ModuleOp> parse(std::string_view input,
                              std::string_view sourceName, bool verify = true) {
    auto buffer = llvm::MemoryBuffer::getMemBuffer(
        StringRef(input.data(), input.size()),
        StringRef(sourceName.data(), sourceName.size()),
        /*RequiresNullTerminator=*/false);
    llvm::SourceMgr sources;
    sources.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
    OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(
        sources, ParserConfig(&context, /*verifyAfterParse=*/false));
    if (module && verify &&
        (failed(kjit::verifyUpstreamVerifierHazardsOutsideKjitFunctions(
             *module)) ||
         failed(mlir::verify(*module))))
      return nullptr;
    return module;
  }

  /// `what`, with the diagnostics collected so far.
  std::string message(StringRef what) const {
    std::string text = what.str();
    if (!diagnostics.empty())
      text += ":\n" + diagnostics;
    return text;
  }
  /// An error of the user's input.
  absl::Status userError(StringRef what) const {
    return absl::InvalidArgumentError(message(what));
  }
  /// A fault of the compiler itself.
  absl::Status internalError(StringRef what) const {
    return absl::InternalError(message(what));
  }

  ContextPool::Lease lease;
  MLIRContext &context;
  std::string diagnostics;
  std::optional<ScopedDiagnosticHandler> handler;
  ContextPool *pool = nullptr;
  const kjit::Target *target = nullptr;
  bool kept = false;
};

namespace rt = kjit::rt;

/// The runtime dtype of a global's or parameter's scalar MLIR type.
std::optional<rt::DType> dtypeOf(Type type) {
  std::string spelled = kjit::printSignatureType(type);
  return rt::parseDType(spelled);
}

/// The bit pattern of an integer or float attribute, zero-extended.
uint64_t bitsOf(TypedAttr value) {
  APInt bits = isa<FloatAttr>(value)
                   ? cast<FloatAttr>(value).getValue().bitcastToAPInt()
                   : cast<IntegerAttr>(value).getValue();
  return bits.getZExtValue();
}

/// A global's runtime name, relative to the top-level module:
/// "inner::SCALE" (kjit/Model/GlobalPath.h).
std::string qualifiedName(kjit::GlobalOp global, ModuleOp root) {
  SmallVector<StringRef> modules;
  for (Operation *parent = global->getParentOp(); parent != root;
       parent = parent->getParentOp())
    if (auto named =
            parent->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
      modules.push_back(named.getValue());
  std::string name;
  for (StringRef module : llvm::reverse(modules))
    kjit::rt::appendGlobalPathPart(name, module);
  kjit::rt::appendGlobalPathPart(name, global.getSymName());
  return name;
}

/// The global that a runtime name ("SCALE", "inner::SCALE") denotes, or null.
kjit::GlobalOp lookupGlobal(ModuleOp module, StringRef name) {
  MLIRContext *context = module.getContext();
  std::vector<std::string_view> parts =
      kjit::rt::splitGlobalPath(std::string_view(name.data(), name.size()));
  SmallVector<FlatSymbolRefAttr> nested;
  for (std::string_view part : llvm::drop_begin(parts))
    nested.push_back(FlatSymbolRefAttr::get(context, part));
  auto path = SymbolRefAttr::get(context, parts.front(), nested);
  return dyn_cast_or_null<kjit::GlobalOp>(
      SymbolTable::lookupSymbolIn(module, path));
}

/// The runtime's view of a kernel's parameters.
std::optional<kjit::rt::KernelManifest> makeManifest(kjit::KernelOp kernel,
                                                     std::string &error) {
  namespace rt = kjit::rt;
  rt::KernelManifest manifest;
  manifest.name = kernel.getSymName().str();
  for (unsigned i = 0; i < kernel.getNumArguments(); ++i) {
    rt::KernelParam param;
    param.name = kernel.getParamName(i).str();
    Type type = kernel.getArgumentTypes()[i];
    if (isa<kjit::AnyValueType>(type)) {
      param.type = rt::ParamType::any();
    } else {
      std::string spelled = kjit::printParamSignatureType(kernel, i);
      if (StringRef(spelled).starts_with("*k"))
        spelled.erase(1, 1); // read-only is kjit.const, not the dtype
      bool isPointer = StringRef(spelled).consume_front("*");
      std::optional<rt::DType> dtype =
          rt::parseDType(isPointer ? spelled.substr(1) : spelled);
      if (!dtype) {
        error = "parameter '" + param.name + "' has type " + spelled +
                ", which has no runtime dtype";
        return std::nullopt;
      }
      param.type = isPointer ? rt::ParamType::pointer(*dtype)
                             : rt::ParamType::scalar(*dtype);
    }
    using D = kjit::KjitDialect;
    param.isConstexpr = kernel.hasParamFlag(i, D::kConstexprAttrName);
    param.doNotSpecialize = kernel.hasParamFlag(i, D::kDoNotSpecializeAttrName);
    param.doNotSpecializeOnAlignment =
        kernel.hasParamFlag(i, D::kDoNotSpecializeOnAlignmentAttrName);
    param.isConst = kernel.hasParamFlag(i, D::kConstAttrName);
    if (Attribute value = kernel.getArgAttr(i, D::kDefaultAttrName)) {
      if (isa<UnitAttr>(value))
        param.defaultValue = rt::Argument::none();
      else if (auto integer = dyn_cast<IntegerAttr>(value))
        param.defaultValue =
            integer.getType().isInteger(1)
                ? rt::Argument::boolean(integer.getValue().getBoolValue())
                : rt::Argument::integer(
                      kernel.hasParamFlag(i, D::kUnsignedAttrName)
                          ? static_cast<rt::Int128>(
                                integer.getValue().getZExtValue())
                          : integer.getValue().getSExtValue());
      else if (auto real = dyn_cast<FloatAttr>(value))
        param.defaultValue = rt::Argument::fp(real.getValueAsDouble());
    }
    manifest.params.push_back(std::move(param));
  }
  return manifest;
}

/// Sets each named global to its bits; an unknown name or a value that does
/// not fit is the runtime's fault (it names globals the analysis listed).
absl::Status applyGlobals(ModuleOp module,
                          absl::Span<const rt::GlobalValue> values) {
  for (const rt::GlobalValue &value : values) {
    StringRef name(value.name.data(), value.name.size());
    kjit::GlobalOp global = lookupGlobal(module, name);
    if (!global)
      return absl::InternalError(
          ("the runtime asked to bake unknown global '" + name + "'").str());
    Type type = global.getType();
    unsigned width = type.getIntOrFloatBitWidth();
    if (width < 64 && (value.bits >> width) != 0)
      return absl::InternalError(
          ("the value of global '" + name + "' does not fit its type").str());
    APInt bits(width, value.bits);
    if (auto floatType = dyn_cast<FloatType>(type))
      global.setValueAttr(
          FloatAttr::get(type, APFloat(floatType.getFloatSemantics(), bits)));
    else
      global.setValueAttr(IntegerAttr::get(type, bits));
  }
  return absl::OkStatus();
}

class Service final : public rt::CompilerService {
public:
  absl::StatusOr<rt::ModuleAnalysis>
  analyze(std::string_view text, std::string_view sourceName) override;
  absl::StatusOr<rt::CompiledArtifact>
  compile(const rt::CompileRequest &request) override;
  std::vector<rt::TargetDescription> targets() const override {
    std::vector<rt::TargetDescription> result;
    for (const std::string &name : kjit::getRegisteredTargetNames())
      result.push_back(
          {name, kjit::lookupTarget(name)->artifactFormat().str()});
    return result;
  }
  absl::Status extend(const rt::CompilerExtensions &extensions) override;

private:
  std::vector<kjit::DialectPluginCallback> dialectPlugins;
  std::string extraPasses;
  ContextPool contexts;
};

absl::Status Service::extend(const rt::CompilerExtensions &extensions) {
  kjit::CommandLineReader readingOptions;
  absl::StatusOr<std::vector<kjit::DialectPluginCallback>> dialects =
      kjit::loadMlirPlugins(extensions.passPlugins, extensions.dialectPlugins);
  if (!dialects.ok())
    return dialects.status();
  dialectPlugins = std::move(*dialects);
  contexts.clear();
  extraPasses = extensions.extraPasses;
  if (extraPasses.empty())
    return absl::OkStatus();
  // What the extra passes may name besides the plugins' passes: kjit's
  // passes and the generic transforms, as in kjit-opt. Once per process:
  // MLIR's pass registry is global, and several runtimes share it.
  static std::once_flag registered;
  std::call_once(registered, [] {
    kjit::registerKjitPasses();
    kjit::registerKjitConversionPasses();
    registerTransformsPasses();
  });
  // Parsed now, so that a pass nobody registered is an error of the
  // runtime's setup, not of every launch.
  OpPassManager probe(ModuleOp::getOperationName());
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (failed(parsePassPipeline(extraPasses, probe, os)))
    return absl::InvalidArgumentError("the extra passes '" + extraPasses +
                                      "' do not parse: " + errors);
  return absl::OkStatus();
}

absl::StatusOr<rt::ModuleAnalysis>
Service::analyze(std::string_view text, std::string_view sourceName) {
  // Before MLIR's parser, which has no depth limit of its own.
  if (std::string deep = rt::checkIRNesting(text); !deep.empty())
    return absl::InvalidArgumentError(kjit::strCat(
        "cannot parse the kernel module: ", sourceName, ": ", deep));
  kjit::CommandLineReader readingOptions;
  CompileSession session(dialectPlugins);
  OwningOpRef<ModuleOp> module =
      session.parse(text, sourceName, /*verify=*/false);
  if (!module)
    return session.userError("cannot parse the kernel module");

  rt::ModuleAnalysis result;
  // The module is verified once. Only when that fails are its kernels
  // verified one by one: a kernel that fails is set aside with its
  // diagnostics (Module::kernel reports them) and the others of the module
  // stay launchable. Everything else must verify, as before.
  size_t beforeModule = session.diagnostics.size();
  // What MLIR's verifiers would crash on is refused first.
  if (failed(kjit::verifyUpstreamVerifierHazardsOutsideKjitFunctions(*module)))
    return session.userError("cannot parse the kernel module");
  if (failed(mlir::verify(*module))) {
    session.diagnostics.resize(beforeModule); // said again below
    SmallVector<kjit::KernelOp> invalid;
    for (auto kernel : module->getOps<kjit::KernelOp>()) {
      size_t before = session.diagnostics.size();
      if (succeeded(mlir::verify(kernel)))
        continue;
      std::string diagnostics = session.diagnostics.substr(before);
      session.diagnostics.resize(before);
      if (!diagnostics.empty() && diagnostics.front() == '\n')
        diagnostics.erase(0, 1);
      result.invalidKernels.push_back(
          {kernel.getSymName().str(), "kernel '" + kernel.getSymName().str() +
                                          "' of " + std::string(sourceName) +
                                          " is invalid:\n" + diagnostics});
      invalid.push_back(kernel);
    }
    for (kjit::KernelOp kernel : invalid)
      kernel.erase();
    if (failed(mlir::verify(*module)))
      return session.userError("cannot parse the kernel module");
  }
  // The module as parsed, before the analysis touches it: what compiles
  // read back.
  {
    llvm::raw_string_ostream os(result.bytecode);
    if (failed(writeBytecodeToFile(*module, os)))
      return session.internalError("cannot write the module as bytecode");
  }
  kjit::DependencyAnalysis analysis(*module);
  for (auto kernel : module->getOps<kjit::KernelOp>()) {
    FailureOr<const kjit::DependencyRecord *> record =
        analysis.getRecord(kernel);
    if (failed(record))
      return session.userError("cannot analyse kernel '" +
                               kernel.getSymName().str() + "'");
    std::string message;
    std::optional<rt::KernelManifest> manifest = makeManifest(kernel, message);
    if (!manifest)
      return session.userError(message);
    rt::KernelAnalysis entry;
    entry.manifest = std::move(*manifest);
    entry.dependencyKey = (*record)->key;
    for (const kjit::GlobalUse &use : (*record)->globals)
      entry.usedGlobals.push_back(kjit::getGlobalPathName(use.name));
    FailureOr<std::vector<std::pair<std::string, std::string>>> digests =
        analysis.getSourceDigests(kernel);
    if (failed(digests))
      return session.userError("cannot analyse kernel '" +
                               kernel.getSymName().str() + "'");
    entry.sourceDigests = std::move(*digests);
    result.kernels.push_back(std::move(entry));
  }
  WalkResult walk = module->walk([&](kjit::GlobalOp global) {
    std::optional<rt::DType> dtype = dtypeOf(global.getType());
    if (!dtype) {
      global.emitError("global type has no runtime dtype");
      return WalkResult::interrupt();
    }
    result.globals.push_back(
        {qualifiedName(global, *module), *dtype, bitsOf(global.getValue())});
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return session.userError("cannot analyse the module's globals");
  return result;
}

/// Which pass failed first: it decides whose fault a failed compile is.
struct FirstFailure : PassInstrumentation {
  explicit FirstFailure(std::string &pass) : pass(pass) {}
  void runAfterPassFailed(Pass *failedPass, Operation *) override {
    if (pass.empty())
      pass = failedPass->getArgument().str();
  }
  std::string &pass;
};

/// KJIT_DUMP_LOWERED_IR=<dir>: the lowered module as <dir>/<kernel>.mlir,
/// exactly as kjit-opt --kjit-<target>-pipeline prints it (docs/Runtime.md).
absl::Status dumpLoweredModule(ModuleOp module, StringRef kernel) {
  const char *dir = std::getenv("KJIT_DUMP_LOWERED_IR");
  if (!dir || !*dir)
    return absl::OkStatus();
  llvm::SmallString<256> path(dir);
  std::error_code ec = llvm::sys::fs::create_directories(path);
  llvm::sys::path::append(path, kernel + ".mlir");
  std::optional<llvm::raw_fd_ostream> os;
  if (!ec)
    os.emplace(path, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return absl::FailedPreconditionError("cannot write the lowered IR to '" +
                                         path.str().str() +
                                         "': " + ec.message());
  module.print(*os);
  *os << '\n';
  return absl::OkStatus();
}

absl::StatusOr<rt::CompiledArtifact>
Service::compile(const rt::CompileRequest &request) {
  StringRef targetName(request.target.data(), request.target.size());
  const kjit::Target *target = kjit::lookupTarget(targetName);
  if (!target) {
    std::string known;
    for (const std::string &name : kjit::getRegisteredTargetNames())
      known += (known.empty() ? "" : ", ") + name;
    return absl::FailedPreconditionError(
        ("unknown target '" + targetName + "' (registered: " + known + ")")
            .str());
  }
  bool accepted = false;
  for (const std::string &format : request.acceptedFormats)
    accepted |= format == target->artifactFormat();
  if (!accepted) {
    std::string formats;
    for (const std::string &format : request.acceptedFormats)
      formats += (formats.empty() ? "" : ", ") + format;
    return absl::FailedPreconditionError(
        ("target '" + target->name() + "' produces '" +
         target->artifactFormat() +
         "', which the backend does not accept (it accepts: " +
         (formats.empty() ? std::string("nothing") : formats) + ")")
            .str());
  }
  if (!request.record)
    return absl::InternalError("a compile request without a record");
  // LLVM's passes read its command-line options, which a link on another
  // thread resets (Target.h).
  kjit::CommandLineReader readingOptions;
  CompileSession session(contexts, target, dialectPlugins);
  const rt::SpecializationRecord &record = *request.record;

  OwningOpRef<ModuleOp> module =
      session.parse(request.bytecode, request.sourceName);
  if (!module)
    return session.internalError("cannot read the analysed module back");
  if (absl::Status baked = applyGlobals(*module, request.globals); !baked.ok())
    return baked;
  if (!module->lookupSymbol<kjit::KernelOp>(record.name))
    return absl::InvalidArgumentError("no kernel named '" + record.name + "'");

  // The registered pipeline (kjit-<target>-pipeline replays it in kjit-opt).
  kjit::KernelPipelineOptions options;
  options.kernel = record.name;
  options.target = kjit::getTargetOptions(record);
  options.target.arch = std::string(request.arch);
  options.target.backendOptions.assign(request.backendOptions.begin(),
                                       request.backendOptions.end());
  if (llvm::Error bad = target->validateOptions(options.target))
    return absl::FailedPreconditionError(
        "the backend's options do not fit target '" + target->name().str() +
        "': " + llvm::toString(std::move(bad)));
  options.record = std::make_shared<const rt::SpecializationRecord>(record);
  options.extraPasses = extraPasses;
  PassManager pm(&session.context);
  // No verification after every pass: it was 7.5% of a later kernel's
  // compile. The IR is verified where it crosses a boundary: when it is
  // read back, after the extra passes (plugins' code) and before LLVM
  // translates it (docs/Runtime.md, "Verification"); kjit-opt's replay of
  // this pipeline verifies after every pass.
  pm.enableVerifier(false);
  std::string pipelineErrors;
  llvm::raw_string_ostream pipelineOs(pipelineErrors);
  if (failed(kjit::buildKernelPipeline(pm, *target, options, pipelineOs)))
    return absl::InternalError("the extra passes checked by extend do not "
                               "parse: " +
                               pipelineErrors);
  std::string failedPass;
  pm.addInstrumentation(std::make_unique<FirstFailure>(failedPass));
  if (failed(pm.run(*module)))
    return session.userError(failedPass == "kjit-specialize"
                                 ? "cannot specialize '" + options.kernel + "'"
                                 : "cannot lower '" + options.kernel +
                                       "' for target '" + target->name().str() +
                                       "'");
  if (absl::Status dumped = dumpLoweredModule(*module, options.kernel);
      !dumped.ok())
    return dumped;

  llvm::Expected<kjit::TargetArtifact> built =
      target->emitArtifact(*module, options.target);
  if (!built)
    return session.internalError(llvm::toString(built.takeError()));
  rt::CompiledArtifact artifact;
  artifact.format = target->artifactFormat().str();
  artifact.bytes = std::move(built->bytes);
  artifact.metadataJson = std::move(built->metadataJson);
  session.keep();
  return artifact;
}

} // namespace

extern "C" __attribute__((visibility("default"))) kjit::rt::CompilerService *
kjit_compiler_create_service(uint32_t version, const char **error) {
  if (version != kjit::rt::kCompilerServiceVersion) {
    *error = "the runtime and the compiler library are of different kjit "
             "builds (compiler service versions differ)";
    return nullptr;
  }
  return new Service();
}
