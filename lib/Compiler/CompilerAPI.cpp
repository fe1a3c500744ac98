//===- CompilerAPI.cpp - what the runtime asks of the compiler -----------===//
//
// analyze: the kernels of a module as the runtime sees them (manifests,
// dependency keys, globals). compile: one kernel, specialized and lowered for
// the host, as an ELF shared object.
//
// The analysis JSON:
//   {"kernels": [{"name": "add", "key": "<dependency key>",
//                 "manifest": <manifestToJson>, "globals": ["SCALE", ...]}],
//    "globals": [{"name": "SCALE", "type": "f32", "bits": "0x3f000000",
//                 "value": "5.000000e-01"}]}
//
//===----------------------------------------------------------------------===//

#include "kjit/Compiler/CompilerAPI.h"

#include "kjit/Analysis/Dependencies.h"
#include "kjit/Compiler/Pipeline.h"
#include "kjit/Compiler/Registration.h"
#include "kjit/Runtime/Json.h"
#include "kjit/Runtime/KernelManifest.h"
#include "kjit/Runtime/Specialization.h"
#include "kjit/Transforms/ApplySpecialization.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>

using namespace mlir;

namespace {

char *copyString(const std::string &text) {
  char *copy = static_cast<char *>(std::malloc(text.size() + 1));
  std::memcpy(copy, text.data(), text.size() + 1);
  return copy;
}

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

/// A context with the dialects kernel IR uses, collecting diagnostics as
/// text. Threading is off: kernels are small and the runtime compiles on the
/// launching thread.
struct CompileSession {
  CompileSession()
      : context(makeRegistry(), MLIRContext::Threading::DISABLED),
        handler(&context, [this](Diagnostic &diag) {
          llvm::raw_string_ostream os(diagnostics);
          if (!diagnostics.empty())
            os << '\n';
          os << formatLocation(diag.getLocation()) << ": "
             << (diag.getSeverity() == DiagnosticSeverity::Error ? "error: "
                                                                 : "note: ")
             << diag;
          for (Diagnostic &note : diag.getNotes())
            os << '\n'
               << formatLocation(note.getLocation()) << ": note: " << note;
          return success();
        }) {
    context.loadAllAvailableDialects();
    // The messages name the operation; its generic form would only repeat
    // it less readably.
    context.printOpOnDiagnostic(false);
  }

  static DialectRegistry makeRegistry() {
    DialectRegistry registry;
    kjit::registerKjitDialects(registry);
    return registry;
  }

  OwningOpRef<ModuleOp> parse(const char *ir, size_t size,
                              const char *sourceName) {
    auto buffer =
        llvm::MemoryBuffer::getMemBuffer(StringRef(ir, size), sourceName,
                                         /*RequiresNullTerminator=*/false);
    llvm::SourceMgr sources;
    sources.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
    return parseSourceFile<ModuleOp>(sources, ParserConfig(&context));
  }

  int fail(char **error, StringRef what) {
    std::string message = what.str();
    if (!diagnostics.empty())
      message += ":\n" + diagnostics;
    *error = copyString(message);
    return 1;
  }

  MLIRContext context;
  std::string diagnostics;
  ScopedDiagnosticHandler handler;
};

/// The bit pattern of an integer or float attribute, as "0x...".
std::string bitsOf(TypedAttr value) {
  APInt bits = isa<FloatAttr>(value)
                   ? cast<FloatAttr>(value).getValue().bitcastToAPInt()
                   : cast<IntegerAttr>(value).getValue();
  return "0x" + llvm::toString(bits, 16, /*Signed=*/false);
}

std::string printValue(TypedAttr value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  value.print(os, /*elideType=*/true);
  return text;
}

std::string globalName(SymbolRefAttr path) {
  std::string name = path.getRootReference().str();
  for (FlatSymbolRefAttr nested : path.getNestedReferences())
    name += "::" + nested.getValue().str();
  return name;
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
      std::string spelled = kjit::printSignatureType(type);
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
                : rt::Argument::integer(integer.getValue().getSExtValue());
      else if (auto real = dyn_cast<FloatAttr>(value))
        param.defaultValue = rt::Argument::fp(real.getValueAsDouble());
    }
    manifest.params.push_back(std::move(param));
  }
  return manifest;
}

