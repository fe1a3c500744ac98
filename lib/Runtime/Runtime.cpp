//===- Runtime.cpp - the runtime object -----------------------------------===//

#include "kjit/Runtime/Runtime.h"

#include "CacheContext.h"
#include "CompilerClient.h"
#include "RecompileLog.h"
#include "kjit/Cache/BuildId.h"
#include "kjit/Model/InputFile.h"
#include "kjit/Runtime/BuildConfig.h"
#include "kjit/Support/StrCat.h"

#include "absl/container/flat_hash_map.h"

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <unistd.h>

namespace kjit::rt {

namespace {

std::string statusText(const absl::Status &status) {
  return std::string(status.message().data(), status.message().size());
}

/// "1" turns a flag on; anything else (or nothing) leaves it off.
bool envFlag(const char *name) {
  const char *value = std::getenv(name);
  return value && std::string_view(value) == "1";
}

/// Whether KJIT_LOG (comma-separated topics) lists `topic`.
bool logsTopic(std::string_view topic) {
  const char *value = std::getenv("KJIT_LOG");
  std::string_view rest = value ? value : "";
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    if (rest.substr(0, comma) == topic)
      return true;
    if (comma == std::string_view::npos)
      break;
    rest.remove_prefix(comma + 1);
  }
  return false;
}

} // namespace

struct Runtime::Impl {
  RuntimeOptions options;
  std::unique_ptr<plugin::PluginHost> host;
  std::string target;
  bool interpreting = false;
  bool logRecompiles = false;
  bool logAutotune = false;
  RecompileHistory recompileHistory;
  LaunchOptions launchDefaults;
  std::string compilerPath;
  CompilerExtensions extensions;
  /// What `extensions` adds to every artifact key.
  std::string extensionsKey;

  std::mutex mutex; // guards what follows
  std::map<std::string, std::unique_ptr<Backend>, std::less<>> backends;
  std::map<std::pair<const Backend *, int32_t>, std::string> fingerprints;
  /// Runtime::device's answers. Never erased: entries compiled for a device
  /// hold on to its description for as long as the runtime lives.
  std::map<std::pair<const Backend *, int32_t>,
           std::unique_ptr<const DeviceDescription>>
      devices;
  std::once_flag compilerOnce;
  absl::StatusOr<std::unique_ptr<CompilerService>> compiler =
      absl::UnknownError("not opened");
  std::atomic<bool> compilerLoaded{false};
  std::unique_ptr<CacheContext> caches; // the disk cache (CacheContext.h)

  absl::StatusOr<std::unique_ptr<Backend>> find(std::string_view target);
};

