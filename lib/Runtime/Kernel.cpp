//===- Kernel.cpp - binding, caching, compiling and launching -------------===//
//
// The hit path: bind (no allocation), one atomic load for the globals check,
// a lock-free lookup of the per-device cache (read-copy-update), and the
// backend's launch. Hooks cost one atomic load each when no plugin has them.
//
//===----------------------------------------------------------------------===//

#include "Digest.h"
#include "RuntimeImpl.h"
#include "kjit/Model/CompileJson.h"
#include "kjit/Runtime/BuildConfig.h"
#include "kjit/Support/StrCat.h"

#include "kjit/Plugin/PluginHost.h"
#include "kjit/Model/ArgEncoding.h"

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>

namespace kjit::rt {

Argument reinterpret(const Argument &tensor, DType dtype) {
  if (tensor.kind() != ArgKind::Tensor)
    return tensor;
  Argument result =
      tensor.isMock()
          ? Argument::mockTensor(dtype, tensor.isReadOnly())
          : Argument::tensor(tensor.address(), dtype, tensor.isReadOnly());
  return result;
}

namespace {

using kjit::strAppend;
using kjit::strCat;

std::string statusText(const absl::Status &status) {
  return std::string(status.message().data(), status.message().size());
}

/// One compiled specialization. Created pending by the first thread that
/// misses; the others wait for it (single flight).
struct Entry {
  enum class State { Pending, Ready, Failed, Skipped };
  std::mutex mutex;
  std::condition_variable ready;
  /// Written once, with release, after every other field is set; readers
  /// load it with acquire before touching them.
  std::atomic<State> state{State::Pending};
  absl::Status error;
  void *backendKernel = nullptr;
  /// Manifest indices of the arguments passed at launch, with their
  /// signature types.
  std::vector<size_t> launchParams;
  std::vector<std::string> launchTypes;
  /// The ABI form of the launch arguments with everything but the values
  /// filled in; each launch copies it and sets the values.
  std::vector<kjit_arg> argTemplate;
  std::string key;
};

using Cache = absl::flat_hash_map<SpecializationKey, std::shared_ptr<Entry>,
                                  KeyHash, KeyEq>;

/// Devices a kernel can be cached for.
constexpr int32_t kMaxDevices = 16;

absl::Status checkDevice(int32_t device) {
  if (device >= 0 && device < kMaxDevices)
    return absl::OkStatus();
  return absl::InvalidArgumentError(strCat(
      "device ", device, " is out of range (0 to ", kMaxDevices - 1, ")"));
}

/// A unique id per kernel, so that per-thread state never confuses a
/// destroyed kernel with a new one at the same address.
std::atomic<uint64_t> nextKernelId{1};

} // namespace

struct Kernel::Impl {
  Module::Impl *module;
  uint64_t id = nextKernelId.fetch_add(1);
  KernelManifest manifest;
  std::optional<BindPlan> plan;
  std::string dependencyKey;
  /// The globals the kernel reads, with the bits it bakes in: the values at
  /// its first launch (or warmup, or preload), as the reference records
  /// them when it first computes a kernel's key.
  std::vector<std::string> usedGlobals;
  std::vector<uint64_t> bakedBits;
  bool baked = false;
  std::atomic<uint64_t> checkedVersion{UINT64_MAX};
  std::mutex globalsMutex;
  GlobalChangePolicy policy = GlobalChangePolicy::Error;

  /// Read-copy-update caches, one per device: a hit is an atomic load and
  /// a lookup in an immutable map, with no lock and no shared write (two
  /// threads launching the same kernel do not contend). A miss copies the
  /// map under `cacheWriteMutex` and publishes the copy; replaced maps are
  /// retired, not freed, so a reader never sees a freed map or entry.
  std::array<std::atomic<const Cache *>, kMaxDevices> caches{};
  std::mutex cacheWriteMutex;
  std::vector<std::unique_ptr<const Cache>> retiredCaches;
  /// Every entry ever created, so that loaded kernels are unloaded when the
  /// kernel goes away (entries dropped by a recompile may still be running
  /// on other threads until then).
  std::vector<std::shared_ptr<Entry>> allEntries;
  /// The runtime's backend, found once and kept (the runtime owns it).
  std::once_flag backendOnce;
  absl::StatusOr<const Backend *> backend = nullptr;
  /// The runtime's plugin host.
  plugin::PluginHost *host = nullptr;