int analyze(const char *ir, size_t irSize, const char *sourceName, char **json,
            char **error) {
  CompileSession session;
  OwningOpRef<ModuleOp> module = session.parse(ir, irSize, sourceName);
  if (!module)
    return session.fail(error, "cannot parse the kernel module");
  kjit::DependencyAnalysis analysis(*module);

  std::string out;
  kjit::rt::JsonWriter writer(out);
  writer.beginObject().key("kernels").beginArray();
  for (auto kernel : module->getOps<kjit::KernelOp>()) {
    FailureOr<const kjit::DependencyRecord *> record =
        analysis.getRecord(kernel);
    if (failed(record))
      return session.fail(error, "cannot analyse kernel '" +
                                     kernel.getSymName().str() + "'");
    std::string message;
    std::optional<kjit::rt::KernelManifest> manifest =
        makeManifest(kernel, message);
    if (!manifest)
      return session.fail(error, message);
    writer.beginObject()
        .key("name")
        .string(kernel.getSymName().str())
        .key("key")
        .string((*record)->key);
    // The manifest is embedded as a string: the runtime reads it with its own
    // manifest reader.
    writer.key("manifest").string(kjit::rt::manifestToJson(*manifest));
    writer.key("globals").beginArray();
    for (const kjit::GlobalUse &use : (*record)->globals)
      writer.string(globalName(use.name));
    writer.endArray().endObject();
  }
  writer.endArray().key("globals").beginArray();
  module->walk([&](kjit::GlobalOp global) {
    std::string name = global.getSymName().str();
    for (Operation *parent = global->getParentOp(); parent != *module;
         parent = parent->getParentOp())
      if (auto named = parent->getAttrOfType<StringAttr>(
              SymbolTable::getSymbolAttrName()))
        name = named.getValue().str() + "::" + name;
    std::string type;
    llvm::raw_string_ostream os(type);
    os << global.getType();
    writer.beginObject()
        .key("name")
        .string(name)
        .key("type")
        .string(type)
        .key("bits")
        .string(bitsOf(global.getValue()))
        .key("value")
        .string(printValue(global.getValue()))
        .endObject();
  });
  writer.endArray().endObject();
  *json = copyString(out);
  return 0;
}

/// Sets the globals named in `json` ({"NAME": "0x<bits>"}) to those bits.
LogicalResult applyGlobals(ModuleOp module, const char *json,
                           std::string &error) {
  if (!json || !*json)
    return success();
  auto parsed = kjit::rt::parseJson(json);
  if (!parsed.ok() || !parsed->isObject()) {
    error = "the global values are not a JSON object";
    return failure();
  }
  for (const kjit::rt::JsonMember &member : parsed->members()) {
    auto global = module.lookupSymbol<kjit::GlobalOp>(member.key);
    StringRef text =
        member.value.isString() ? StringRef(member.value.text()) : StringRef();
    APInt bits;
    if (!global || !text.consume_front("0x") || text.getAsInteger(16, bits)) {
      error = "bad global value for '" + member.key + "'";
      return failure();
    }
    Type type = global.getType();
    unsigned width = type.getIntOrFloatBitWidth();
    if (bits.getActiveBits() > width) {
      error = "global '" + member.key + "' does not fit its type";
      return failure();
    }
    bits = bits.zextOrTrunc(width);
    if (auto floatType = dyn_cast<FloatType>(type))
      global.setValueAttr(
          FloatAttr::get(type, APFloat(floatType.getFloatSemantics(), bits)));
    else
      global.setValueAttr(IntegerAttr::get(type, bits));
  }
  return success();
}