absl::StatusOr<std::unique_ptr<Backend>>
Runtime::Impl::find(std::string_view wanted) {
  std::string directory = getRuntimeLibraryDir();
  auto inTreePlugin = [&](std::string_view target) {
    return kjit::strCat(directory, "/libkjit-", target, ".so");
  };
  // A backend named after the target whose describe fails (the cuda
  // backend without a driver or a device) explains why it cannot serve.
  absl::Status unusable;
  // Every loaded backend may serve the target (a plugin can replace an
  // in-tree backend), except one named after an in-tree plugin: it serves
  // only the target of its name, and is not asked for another, so that
  // serving one target never pays for describing another (the cuda
  // backend's describe initializes the driver: hundreds of milliseconds).
  // Two backends for one target: which one runs would depend on load
  // order, so neither does.
  absl::Status ambiguous;
  auto search = [&]() -> std::unique_ptr<Backend> {
    std::unique_ptr<Backend> found;
    for (const plugin::BackendRef &ref : host->backends()) {
      bool named = ref.name() == wanted;
      if (!named && access(inTreePlugin(ref.name()).c_str(), F_OK) == 0)
        continue;
      absl::StatusOr<plugin::BackendRef::Description> description =
          ref.describe(/*device=*/0);
      // describe says which target a backend serves: one without it serves
      // none, which its author should hear rather than find out.
      if (!description.ok() &&
          description.status().code() == absl::StatusCode::kUnimplemented)
        host->log(plugin::LogLevel::Warning, "kjit",
                  kjit::strCat(ref.pluginDescription(),
                               ": its backend has no describe entry, so it "
                               "serves no target and is not used"));
      if (!description.ok() && named && unusable.ok())
        unusable = description.status();
      if (!description.ok() || description->target != wanted)
        continue;
      if (found) {
        ambiguous = absl::FailedPreconditionError(
            kjit::strCat("two backends claim target '", wanted,
                         "': ", found->ref.pluginDescription(), " and ",
                         ref.pluginDescription(), "; load only one of them"));
        return nullptr;
      }
      auto backend = std::make_unique<Backend>();
      backend->ref = ref;
      backend->target = description->target;
      backend->arch = description->arch;
      backend->formats = description->formats;
      backend->compileOptions = description->compileOptions;
      backend->maxThreadsPerBlock = description->maxThreadsPerBlock;
      backend->launchFlags = description->launchFlags;
      for (const auto &attribute : description->specAttributes) {
        uint32_t bit = 1u << backend->specAttributes.size();
        if (attribute.kinds & KJIT_SPEC_ON_POINTERS)
          backend->specPointerAttributes |= bit;
        if (attribute.kinds & KJIT_SPEC_ON_INTEGERS)
          backend->specIntegerAttributes |= bit;
        backend->specAttributes.push_back(attribute.name);
      }
      found = std::move(backend);
    }
    return found;
  };
  auto cannotRun = [&] {
    return absl::FailedPreconditionError(
        kjit::strCat("the backend for target '", wanted,
                     "' cannot run: ", statusText(unusable)));
  };
  // A backend found, or why none can serve: two claim the target, or the
  // one named after it cannot run. Empty when the search found nothing.
  auto found =
      [&]() -> std::optional<absl::StatusOr<std::unique_ptr<Backend>>> {
    if (std::unique_ptr<Backend> backend = search())
      return backend;
    if (!ambiguous.ok())
      return ambiguous;
    if (!unusable.ok())
      return cannotRun();
    return std::nullopt;
  };
  if (auto result = found())
    return std::move(*result);
  // The in-tree backend of a target is the plugin named after it.
  std::string path = inTreePlugin(wanted);
  if (access(path.c_str(), F_OK) != 0) {
    std::string hint;
    if (!interpreting && wanted != kInterpretTarget)
      hint = kjit::strCat("; KJIT_INTERPRET=1 runs launches on the ",
                          kInterpretTarget, " backend");
    return absl::FailedPreconditionError(kjit::strCat(
        "no backend for target '", wanted,
        "': no loaded plugin registers one, and there is no libkjit-", wanted,
        ".so in ", directory, hint));
  }
  if (absl::Status loaded = host->loadPlugin(path); !loaded.ok())
    return absl::FailedPreconditionError(kjit::strCat(
        "no backend for target '", wanted, "': ", statusText(loaded)));
  if (auto result = found())
    return std::move(*result);
  return absl::FailedPreconditionError(kjit::strCat(
      "'", path, "' registered no backend for target '", wanted, "'"));
}

