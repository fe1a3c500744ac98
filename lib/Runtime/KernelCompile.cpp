//===- KernelCompile.cpp - a miss: key, hooks, compiler, backend ----------===//
//
// What a miss does once per key: the cache key (one digest over everything
// the code depends on), the cache hook, the compiler, the backend's finalize
// and load, and the compiled hook.
//
//===----------------------------------------------------------------------===//

#include "Digest.h"
#include "KernelImpl.h"
#include "kjit/Model/ArgEncoding.h"
#include "kjit/Model/CompileJson.h"
#include "kjit/Runtime/BuildConfig.h"

#include "absl/strings/str_cat.h"

#include <chrono>
#include <cstring>

namespace kjit::rt {

using kjit::strAppend;
using kjit::strCat;

void Kernel::Impl::compile(Entry &entry, const SpecializationRecord &record,
                           bool isWarmup, int32_t device) {
  auto finish = [&](Entry::State state, absl::Status error = {}) {
    std::lock_guard<std::mutex> lock(entry.mutex);
    entry.error = std::move(error);
    entry.state.store(state, std::memory_order_release);
    entry.ready.notify_all();
  };
  auto start = std::chrono::steady_clock::now();
  std::vector<uint64_t> baked;
  {
    std::lock_guard<std::mutex> lock(globalsMutex);
    baked = bakedBits;
  }
  const absl::StatusOr<const Backend *> &backend = getBackend();
  if (!backend.ok())
    return finish(Entry::State::Failed, backend.status());
  absl::StatusOr<std::string> fingerprint =
      module->runtime->fingerprint(**backend, device);
  if (!fingerprint.ok())
    return finish(Entry::State::Failed, fingerprint.status());
  // One digest over everything the code depends on: the kjit build, the
  // backend (its target, formats and fingerprint: toolchain, arch, CPU
  // features), the kernel's dependency key, the specialization and the
  // baked global values (they may differ from the ones the dependency key
  // was computed with when the host changed a global before the first
  // launch).
  KeyDigest digest;
  digest.add("kjit", kBuildVersion);
  digest.add("compiler-service", std::to_string(kCompilerServiceVersion));
  digest.add("target", (*backend)->target);
  digest.add("arch", (*backend)->arch);
  for (const std::string &format : (*backend)->formats)
    digest.add("format", format);
  digest.add("fingerprint", *fingerprint);
  digest.add("dependencies", dependencyKey);
  digest.add("specialization", record.key);
  for (size_t i = 0; i < usedGlobals.size(); ++i)
    digest.add(usedGlobals[i], absl::StrCat(absl::Hex(baked[i])));
  entry.key = digest.finishHex();
  for (size_t i = 0; i < record.params.size(); ++i) {
    if (record.params[i].isConstexpr)
      continue;
    entry.launchParams.push_back(i);
    entry.launchTypes.push_back(toString(record.params[i].type));
  }
  for (size_t j = 0; j < entry.launchParams.size(); ++j) {
    kjit_arg arg;
    std::memset(&arg, 0, sizeof(arg));
    arg.struct_size = sizeof(arg);
    const std::string &name = manifest.params[entry.launchParams[j]].name;
    arg.name = name.data();
    arg.name_len = name.size();
    arg.type = entry.launchTypes[j].data();
    arg.type_len = entry.launchTypes[j].size();
    // What the signature type fixes (dtype, flags, size) is encoded once
    // here; a launch fills in the value.
    if (absl::Status encodable =
            encodeSignature(record.params[entry.launchParams[j]].type, arg);
        !encodable.ok())
      return finish(
          Entry::State::Failed,
          absl::Status(encodable.code(),
                       strCat("parameter '", name, "' of kernel '",
                              manifest.name, "': ", statusText(encodable))));
    entry.argTemplate.push_back(arg);
  }

  plugin::PluginHost &host = *this->host;
  CompileDescription description;
  description.kernel = manifest.name;
  description.key = entry.key;
  description.target = (*backend)->target;
  description.device = device;
  description.isWarmup = isWarmup;
  description.record = &record;
  std::string repr = rt::repr(record), json = compileJson(description);
  plugin::CompileInfo info;
  info.kernelName = manifest.name;
  info.key = entry.key;
  info.repr = repr;
  info.compileJson = json;
  info.target = (*backend)->target;
  info.device = device;
  info.isWarmup = isWarmup;
  if (host.runCacheHook(info) == plugin::CacheDecision::Skip)
    return finish(Entry::State::Skipped);

  absl::StatusOr<CompilerService *> compiler = module->runtime->compiler();
  if (!compiler.ok())
    return finish(Entry::State::Failed, compiler.status());
  // Bake the current values of the globals this kernel checks.
  std::vector<GlobalValue> globals;
  for (size_t i = 0; i < usedGlobals.size(); ++i)
    globals.push_back({usedGlobals[i], baked[i]});
  CompileRequest request;
  request.bytecode = module->bytecode;
  request.sourceName = module->sourceName;
  request.record = &record;
  request.globals = globals;
  request.target = (*backend)->target;
  request.acceptedFormats = (*backend)->formats;
  request.arch = (*backend)->arch;
  request.backendOptions = (*backend)->compileOptions;
  absl::StatusOr<CompiledArtifact> artifact = (*compiler)->compile(request);
  if (!artifact.ok())
    // The code stays the compiler's: a fault of the user's kernel and one of
    // the compiler read differently.
    return finish(Entry::State::Failed,
                  absl::Status(artifact.status().code(),
                               strCat("compiling ", repr, " failed: ",
                                      statusText(artifact.status()))));

  absl::StatusOr<std::string> loadable = (*backend)->ref.finalize(
      device, artifact->format, artifact->bytes, manifest.name);
  if (!loadable.ok())
    return finish(Entry::State::Failed, loadable.status());
  absl::StatusOr<void *> handle =
      (*backend)->ref.load(device, *loadable, manifest.name);
  if (!handle.ok())
    return finish(Entry::State::Failed, handle.status());
  entry.backendKernel = *handle;
  entry.backend = *backend;
  compiles.fetch_add(1, std::memory_order_relaxed);

  plugin::CompiledInfo compiled;
  compiled.artifactFormat = artifact->format;
  compiled.artifact = artifact->bytes;
  compiled.metadataJson = artifact->metadataJson;
  compiled.compileNanos =
      uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now() - start)
                   .count());
  host.runCompiledHook(info, compiled);
  finish(Entry::State::Ready);
}

} // namespace kjit::rt
