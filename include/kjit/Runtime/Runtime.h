//===- Runtime.h - the runtime object ---------------------------*- C++ -*-===//
//
// A Runtime plays the part of PJRT's client: it owns the plugin host, the
// backends (one per target, found through the plugins' `describe`), the
// compiler library (opened on the first analysis or miss) and the launch
// defaults, and it reads the environment once, when it is created. Modules
// are loaded into a runtime; the tools are thin layers over it, so an
// application that embeds libkjit-runtime behaves as `kjit-run` does.
//
// Environment (read by create() unless RuntimeOptions::readEnvironment is
// false; an explicit option wins):
//   KJIT_PLUGINS           colon-separated plugins to load, in order
//   KJIT_INTERPRET=1       run every launch on the interpreter target
//   KJIT_DEBUG=1           device asserts on by default
//   KJIT_COMPILER_LIBRARY  the compiler module to open
//   KJIT_CACHE_DIR         the disk cache (empty: off; unset: the user's
//                          cache home); KJIT_CACHE_MAX_SIZE, _LOCK_TIMEOUT,
//                          _FSYNC, _VERBOSE tune it (docs/DiskCache.md)
//   KJIT_REDIS_KEY_FILE    the fleet cache's shared secret, used when a
//                          cache store plugin is loaded; KJIT_REMOTE_CACHE_TTL
//                          (docs/RemoteCache.md)
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_RUNTIME_RUNTIME_H
#define KJIT_RUNTIME_RUNTIME_H

#include "kjit/Model/LaunchOptions.h"
#include "kjit/Plugin/PluginHost.h"
#include "kjit/Runtime/Module.h"

#include "absl/status/statusor.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kjit::cache {
class DiskCache;
} // namespace kjit::cache

namespace kjit::rt {

class CompilerService;
class RecompileHistory;
class RemoteCache;

/// How a runtime is set up. Unset fields come from the environment.
struct RuntimeOptions {
  /// Plugins to load after those of KJIT_PLUGINS (kjit-run's --load-plugin).
  std::vector<std::string> plugins;
  /// The target launches run on ("cuda", ...); empty: the build's default.
  std::string target;
  /// Send every launch to the interpreter target; unset: KJIT_INTERPRET.
  std::optional<bool> interpret;
  /// Device asserts on by default; unset: KJIT_DEBUG.
  std::optional<bool> debug;
  /// The compiler module; empty: KJIT_COMPILER_LIBRARY, else
  /// libkjit-compiler.so beside libkjit-runtime.so.
  std::string compilerLibrary;
  /// The disk cache's directory; empty: no disk cache; unset:
  /// KJIT_CACHE_DIR, else the user's cache home (cache::defaultDirectory),
  /// or no disk cache when readEnvironment is false.
  std::optional<std::string> cacheDirectory;
  /// Its size cap in bytes (0: none); unset: KJIT_CACHE_MAX_SIZE, else 1 GiB.
  std::optional<uint64_t> cacheMaxSize;
  /// The fleet cache's shared secret (docs/RemoteCache.md), used when a
  /// cache store plugin is loaded; empty: the fleet cache is off; unset:
  /// KJIT_REDIS_KEY_FILE.
  std::optional<std::string> remoteCacheKeyFile;
  /// Log why each recompile of a kernel happened (which part of its key
  /// differs from the nearest compiled specialization), through the log
  /// sink; unset: KJIT_LOG lists "recompiles" (comma-separated).
  std::optional<bool> logRecompiles;
  /// Log what the autotuner timed and chose (unset: KJIT_LOG has
  /// `autotune`).
  std::optional<bool> logAutotune;
  /// Out-of-tree MLIR pass plugins and dialect plugins loaded into the
  /// compiler when it is opened (kjit-run --load-pass-plugin,
  /// --load-dialect-plugin), and pipeline elements every compile runs
  /// after specialization, before the target's lowering (--extra-passes:
  /// "count-kernel-ops,cse"). A plugin file must be readable when the
  /// runtime is created; it loads, and the passes are checked, when the
  /// compiler opens. All of them join every artifact key, the plugins by
  /// their file's identity (docs/Runtime.md "MLIR pass plugins").
  std::vector<std::string> mlirPassPlugins;
  std::vector<std::string> mlirDialectPlugins;
  std::string extraPasses;
  /// Where the plugin host logs (stderr when empty).
  plugin::LogSink logSink;
  /// False: ignore KJIT_* variables and use these options alone.
  bool readEnvironment = true;
};

/// What a backend's `describe` says about one of its devices that the code
/// compiled for that device depends on. Per device: two GPUs driven by one
/// backend may be of different architectures, and the cuda backend's
/// compile options (the PTX version) follow the architecture
/// (docs/MultiDevice.md).
struct DeviceDescription {
  /// The described architecture ("sm_90", "x86_64").
  std::string arch;
  /// Accepted artifact formats, most preferred first.
  std::vector<std::string> formats;
  /// `name=value` options every compile for this device passes to the
  /// compiler target (describe's compile_options).
  std::vector<std::pair<std::string, std::string>> compileOptions;
  /// The most threads a program may have on the device (describe's
  /// max_threads_per_block); 0: not described.
  uint32_t maxThreadsPerBlock = 0;
};

/// A backend as the runtime uses it: the plugin's table and what its
/// `describe` said about device 0. What is per device (arch, formats,
/// compile options) the runtime takes from Runtime::device for the device
/// a launch is for; the fields here are device 0's, for tools that show
/// the backend.
struct Backend {
  plugin::BackendRef ref;
  /// The described target, which names the compiler target too. The same
  /// on every device (Runtime::device refuses a device that says another).
  std::string target;
  /// Device 0's architecture ("sm_90", "x86_64").
  std::string arch;
  /// Device 0's accepted artifact formats, most preferred first.
  std::vector<std::string> formats;
  /// Device 0's compile options (describe's compile_options).
  std::vector<std::pair<std::string, std::string>> compileOptions;
  /// Device 0's max_threads_per_block; 0: not described.
  uint32_t maxThreadsPerBlock = 0;
  /// The KJIT_LAUNCH_* bits the backend honours (describe's launch_flags),
  /// as device 0 describes them.
  uint32_t launchFlags = 0;
  /// The backend's own specialization attributes (describe's
  /// spec_attributes, plugin ABI 1.3), in bit order; empty for most
  /// backends. Device 0's: they shape the key of every launch of the
  /// backend.
  std::vector<std::string> specAttributes;
  /// The bits of those that apply to pointers (KJIT_SPEC_ON_POINTERS) and
  /// to integers (KJIT_SPEC_ON_INTEGERS), so a launch need not look at
  /// each attribute's kinds.
  uint32_t specPointerAttributes = 0, specIntegerAttributes = 0;
};

/// Owns plugins, backends and the compiler. Thread-safe. Modules loaded into
/// a runtime must be destroyed before it.
class Runtime {
public:
  /// A runtime set up by `options` (and the environment). Plugins that fail
  /// to load are reported through the log and skipped, as in the tools.
  static absl::StatusOr<std::unique_ptr<Runtime>>
  create(RuntimeOptions options = {});