  std::function<std::string(absl::Span<const Argument>)> launchMetadata;
  /// Only compiles are counted: a counter written on every launch would be
  /// a write shared by every launching thread (LaunchResult says whether a
  /// launch compiled).
  std::atomic<uint64_t> compiles{0};

  Binding &threadBinding();
  absl::Status checkGlobals();
  Entry *findOrInsert(int32_t device, KeyView key, bool &inserted);
  /// Removes a failed or skipped entry (after its waiters were told), so
  /// that the next launch asks the cache hook and compiles again, as the
  /// reference does on every miss.
  void forget(int32_t device, KeyView key);
  void clearCaches();
  const absl::StatusOr<const Backend *> &getBackend();
  void compile(Entry &entry, const SpecializationRecord &record, bool isWarmup,
               int32_t device);
  absl::Status waitFor(Entry &entry);
  /// The entry of `key` on `device`, ready or failed: the miss path (cache
  /// hook, compile, load) runs here once per key however many threads ask;
  /// the others wait. A failed or skipped entry is forgotten again.
  /// `record` is called only on a miss. `compiled` tells whether this call
  /// compiled.
  template <typename RecordFn>
  Entry *ensureEntry(int32_t device, KeyView key, RecordFn &&record,
                     bool isWarmup, absl::Status &status, bool *compiled);
  absl::Status launchEntry(const Entry &entry, const Binding &binding,
                           const LaunchConfig &config);
};

/// How deep this thread is in launches: a launch from a hook, the grid
/// callback or the launch-metadata callback is a nested one.
thread_local int launchDepth = 0;

Binding &Kernel::Impl::threadBinding() {
  // Each thread binds into its own storage, sized once per kernel. (Entries
  // of destroyed kernels stay until the thread exits: a few bytes each.)
  thread_local absl::flat_hash_map<uint64_t, Binding> bindings;
  auto it = bindings.find(id);
  if (it == bindings.end())
    it = bindings.emplace(id, plan->makeBinding()).first;
  return it->second;
}

absl::Status Kernel::Impl::checkGlobals() {
  uint64_t version = module->globalsVersion.load(std::memory_order_acquire);
  if (version == checkedVersion.load(std::memory_order_acquire))
    return absl::OkStatus();
  std::lock_guard<std::mutex> lock(globalsMutex);
  std::lock_guard<std::mutex> globalsLock(module->globalsMutex);
  std::vector<uint64_t> current;
  for (const std::string &name : usedGlobals)
    current.push_back(module->globals[module->globalIndex.at(name)].bits);
  if (!baked) {
    bakedBits = current;
    baked = true;
  }
  for (size_t i = 0; i < usedGlobals.size(); ++i) {
    if (current[i] == bakedBits[i])
      continue;
    const GlobalSlot &slot =
        module->globals[module->globalIndex.at(usedGlobals[i])];
    if (policy == GlobalChangePolicy::Error)
      return absl::FailedPreconditionError(
          strCat("Global variable ", usedGlobals[i],
                 " has changed since we compiled this kernel, from ",
                 formatGlobalValue(slot.type, bakedBits[i]), " to ",
                 formatGlobalValue(slot.type, current[i])));
    // Recompile: the new values are baked first, then the entries baked
    // with the old ones are dropped, so an entry in the new maps never
    // holds old values. (A launch racing with the change may still run an
    // old entry once.)
    bakedBits = current;
    clearCaches();
    break;
  }
  checkedVersion.store(version, std::memory_order_release);
  return absl::OkStatus();
}

Entry *Kernel::Impl::findOrInsert(int32_t device, KeyView key, bool &inserted) {
  inserted = false;
  if (const Cache *cache = caches[device].load(std::memory_order_acquire)) {
    auto it = cache->find(key);
    if (it != cache->end())
      return it->second.get();
  }
  std::lock_guard<std::mutex> lock(cacheWriteMutex);
  const Cache *current = caches[device].load(std::memory_order_acquire);
  if (current) {
    auto it = current->find(key);
    if (it != current->end()) // another thread inserted it meanwhile
      return it->second.get();
  }
  auto next =
      current ? std::make_unique<Cache>(*current) : std::make_unique<Cache>();
  auto entry = std::make_shared<Entry>();
  allEntries.push_back(entry);
  next->emplace(SpecializationKey(key), entry);
  caches[device].store(next.get(), std::memory_order_release);
  retiredCaches.push_back(std::move(next));
  inserted = true;
  return entry.get();
}

void Kernel::Impl::forget(int32_t device, KeyView key) {
  std::lock_guard<std::mutex> lock(cacheWriteMutex);
  const Cache *current = caches[device].load(std::memory_order_acquire);
  if (!current || !current->contains(key))
    return;
  auto next = std::make_unique<Cache>(*current);
  next->erase(next->find(key));
  caches[device].store(next.get(), std::memory_order_release);
  retiredCaches.push_back(std::move(next));
}

void Kernel::Impl::clearCaches() {
  std::lock_guard<std::mutex> lock(cacheWriteMutex);
  for (auto &cache : caches)
    cache.store(nullptr, std::memory_order_release);
}

const absl::StatusOr<const Backend *> &Kernel::Impl::getBackend() {
  std::call_once(backendOnce, [&] { backend = module->runtime->backend(); });
  return backend;
}

template <typename RecordFn>
Entry *Kernel::Impl::ensureEntry(int32_t device, KeyView key,
                                 RecordFn &&record, bool isWarmup,
                                 absl::Status &status, bool *compiled) {
  bool inserted;
  Entry *entry = findOrInsert(device, key, inserted);
  if (inserted) {
    compile(*entry, record(), isWarmup, device);
    if (compiled)
      *compiled =
          entry->state.load(std::memory_order_acquire) == Entry::State::Ready;
  }
  status = absl::OkStatus();
  if (entry->state.load(std::memory_order_acquire) == Entry::State::Ready)
    return entry;
  status = waitFor(*entry);
  if (inserted &&
      entry->state.load(std::memory_order_acquire) != Entry::State::Ready)
    forget(device, key);
  return entry;
}

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

absl::Status Kernel::Impl::waitFor(Entry &entry) {
  std::unique_lock<std::mutex> lock(entry.mutex);
  entry.ready.wait(lock, [&] {
    return entry.state.load(std::memory_order_acquire) !=
           Entry::State::Pending;
  });
  return entry.error;
}

absl::Status Kernel::Impl::launchEntry(const Entry &entry,
                                       const Binding &binding,
                                       const LaunchConfig &config) {
  const Backend &backend = **getBackend(); // the entry was compiled for it
  absl::Span<const Argument> bound = binding.arguments();
  Grid grid = config.gridFn ? config.gridFn(bound) : config.grid;
  for (int axis = 0; axis < 3; ++axis)
    if (grid[axis] == 0)
      return absl::InvalidArgumentError(strCat(
          "grid dimension ", "xyz"[axis], " of a launch of '", manifest.name,
          "' is 0; every dimension needs at least one program"));

  // The launch arguments in the ABI's form: the entry's template with this
  // launch's values, on this call's stack (no allocation up to 8 arguments,
  // and a launch from a hook or callback cannot overwrite them).
  absl::InlinedVector<kjit_arg, 8> cArgs(entry.argTemplate.begin(),
                                         entry.argTemplate.end());
  absl::InlinedVector<const kjit_arg *, 8> cPointers(cArgs.size());
  for (size_t j = 0; j < cArgs.size(); ++j) {
    size_t param = entry.launchParams[j];
    kjit_arg &arg = cArgs[j];
    cPointers[j] = &arg;
    // The storage bits of the signature type the binder chose (the entry's
    // own: the binding's key selected it), and ABI 1.0's kind and value.
    if (absl::Status encoded =
            encodeArgument(binding.type(param), bound[param], arg);
        !encoded.ok())
      return absl::Status(encoded.code(),
                          strCat("argument '", manifest.params[param].name,
                                 "' of kernel '", manifest.name,
                                 "': ", statusText(encoded)));
  }
  kjit_backend_launch_args launch;
  std::memset(&launch, 0, sizeof(launch));
  launch.struct_size = sizeof(launch);
  launch.kernel = entry.backendKernel;
  for (int axis = 0; axis < 3; ++axis)
    launch.grid[axis] = grid[axis];
  launch.num_warps = uint32_t(binding.options().numWarps());
  launch.stream = config.stream;
  launch.num_args = cArgs.size();
  launch.args = cPointers.data();
  const LaunchOptions &options = binding.options();
  launch.flags = (options.flag(LaunchOption::LaunchCooperativeGrid)
                      ? KJIT_LAUNCH_COOPERATIVE
                      : 0) |
                 (options.flag(LaunchOption::LaunchPdl) ? KJIT_LAUNCH_PDL : 0);

  if (!host->hasLaunchHooks() && !launchMetadata)
    return backend.ref.launchPrepared(launch);

  // With hooks, the launch is also described to them.
  std::vector<plugin::ArgInfo> args;
  for (const kjit_arg &c : cArgs) {
    plugin::ArgInfo arg;
    arg.name = std::string_view(c.name, c.name_len);
    arg.type = std::string_view(c.type, c.type_len);
    arg.kind = c.kind;
    arg.intValue = c.int_value;
    arg.uintValue = c.uint_value;
    arg.floatValue = c.float_value;
    arg.dtype = c.dtype;
    arg.flags = c.flags;
    arg.bits = c.bits;
    arg.bitsSize = c.bits_size;
    args.push_back(arg);
  }
  std::string metadata;
  if (launchMetadata)
    metadata = strCat("{", launchMetadata(bound), "}");
  plugin::LaunchInfo info;
  info.kernelName = manifest.name;
  info.key = entry.key;
  info.grid = grid;
  info.numWarps = launch.num_warps;
  info.device = config.device;
  info.stream = config.stream;
  info.metadataJson = metadata;
  info.args = args;
  plugin::LaunchRecord record = host->runLaunchEnter(info);
  absl::Status status = backend.ref.launchPrepared(launch);
  host->runLaunchExit(record, info, int32_t(status.raw_code()));
  return status;
}

//===----------------------------------------------------------------------===//
// Kernel
//===----------------------------------------------------------------------===//

absl::StatusOr<std::unique_ptr<Kernel>>
makeKernel(Module::Impl *module, KernelManifest manifest,
           std::string dependencyKey, std::vector<std::string> usedGlobals) {
  auto impl = std::make_unique<Kernel::Impl>();
  impl->module = module;
  impl->host = &module->runtime->plugins();
  absl::StatusOr<BindPlan> plan = BindPlan::create(
      manifest, module->runtime->defaultLaunchOptions());
  if (!plan.ok())
    return plan.status();
  impl->plan.emplace(std::move(*plan));
  impl->manifest = std::move(manifest);
  impl->dependencyKey = std::move(dependencyKey);
  for (const std::string &name : usedGlobals)
    if (!module->globalIndex.contains(name))
      return absl::InternalError(strCat("kernel '", impl->manifest.name,
                                        "' reads unknown global '", name, "'"));
  impl->usedGlobals = std::move(usedGlobals);
  return std::unique_ptr<Kernel>(new Kernel(std::move(impl)));
}

Kernel::Kernel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Kernel::~Kernel() {
  if (impl_->allEntries.empty())
    return;
  const absl::StatusOr<const Backend *> &backend = impl_->getBackend();
  if (!backend.ok())
    return;
  for (const std::shared_ptr<Entry> &entry : impl_->allEntries)
    if (entry->state.load(std::memory_order_acquire) == Entry::State::Ready)
      (void)(*backend)->ref.unload(entry->backendKernel);
}

const KernelManifest &Kernel::manifest() const { return impl_->manifest; }
const std::string &Kernel::dependencyKey() const {
  return impl_->dependencyKey;
}

absl::StatusOr<LaunchResult>
Kernel::launch(const LaunchConfig &config,
               absl::Span<const Argument> positional,
               absl::Span<const KeywordArgument> keywords) {
  Impl &impl = *impl_;
  plugin::PluginHost &host = *impl.host;
  if (host.hasPreRunHooks()) {
    std::vector<plugin::ArgInfo> seen;
    std::vector<std::string> types;
    types.reserve(positional.size() + keywords.size());
    for (const Argument &value : positional)
      types.push_back(describeArgument(value));
    for (const KeywordArgument &keyword : keywords)
      types.push_back(describeArgument(keyword.value));
    for (size_t i = 0; i < types.size(); ++i) {
      bool isKeyword = i >= positional.size();
      const Argument &value =
          isKeyword ? keywords[i - positional.size()].value : positional[i];
      plugin::ArgInfo arg;
      arg.name =
          isKeyword ? keywords[i - positional.size()].name : std::string_view();
      arg.type = types[i];
      switch (value.kind()) {
      case ArgKind::Bool:
        arg.kind = KJIT_ARG_BOOL;
        arg.intValue = value.asBool();
        break;
      case ArgKind::Int:
        // Beyond 64 bits the binder will refuse it; the hook sees the type.
        if (value.asInt() >= INT64_MIN && value.asInt() <= INT64_MAX) {
          arg.kind = KJIT_ARG_INT;
          arg.intValue = int64_t(value.asInt());
        }
        break;
      case ArgKind::Float:
        arg.kind = KJIT_ARG_FLOAT;
        arg.floatValue = value.asFloat();
        break;
      case ArgKind::Tensor:
        arg.kind = KJIT_ARG_POINTER;
        arg.uintValue = value.address();
        break;
      default:
        break; // None, a dtype, a callable: described by the type text
      }
      seen.push_back(arg);
    }
    host.runPreRunHooks(impl.manifest.name, seen);
  }

  // The outermost launch of a thread binds into reusable per-thread
  // storage; a nested one (from a callback or hook) into its own.
  struct Depth {
    Depth() { ++launchDepth; }
    ~Depth() { --launchDepth; }
  } depth;
  std::optional<Binding> nested;
  if (launchDepth > 1)
    nested.emplace(impl.plan->makeBinding());
  Binding &binding = nested ? *nested : impl.threadBinding();
  if (absl::Status bound = impl.plan->bind(positional, keywords, binding);
      !bound.ok())
    return bound;
  if (absl::Status globals = impl.checkGlobals(); !globals.ok())
    return globals;

  if (absl::Status valid = checkDevice(config.device); !valid.ok())
    return valid;
  LaunchResult result;
  absl::Status status;
  Entry *entry = impl.ensureEntry(
      config.device, binding.key(),
      [&] { return impl.plan->makeRecord(binding); }, /*isWarmup=*/false,
      status, &result.compiled);
  if (!status.ok())
    return status;
  if (entry->state.load(std::memory_order_acquire) == Entry::State::Skipped)
    return result;
  if (absl::Status status = impl.launchEntry(*entry, binding, config);
      !status.ok())
    return status;
  result.launched = true;
  return result;
}

absl::StatusOr<SpecializationRecord>
Kernel::warmup(absl::Span<const Argument> positional,
               absl::Span<const KeywordArgument> keywords, int32_t device) {
  Impl &impl = *impl_;
  Binding binding = impl.plan->makeBinding();
  if (absl::Status bound = impl.plan->bind(positional, keywords, binding);
      !bound.ok())
    return bound;
  if (absl::Status globals = impl.checkGlobals(); !globals.ok())
    return globals;
  SpecializationRecord record = impl.plan->makeRecord(binding);
  if (absl::Status valid = checkDevice(device); !valid.ok())
    return valid;
  absl::Status status;
  impl.ensureEntry(
      device, binding.key(), [&] { return record; }, /*isWarmup=*/true, status,
      /*compiled=*/nullptr);
  if (!status.ok())
    return status;
  return record;
}

absl::Status Kernel::preload(std::string_view recordJson, int32_t device) {
  Impl &impl = *impl_;
  absl::StatusOr<SpecializationRecord> record =
      specializationFromJson(recordJson);
  if (!record.ok())
    return record.status();
  if (record->name != impl.manifest.name)
    return absl::InvalidArgumentError(strCat("the record is for kernel '",
                                             record->name, "', not '",
                                             impl.manifest.name, "'"));
  absl::StatusOr<SpecializationKey> key = impl.plan->keyForRecord(*record);
  if (!key.ok())
    return key.status();
  if (absl::Status globals = impl.checkGlobals(); !globals.ok())
    return globals;
  if (absl::Status valid = checkDevice(device); !valid.ok())
    return valid;
  absl::Status status;
  impl.ensureEntry(
      device, key->view(), [&] { return *record; }, /*isWarmup=*/true, status,
      /*compiled=*/nullptr);
  return status;
}

void Kernel::setGlobalChangePolicy(GlobalChangePolicy policy) {
  std::lock_guard<std::mutex> lock(impl_->globalsMutex);
  impl_->policy = policy;
}

void Kernel::setLaunchMetadata(
    std::function<std::string(absl::Span<const Argument>)> callback) {
  impl_->launchMetadata = std::move(callback);
}

KernelStats Kernel::stats() const { return {impl_->compiles.load()}; }

} // namespace kjit::rt
