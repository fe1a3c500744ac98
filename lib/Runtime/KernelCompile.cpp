//===- KernelCompile.cpp - a miss: key, hooks, compiler, backend ----------===//
//
// What a miss does once per key: the cache key (one digest over everything
// the code depends on), the cache hook, the compiler, the backend's finalize
// and load, and the compiled hook.
//
//===----------------------------------------------------------------------===//

#include "CacheKey.h"
#include "KernelImpl.h"
#include "RemoteCache.h"
#include "kjit/Cache/DiskCache.h"
#include "kjit/Model/ArgEncoding.h"
#include "kjit/Model/CompileJson.h"
#include "kjit/Model/Json.h"
#include "kjit/Runtime/BuildConfig.h"

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"

#include <chrono>
#include <cstring>

namespace kjit::rt {

using kjit::strCat;

/// The dynamic shared memory a compiled kernel's launches provide, from its
/// target's metadata (may be null): its `shared_dynamic_bytes`, 0 without
/// one; nullopt when that is not a count of at most 4 GiB.
static std::optional<uint32_t>
dynamicSharedBytes(const JsonValue *targetMetadata) {
  const JsonValue *bytes = targetMetadata && targetMetadata->isObject()
                               ? targetMetadata->find("shared_dynamic_bytes")
                               : nullptr;
  if (!bytes)
    return 0;
  std::optional<Int128> value = bytes->asInteger();
  if (!value || *value < 0 || *value > Int128(UINT32_MAX))
    return std::nullopt;
  return static_cast<uint32_t>(*value);
}

/// `object` (the compiler's metadata: a JSON object, or empty; `parsed`
/// is it parsed) with the field `key` added, its value `value` (JSON);
/// `object` itself when `value` is empty or `object` has the field already.
static std::string withField(const std::string &object,
                             const absl::StatusOr<JsonValue> &parsed,
                             std::string_view key, std::string_view value) {
  if (value.empty())
    return object;
  std::string field;
  JsonWriter(field).beginObject().key(key).raw(value).endObject();
  if (!parsed.ok() || !parsed->isObject() || parsed->members().empty())
    return field;
  if (parsed->find(key))
    return object;
  // Both are objects: the members of one, then the other's.
  std::string_view head(object);
  head = head.substr(0, head.find_last_of('}'));
  return strCat(head, ",", std::string_view(field).substr(1));
}

absl::Status Kernel::Impl::checkBlock(const SpecializationRecord &record,
                                      int32_t device) {
  const absl::StatusOr<const Backend *> &backend = getBackend();
  if (!backend.ok())
    return absl::OkStatus(); // the compile reports it
  absl::StatusOr<const DeviceDescription *> described =
      module->runtime->device(**backend, device);
  if (!described.ok())
    return absl::OkStatus(); // the compile reports it
  const uint32_t limit = (*described)->maxThreadsPerBlock;
  const int64_t threads = int64_t{32} * record.options.numWarps();
  if (limit == 0 || threads <= int64_t(limit))
    return absl::OkStatus();
  return absl::InvalidArgumentError(strCat(
      "kernel '", manifest.name, "': num_warps=", record.options.numWarps(),
      " means ", threads, " threads per block, but device ", device,
      " allows at most ", limit));
}

void Kernel::Impl::compile(Entry &entry, const SpecializationRecord &record,
                           bool isWarmup, int32_t device) {
  auto finish = [&](Entry::State state, absl::Status error = {}) {
    std::lock_guard<std::mutex> lock(entry.mutex);
    entry.error = std::move(error);
    entry.compilingThread.store(std::thread::id(), std::memory_order_release);
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
  // The device's own description, not device 0's: two devices of one
  // backend may differ in arch (and the compile options that follow it),
  // and the key, the compile and the stored entry must all be for the
  // device this entry is loaded on (docs/MultiDevice.md).
  absl::StatusOr<const DeviceDescription *> described =
      module->runtime->device(**backend, device);
  if (!described.ok())
    return finish(Entry::State::Failed, described.status());
  const DeviceDescription &forDevice = **described;
  absl::StatusOr<std::string> fingerprint =
      module->runtime->fingerprint(**backend, device);
  if (!fingerprint.ok())
    return finish(Entry::State::Failed, fingerprint.status());
  // One digest over everything the code depends on (CacheKey.h): the kjit
  // build (runtime and compiler, by build id), the environment variables
  // that change code, the backend's target and the device's description
  // (arch, formats, compile options) and fingerprint (toolchain, arch, CPU
  // features; no device identity, so that two devices of one kind share
  // disk entries), the kernel's dependency
  // key, the specialization and the baked global values (they may differ
  // from the ones the dependency key was computed with when the host
  // changed a global before the first launch). The memory cache, the hooks
  // and the disk cache all know the entry by it.
  Runtime &runtime = *module->runtime;
  std::vector<std::pair<std::string, uint64_t>> bakedGlobals;
  for (size_t i = 0; i < usedGlobals.size(); ++i)
    bakedGlobals.emplace_back(usedGlobals[i], baked[i]);
  ArtifactKeyInputs keyInputs;
  keyInputs.buildIdentity = runtime.buildIdentity();
  keyInputs.environment = runtime.codegenEnvironment();
  keyInputs.compilerExtensions = runtime.compilerExtensions();
  keyInputs.target = (*backend)->target;
  keyInputs.arch = forDevice.arch;
  keyInputs.formats = forDevice.formats;
  keyInputs.compileOptions = forDevice.compileOptions;
  keyInputs.fingerprint = *fingerprint;
  keyInputs.dependencyKey = dependencyKey;
  keyInputs.specializationKey = record.key;
  keyInputs.globals = bakedGlobals;
  // A debug compile writes the file's name into the code (assert messages,
  // line tables): the same file elsewhere must not hit it.
  if (record.options.debug())
    keyInputs.embeddedSourceName = module->sourceName;
  entry.key = artifactKey(keyInputs);
  for (size_t i = 0; i < record.params.size(); ++i) {
    if (record.params[i].isConstexpr)
      continue;
    entry.launchParams.push_back(
        Entry::LaunchParam{uint32_t(i), record.params[i].type});
    entry.launchTypes.push_back(toString(record.params[i].type));
  }
  for (size_t j = 0; j < entry.launchParams.size(); ++j) {
    kjit_arg arg;
    std::memset(&arg, 0, sizeof(arg));
    arg.struct_size = sizeof(arg);
    const std::string &name = manifest.params[entry.launchParams[j].index].name;
    arg.name = name.data();
    arg.name_len = name.size();
    arg.type = entry.launchTypes[j].data();
    arg.type_len = entry.launchTypes[j].size();
    // What the signature type fixes (dtype, flags, size) is encoded once
    // here; a launch fills in the value.
    if (absl::Status encodable =
            encodeSignature(entry.launchParams[j].type, arg);
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
  if (runtime.logsRecompiles()) {
    CompileFacts what;
    what.record = &record;
    what.globals = &bakedGlobals;
    what.device = device;
    what.fingerprint = *fingerprint;
    what.sourceDigests = &sourceDigests;
    std::string why = runtime.recompileHistory().add(
        module->sourceName, manifest.name, specializationFacts(what));
    if (!why.empty())
      host.log(plugin::LogLevel::Info, "kjit", why);
  }
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

  // Memory missed; then the disk, the fleet cache and the compiler. One
  // process compiles a key at a time: the others wait for its lock and find
  // its entry. A miss is counted once, by the look after the lock, so that
  // misses are the lookups that ended in a compile (or a remote hit).
  cache::DiskCache *disk = runtime.diskCache();
  cache::DiskCache::KeyLock lock;
  if (disk) {
    if (loadFromDisk(*disk, entry, device, **backend, forDevice,
                     /*countMiss=*/false))
      return finish(Entry::State::Ready);
    lock = disk->lock(entry.key);
    if (loadFromDisk(*disk, entry, device, **backend, forDevice,
                     /*countMiss=*/true))
      return finish(Entry::State::Ready);
  }
  RemoteCache *remote = runtime.remoteCache();
  bool remoteReplaceable = false;
  if (remote && loadFromRemote(*remote, disk, entry, device, **backend,
                               forDevice, remoteReplaceable))
    return finish(Entry::State::Ready);

  absl::StatusOr<CompilerService *> compiler = runtime.compiler();
  if (!compiler.ok())
    return finish(Entry::State::Failed, compiler.status());
  if (absl::Status parsed = module->ensureBytecode(); !parsed.ok())
    return finish(Entry::State::Failed, parsed);
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
  request.acceptedFormats = forDevice.formats;
  request.arch = forDevice.arch;
  request.backendOptions = forDevice.compileOptions;
  absl::StatusOr<CompiledArtifact> artifact = (*compiler)->compile(request);
  if (!artifact.ok())
    // The code stays the compiler's: a fault of the user's kernel and one of
    // the compiler read differently.
    return finish(Entry::State::Failed,
                  absl::Status(artifact.status().code(),
                               strCat("compiling ", repr, " failed: ",
                                      statusText(artifact.status()))));

  std::string finalizeInfo;
  absl::StatusOr<std::string> loadable = (*backend)->ref.finalize(
      device, artifact->format, artifact->bytes, manifest.name,
      /*options=*/nullptr, &finalizeInfo);
  if (!loadable.ok())
    return finish(Entry::State::Failed, loadable.status());
  // What the backend learned (registers, spills) joins what the compiler
  // said, for the compiled hook and the caches.
  absl::StatusOr<JsonValue> compilerMetadata =
      parseJson(artifact->metadataJson);
  std::string metadataJson = withField(artifact->metadataJson, compilerMetadata,
                                       "finalize", finalizeInfo);
  absl::StatusOr<plugin::BackendRef::LoadedKernel> loaded =
      loadEntry(**backend, device, *loadable, entry);
  if (!loaded.ok())
    return finish(Entry::State::Failed, loaded.status());
  if (compilerMetadata.ok())
    entry.sharedMemoryBytes =
        dynamicSharedBytes(&*compilerMetadata).value_or(0);
  compiles.fetch_add(1, std::memory_order_relaxed);
  uint64_t compileNanos =
      uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now() - start)
                   .count());

  // Stored only once it loaded: an entry on disk (or in the fleet cache) is
  // one the backend took.
  if (disk || remote) {
    if (disk)
      disk->count(cache::Counter::Compiles);
    cache::EntryData stored;
    stored.kind = cache::EntryKind::Artifact;
    stored.key = entry.key;
    stored.createdNanos =
        uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count());
    JsonWriter json(stored.metadata);
    json.beginObject()
        .key("kernel")
        .string(manifest.name)
        .key("target")
        .string((*backend)->target)
        .key("arch")
        .string(forDevice.arch)
        .key("format")
        .string(artifact->format)
        .key("source")
        .string(module->sourceName)
        .key("specialization")
        .string(repr)
        .key("kjit")
        .string(kBuildVersion)
        .key("compile_ns")
        .integer(Int128(compileNanos))
        .key("compiler");
    if (metadataJson.empty())
      json.null();
    else
      json.raw(metadataJson);
    json.endObject();
    stored.payload = std::move(*loadable);
    if (disk)
      disk->put(stored);
    if (remote)
      remote->publish(std::move(stored), /*replace=*/remoteReplaceable);
  }
  lock = {};

  plugin::CompiledInfo compiled;
  compiled.artifactFormat = artifact->format;
  compiled.artifact = artifact->bytes;
  compiled.metadataJson = metadataJson;
  compiled.compileNanos = compileNanos;
  host.runCompiledHook(info, compiled);
  finish(Entry::State::Ready);
}

absl::StatusOr<plugin::BackendRef::LoadedKernel>
Kernel::Impl::loadEntry(const Backend &backend, int32_t device,
                        std::string_view loadable, Entry &entry) {
  absl::InlinedVector<const kjit_arg *, 8> argTemplate;
  for (const kjit_arg &arg : entry.argTemplate)
    argTemplate.push_back(&arg);
  absl::StatusOr<plugin::BackendRef::LoadedKernel> loaded =
      backend.ref.load(device, loadable, manifest.name, argTemplate);
  if (loaded.ok()) {
    entry.backendKernel = loaded->kernel;
    entry.takesValues = loaded->takesValues;
    entry.backend = &backend;
  }
  return loaded;
}

bool Kernel::Impl::loadCached(const cache::EntryData &cached, Entry &entry,
                              int32_t device, const Backend &backend,
                              const DeviceDescription &forDevice,
                              std::string &why) {
  // The key covers all of this; checking costs nothing and catches a key
  // that someday does not.
  absl::StatusOr<JsonValue> metadata = parseJson(cached.metadata);
  auto field = [&](const char *name) -> std::string {
    const JsonValue *value =
        metadata.ok() && metadata->isObject() ? metadata->find(name) : nullptr;
    return value && value->isString() ? value->text() : std::string("?");
  };
  if (!metadata.ok() || field("kernel") != manifest.name ||
      field("target") != backend.target || field("arch") != forDevice.arch) {
    why = metadata.ok() ? strCat("it holds kernel '", field("kernel"), "' for ",
                                 field("target"), "/", field("arch"), ", not '",
                                 manifest.name, "' for ", backend.target, "/",
                                 forDevice.arch)
                        : strCat("its metadata is not JSON: ",
                                 statusText(metadata.status()));
    return false;
  }
  std::optional<uint32_t> sharedBytes =
      dynamicSharedBytes(metadata->find("compiler"));
  if (!sharedBytes) {
    why = "its shared_dynamic_bytes is not a byte count";
    return false;
  }
  absl::StatusOr<plugin::BackendRef::LoadedKernel> loaded =
      loadEntry(backend, device, cached.payload, entry);
  if (!loaded.ok()) {
    why = strCat("the backend cannot load it: ", statusText(loaded.status()));
    return false;
  }
  entry.sharedMemoryBytes = *sharedBytes;
  return true;
}

bool Kernel::Impl::loadFromDisk(cache::DiskCache &disk, Entry &entry,
                                int32_t device, const Backend &backend,
                                const DeviceDescription &forDevice,
                                bool countMiss) {
  cache::DiskCache::Lookup lookup =
      disk.get(cache::EntryKind::Artifact, entry.key, countMiss);
  if (lookup.result != cache::DiskCache::Lookup::Result::Hit)
    return false;
  std::string why;
  if (!loadCached(lookup.entry, entry, device, backend, forDevice, why)) {
    disk.reject(entry.key, why);
    return false;
  }
  entry.origin = Entry::Origin::Disk;
  diskHits.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool Kernel::Impl::loadFromRemote(RemoteCache &remote, cache::DiskCache *disk,
                                  Entry &entry, int32_t device,
                                  const Backend &backend,
                                  const DeviceDescription &forDevice,
                                  bool &replaceable) {
  // Verified (signature, echo, digest, entry checksum) before anything of
  // it reaches the loader or the disk.
  std::optional<cache::EntryData> cached = remote.get(entry.key, &replaceable);
  if (!cached)
    return false;
  std::string why;
  if (!loadCached(*cached, entry, device, backend, forDevice, why)) {
    // It verified, so a fleet member signed it: one that loads replaces it.
    replaceable = true;
    remote.reject(entry.key, why);
    return false;
  }
  remote.hit();
  if (disk)
    disk->put(*cached);
  entry.origin = Entry::Origin::Remote;
  remoteHits.fetch_add(1, std::memory_order_relaxed);
  return true;
}

} // namespace kjit::rt