  /// The process's default runtime, created from the environment on first
  /// use; Module::load(path) loads into it. Its plugins are shut down when
  /// static objects are destroyed.
  static Runtime &global();

  /// Shuts the plugins down (their fini runs: summaries, trace files).
  ~Runtime();
  Runtime(const Runtime &) = delete;
  Runtime &operator=(const Runtime &) = delete;

  plugin::PluginHost &plugins();

  /// The target launches run on, after KJIT_INTERPRET.
  const std::string &target() const;
  /// Whether launches were routed to the interpreter target.
  bool interpreting() const;
  /// Whether recompiles are explained in the log (RuntimeOptions).
  bool logsRecompiles() const;
  bool logsAutotune() const;
  /// Internal (lib/Runtime/RecompileLog.h): what each kernel was compiled
  /// for, kept while logsRecompiles() for the next compile's explanation.
  RecompileHistory &recompileHistory();
  /// Launch option defaults (debug from KJIT_DEBUG).
  const LaunchOptions &defaultLaunchOptions() const;

  /// The backend of `target`: one a loaded plugin registers (by its
  /// described target), else the plugin libkjit-<target>.so beside
  /// libkjit-runtime.so. Found once and kept.
  absl::StatusOr<const Backend *> backend(std::string_view target);
  /// The backend of target().
  absl::StatusOr<const Backend *> backend() { return backend(target()); }

  /// The backend's fingerprint for `device` (cached): bytes that join every
  /// cache key of code compiled for it.
  absl::StatusOr<std::string> fingerprint(const Backend &backend,
                                          int32_t device);
  /// What `backend` describes for `device` (cached per backend and device,
  /// like the fingerprint; kept for the runtime's life): the arch, formats
  /// and compile options of code compiled for it. An error when the backend
  /// cannot describe the device, or describes another target for it.
  absl::StatusOr<const DeviceDescription *> device(const Backend &backend,
                                                   int32_t device);

  /// The compiler, opening the library on first use.
  absl::StatusOr<CompilerService *> compiler();
  /// Whether compiler() has opened the library (a warm process never does).
  bool compilerLoaded() const;

  /// The disk cache, opened on first use; null when it is off or unusable
  /// (the reason is logged once).
  cache::DiskCache *diskCache();
  /// The fleet cache, opened on first use; null when no cache store is
  /// loaded or it cannot be used (why is logged once).
  RemoteCache *remoteCache();
  /// The build that compiles: kjit's version, the runtime's build id and
  /// the compiler library's with the libraries it needs, read from their
  /// files without loading them. Joins every disk key. Computed once.
  const std::string &buildIdentity();
  /// The values of the environment variables that change generated code
  /// (cache::codegenEnvironment()) when the runtime was created.
  const std::string &codegenEnvironment() const;
  /// The MLIR plugins (by file identity) and extra passes of
  /// RuntimeOptions, as they join every artifact key; empty when none.
  const std::string &compilerExtensions() const;

  /// Drains the fleet cache's publications, then shuts the plugins down
  /// (their fini runs); later launches are refused. The destructor does
  /// it; a tool calls it earlier to learn what plugins report while they
  /// finish (a backend's asynchronous errors until its fini returns).
  void shutdown();

  struct Impl;

private:
  explicit Runtime(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace kjit::rt

#endif // KJIT_RUNTIME_RUNTIME_H
