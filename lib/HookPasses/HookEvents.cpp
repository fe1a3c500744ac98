//===- HookEvents.cpp - what the hook passes tell plugins -----------------===//

#include "HookEvents.h"
#include "HookPasses.h"

#include "kjit/Analysis/Dependencies.h"
#include "kjit/Model/CompileJson.h"
#include "kjit/Transforms/ApplySpecialization.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;

kjit::plugin::PluginHost &kjit::hookPluginHost() {
  static plugin::PluginHost host;
  return host;
}

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

  rt::CompileDescription description;
  std::string repr;
  llvm::raw_string_ostream os(repr);
  os << info.name << '(';
  for (unsigned i = 0; i < kernel.getNumArguments(); ++i) {
    StringRef name = kernel.getParamName(i);
    if (i)
      os << ", ";
    std::string type = printParamSignatureType(kernel, i);
    if (kernel.hasParamFlag(i, KjitDialect::kConstexprAttrName)) {
      os << name << ": constexpr"; // bound at launch, unknown to the IR
      continue;
    }
    os << name << ": " << type;
    description.signature.emplace_back(name.str(), type);
  }
  os << ')';
  info.repr = std::move(repr);

  // The schema the runtime's hooks see (kjit.compile/1), without a record:
  // the IR alone knows no launch.
  description.kernel = info.name;
  description.key = info.key;
  description.target = std::string_view(target.data(), target.size());
  info.json = rt::compileJson(description);
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