absl::StatusOr<std::unique_ptr<Runtime>>
Runtime::create(RuntimeOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->host = std::make_unique<plugin::PluginHost>(options.logSink);
  bool fromEnvironment = options.readEnvironment;
  if (fromEnvironment)
    impl->host->loadFromEnvironment();
  for (const std::string &path : options.plugins)
    (void)impl->host->loadPlugin(path); // reported by the host; go on

  impl->interpreting =
      options.interpret.value_or(fromEnvironment && envFlag("KJIT_INTERPRET"));
  impl->logRecompiles = options.logRecompiles.value_or(fromEnvironment &&
                                                       logsTopic("recompiles"));
  impl->logAutotune =
      options.logAutotune.value_or(fromEnvironment && logsTopic("autotune"));
  impl->target = options.target.empty() ? kDefaultTarget : options.target;
  if (impl->interpreting)
    impl->target = kInterpretTarget;
  impl->launchDefaults =
      fromEnvironment ? LaunchOptions::fromEnvironment() : LaunchOptions();
  if (options.debug)
    impl->launchDefaults.setRaw(LaunchOption::Debug, *options.debug ? 1 : 0);

  impl->compilerPath = options.compilerLibrary;
  if (impl->compilerPath.empty() && fromEnvironment)
    if (const char *path = std::getenv("KJIT_COMPILER_LIBRARY"); path && *path)
      impl->compilerPath = path;
  if (impl->compilerPath.empty())
    impl->compilerPath = getRuntimeLibraryDir() + "/libkjit-compiler.so";
  impl->caches = makeCacheContext(options, fromEnvironment);

  // The plugins join the key by their files' identity, which a warm
  // process reads without loading them (or LLVM); a file that cannot be
  // read is the caller's error now rather than a compile's later. Only a
  // regular file is read: a FIFO would block the read, a device never end.
  for (auto [paths, kind] :
       {std::pair{&options.mlirPassPlugins, "pass"},
        std::pair{&options.mlirDialectPlugins, "dialect"}}) {
    for (const std::string &path : *paths) {
      absl::Status regular = checkRegularFile(path);
      if (regular.ok() && access(path.c_str(), R_OK) != 0)
        regular = absl::InvalidArgumentError(std::strerror(errno));
      if (!regular.ok())
        return absl::InvalidArgumentError(
            kjit::strCat("cannot load MLIR ", kind, " plugin '", path,
                         "': ", regular.message()));
      kjit::strAppend(&impl->extensionsKey, kind,
                      "-plugin=", cache::fileIdentity(path), "\n");
    }
  }
  if (!options.extraPasses.empty())
    kjit::strAppend(&impl->extensionsKey, "extra-passes=", options.extraPasses,
                    "\n");
  impl->extensions.passPlugins = options.mlirPassPlugins;
  impl->extensions.dialectPlugins = options.mlirDialectPlugins;
  impl->extensions.extraPasses = options.extraPasses;
  impl->options = std::move(options);
  return std::unique_ptr<Runtime>(new Runtime(std::move(impl)));
}

Runtime &Runtime::global() {
  static Runtime *runtime = [] {
    absl::StatusOr<std::unique_ptr<Runtime>> created = create();
    // create() fails only on bad options, and the defaults are good.
    return created->release();
  }();
  // Never destroyed: modules held by static objects may still unload their
  // kernels through it while static objects go away. Its plugins are shut
  // down (fini runs) when this function's statics are destroyed.
  static struct Finisher {
    ~Finisher() { runtime->shutdown(); }
  } finisher;
  return *runtime;
}

Runtime::Runtime(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Runtime::~Runtime() { shutdown(); }

void Runtime::shutdown() {
  // Publications call into a store plugin: they finish (or are dropped)
  // while the plugins are still there.
  if (impl_->caches->remote)
    impl_->caches->remote->drain(impl_->caches->remoteSettings.drainTimeout);
  impl_->host->shutdown();
}

plugin::PluginHost &Runtime::plugins() { return *impl_->host; }
const std::string &Runtime::target() const { return impl_->target; }
bool Runtime::interpreting() const { return impl_->interpreting; }
bool Runtime::logsRecompiles() const { return impl_->logRecompiles; }
bool Runtime::logsAutotune() const { return impl_->logAutotune; }

RecompileHistory &Runtime::recompileHistory() {
  return impl_->recompileHistory;
}
const LaunchOptions &Runtime::defaultLaunchOptions() const {
  return impl_->launchDefaults;
}

absl::StatusOr<const Backend *> Runtime::backend(std::string_view target) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto it = impl_->backends.find(target);
  if (it != impl_->backends.end())
    return it->second.get();
  // Not cached on failure: a plugin loaded later may provide it.
  absl::StatusOr<std::unique_ptr<Backend>> found = impl_->find(target);
  if (!found.ok())
    return found.status();
  const Backend *backend = found->get();
  impl_->backends.emplace(std::string(target), std::move(*found));
  return backend;
}

absl::StatusOr<std::string> Runtime::fingerprint(const Backend &backend,
                                                 int32_t device) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto key = std::make_pair(&backend, device);
  auto it = impl_->fingerprints.find(key);
  if (it != impl_->fingerprints.end())
    return it->second;
  absl::StatusOr<std::string> bytes = backend.ref.fingerprint(device);
  // Without a fingerprint a kernel built by another toolchain or for another
  // CPU would match the key: a backend must say what its code depends on.
  if (!bytes.ok() && bytes.status().code() == absl::StatusCode::kUnimplemented)
    return absl::FailedPreconditionError(kjit::strCat(
        "the backend for target '", backend.target,
        "' cannot run: it has no fingerprint entry, and the fingerprint joins "
        "every cache key (",
        backend.ref.pluginDescription(), ")"));
  if (!bytes.ok())
    return bytes.status();
  impl_->fingerprints.emplace(key, *bytes);
  return *bytes;
}