int compile(const kjit_compile_request *request, char **artifact,
            size_t *artifactSize, char **metadata, char **error) {
  CompileSession session;
  const kjit::Target *target = kjit::lookupTarget(request->target);
  if (!target) {
    std::string known;
    for (const std::string &name : kjit::getRegisteredTargetNames())
      known += (known.empty() ? "" : ", ") + name;
    return session.fail(error, std::string("unknown target '") +
                                   request->target + "' (registered: " + known +
                                   ")");
  }
  OwningOpRef<ModuleOp> module =
      session.parse(request->ir, request->ir_size, request->source_name);
  if (!module)
    return session.fail(error, "cannot parse the kernel module");
  std::string message;
  if (failed(applyGlobals(*module, request->globals_json, message)))
    return session.fail(error, message);

  auto kernel = module->lookupSymbol<kjit::KernelOp>(request->kernel);
  if (!kernel)
    return session.fail(error, std::string("no kernel named '") +
                                   request->kernel + "'");
  auto record = kjit::rt::specializationFromJson(request->record_json);
  if (!record.ok())
    return session.fail(error, "bad specialization record: " +
                                   std::string(record.status().message()));

  // The registered pipeline (kjit-<target>-pipeline replays it in kjit-opt).
  kjit::KernelPipelineOptions options;
  options.kernel = request->kernel;
  options.target = kjit::getTargetOptions(*record);
  options.target.debug |= request->debug != 0;
  options.record = std::make_shared<const kjit::rt::SpecializationRecord>(
      std::move(*record));
  PassManager pm(&session.context);
  kjit::buildKernelPipeline(pm, *target, options);
  // Which pass failed decides the message.
  struct FirstFailure : PassInstrumentation {
    explicit FirstFailure(std::string &pass) : pass(pass) {}
    void runAfterPassFailed(Pass *failedPass, Operation *) override {
      if (pass.empty())
        pass = failedPass->getArgument().str();
    }
    std::string &pass;
  };
  std::string failedPass;
  pm.addInstrumentation(std::make_unique<FirstFailure>(failedPass));
  if (failed(pm.run(*module)))
    return session.fail(
        error, failedPass == "kjit-specialize"
                   ? "cannot specialize '" + options.kernel + "'"
                   : "cannot lower '" + options.kernel + "' for target '" +
                         target->name().str() + "'");

  // KJIT_DUMP_LOWERED_IR=<dir>: the lowered module as <dir>/<kernel>.mlir,
  // as kjit-opt --kjit-<target>-pipeline prints it (docs/Runtime.md).
  if (const char *dir = std::getenv("KJIT_DUMP_LOWERED_IR"); dir && *dir) {
    llvm::SmallString<256> path(dir);
    std::error_code ec = llvm::sys::fs::create_directories(path);
    llvm::sys::path::append(path, options.kernel + ".mlir");
    std::optional<llvm::raw_fd_ostream> os;
    if (!ec)
      os.emplace(path, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return session.fail(error, "cannot write the lowered IR to '" +
                                     path.str().str() + "': " + ec.message());
    module->print(*os);
    *os << '\n';
  }

  llvm::Expected<kjit::TargetArtifact> built =
      target->emitArtifact(*module, options.target);
  if (!built)
    return session.fail(error, llvm::toString(built.takeError()));
  *artifact = static_cast<char *>(std::malloc(built->bytes.size()));
  std::memcpy(*artifact, built->bytes.data(), built->bytes.size());
  *artifactSize = built->bytes.size();
  *metadata = copyString(built->metadataJson);
  return 0;
}

const kjit_compiler_api kApi = {KJIT_COMPILER_API_VERSION, analyze, compile,
                                std::free};

} // namespace

extern "C" const kjit_compiler_api *kjit_compiler_get_api(void) {
  return &kApi;
}
