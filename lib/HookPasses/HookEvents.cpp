//===- HookEvents.cpp - what the hook passes tell plugins -----------------===//

#include "HookEvents.h"

#include "kjit/Analysis/Dependencies.h"
#include "kjit/Transforms/ApplySpecialization.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

FailureOr<kjit::KernelCompileInfo>
kjit::describeKernel(KernelOp kernel, llvm::StringRef target) {
  KernelCompileInfo info;
  info.name = kernel.getSymName().str();
  if (auto key =
          kernel->getAttrOfType<StringAttr>(DependencyAnalysis::kKeyAttrName)) {
    info.key = key.getValue().str();
  } else {
    DependencyAnalysis analysis(kernel->getParentOfType<ModuleOp>());
    FailureOr<const DependencyRecord *> record = analysis.getRecord(kernel);
    if (failed(record))
      return failure();
    info.key = (*record)->key;
  }

  llvm::json::Object signature, constants;
  std::string repr;
  llvm::raw_string_ostream os(repr);
  os << info.name << '(';
  for (unsigned i = 0; i < kernel.getNumArguments(); ++i) {
    StringRef name = kernel.getParamName(i);
    if (i)
      os << ", ";
    std::string type =
        printSignatureType(kernel.getArgumentTypes()[i],
                           kernel.hasParamFlag(i, KjitDialect::kConstAttrName));
    if (kernel.hasParamFlag(i, KjitDialect::kConstexprAttrName)) {
      os << name << ": constexpr";
      constants[name] = nullptr; // bound at launch, unknown to the IR
      continue;
    }
    os << name << ": " << type;
    signature[name] = type;
  }
  os << ')';
  info.repr = std::move(repr);

  llvm::json::Object record{{"name", info.name},
                            {"key", info.key},
                            {"signature", std::move(signature)},
                            {"constants", std::move(constants)},
                            {"target", target.str()}};
  llvm::raw_string_ostream json(info.json);
  json << llvm::json::Value(std::move(record));
  return info;
}

LogicalResult kjit::forEachKernelEvent(
    ModuleOp module, StringRef kernelName, StringRef target,
    function_ref<void(KernelOp, const plugin::CompileInfo &)> fn) {
  for (auto kernel : llvm::make_early_inc_range(module.getOps<KernelOp>())) {
    if (!kernelName.empty() && kernel.getSymName() != kernelName)
      continue;
    FailureOr<KernelCompileInfo> info = describeKernel(kernel, target);
    if (failed(info))
      return failure();
    plugin::CompileInfo event;
    event.kernelName = info->name;
    event.key = info->key;
    event.repr = info->repr;
    event.compileJson = info->json;
    event.target = std::string_view(target.data(), target.size());
    fn(kernel, event);
  }
  return success();
}