absl::StatusOr<const DeviceDescription *>
Runtime::device(const Backend &backend, int32_t device) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto key = std::make_pair(&backend, device);
  auto it = impl_->devices.find(key);
  if (it != impl_->devices.end())
    return it->second.get();
  // Only devices the backend says it drives (device_count; one without the
  // entry drives one): a count it cannot give, or none, is its error to
  // report here, not a launch on device 0 regardless.
  absl::StatusOr<int32_t> count = backend.ref.deviceCount();
  if (!count.ok())
    return absl::FailedPreconditionError(
        kjit::strCat("the backend for target '", backend.target,
                     "' cannot say how many devices it drives: ",
                     statusText(count.status())));
  if (device >= *count)
    return absl::FailedPreconditionError(
        *count == 0
            ? kjit::strCat("the backend for target '", backend.target,
                           "' drives no device (device_count answered 0; ",
                           backend.ref.pluginDescription(), ")")
            : kjit::strCat("device ", device, " is not one of the ", *count,
                           " device", *count == 1 ? "" : "s",
                           " the backend for target '", backend.target,
                           "' drives (", backend.ref.pluginDescription(), ")"));
  auto described = std::make_unique<DeviceDescription>();
  if (device == 0) {
    // The backend was found by describing device 0: its answer is at hand.
    described->arch = backend.arch;
    described->formats = backend.formats;
    described->compileOptions = backend.compileOptions;
    described->maxThreadsPerBlock = backend.maxThreadsPerBlock;
  } else {
    // Not cached on failure, as fingerprints are not: the caller reports it
    // (a device the backend does not have is its error to word).
    absl::StatusOr<plugin::BackendRef::Description> description =
        backend.ref.describe(device);
    if (!description.ok())
      return description.status();
    // The backend was chosen for its target, and the compiler target, the
    // key's target and the records follow it: a device that would need
    // another compiler target cannot be served as this backend's.
    if (description->target != backend.target)
      return absl::FailedPreconditionError(kjit::strCat(
          "device ", device, " of the backend for target '", backend.target,
          "' describes target '", description->target,
          "'; a backend serves one target on every device (",
          backend.ref.pluginDescription(), ")"));
    described->arch = std::move(description->arch);
    described->formats = std::move(description->formats);
    described->compileOptions = std::move(description->compileOptions);
    described->maxThreadsPerBlock = description->maxThreadsPerBlock;
  }
  const DeviceDescription *result = described.get();
  impl_->devices.emplace(key, std::move(described));
  return result;
}

absl::StatusOr<CompilerService *> Runtime::compiler() {
  std::call_once(impl_->compilerOnce, [&] {
    impl_->compiler = openCompiler(impl_->compilerPath);
    if (impl_->compiler.ok())
      if (absl::Status extended = (*impl_->compiler)->extend(impl_->extensions);
          !extended.ok())
        impl_->compiler = extended;
    impl_->compilerLoaded = impl_->compiler.ok();
  });
  if (!impl_->compiler.ok())
    return impl_->compiler.status();
  return impl_->compiler->get();
}

bool Runtime::compilerLoaded() const { return impl_->compilerLoaded; }

cache::DiskCache *Runtime::diskCache() {
  return openDiskCache(*impl_->caches, *impl_->host);
}

RemoteCache *Runtime::remoteCache() {
  return openRemoteCache(*impl_->caches, *impl_->host);
}

const std::string &Runtime::buildIdentity() {
  return rt::buildIdentity(*impl_->caches, impl_->compilerPath);
}

const std::string &Runtime::codegenEnvironment() const {
  return impl_->caches->environment;
}

const std::string &Runtime::compilerExtensions() const {
  return impl_->extensionsKey;
}

} // namespace kjit::rt
