//===- PluginHost.h - loads C ABI plugins and runs their hooks --*- C++ -*-===//
//
// The C++ side of the stable plugin ABI (include/kjit-c/Plugin.h): loading
// plugins, negotiating versions, and calling their hooks, backends and cache
// stores. Part of the runtime core: no LLVM or MLIR header may be included
// here. docs/PluginABI.md describes the contract; this header is the API the
// runtime, the hook passes and the tools call.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_PLUGIN_PLUGINHOST_H
#define KJIT_PLUGIN_PLUGINHOST_H

#include "kjit-c/Plugin.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kjit::plugin {

/// The range of ABI minors this host accepts and speaks.
inline constexpr uint32_t kHostMinMinor = 0;
inline constexpr uint32_t kHostMaxMinor = KJIT_ABI_MINOR;

/// Severity of a host log message (values match KJIT_LOG_*).
enum class LogLevel : int32_t { Error = 0, Warning = 1, Info = 2, Debug = 3 };

/// Receives every message of the host and of its plugins. `source` is the
/// plugin's name for messages a plugin logs, and "kjit" for the host's own.
using LogSink = std::function<void(LogLevel level, std::string_view source,
                                   std::string_view message)>;

/// A bound argument as the hooks see it; views are borrowed for the call.
struct ArgInfo {
  std::string_view name;
  std::string_view type;
  int32_t kind = KJIT_ARG_NONE;
  bool isConstexpr = false;
  int64_t intValue = 0;
  uint64_t uintValue = 0;
  double floatValue = 0;
  /// The value as storage (kjit_arg's 1.1 fields, see
  /// kjit/Model/ArgEncoding.h); all zero where no value is bound to a
  /// signature type (pre-run hooks).
  int32_t dtype = KJIT_DTYPE_UNKNOWN;
  uint32_t flags = 0;
  uint64_t bits = 0;
  uint32_t bitsSize = 0;
};

/// What the cache and compiled hooks learn about one compile.
struct CompileInfo {
  std::string_view kernelName;
  std::string_view key;
  std::string_view repr;
  std::string_view compileJson;
  std::string_view target;
  int32_t device = 0;
  bool isWarmup = false;
};

/// The finished artifact handed to the compiled hooks.
struct CompiledInfo {
  std::string_view artifactFormat;
  std::string_view artifact;
  std::string_view metadataJson;
  uint64_t compileNanos = 0;
};

/// One launch as the launch hooks see it.
struct LaunchInfo {
  std::string_view kernelName;
  std::string_view key;
  std::array<uint32_t, 3> grid = {1, 1, 1};
  uint32_t numWarps = 4;
  int32_t device = 0;
  uint64_t stream = 0;
  std::string_view metadataJson;
  absl::Span<const ArgInfo> args;
};

/// The cache hooks' verdict.
enum class CacheDecision { Continue, Skip };

class PluginHost;

/// A receiver of device times that backends report (report_device_time) for
/// launches it made itself: the autotuner's timed trials. PluginHost
/// consults its sinks before the plugins' launch_complete hooks.
class DeviceTimeSink {
public:
  virtual ~DeviceTimeSink() = default;
  /// Called on the reporting thread (a backend's timer thread, or the
  /// launching thread) for every report while the sink is added; it
  /// ignores reports of correlation ids it did not allocate.
  virtual void deviceTime(const kjit_device_time &time) = 0;
};
struct LoadedPlugin;

/// Immutable list of initialized plugins; dispatch iterates one of these
/// without holding the host's lock.
struct PluginSnapshot {
  std::vector<std::shared_ptr<LoadedPlugin>> plugins;
};

/// State of one launch between its enter and exit hooks: the correlation id,
/// the plugins that saw enter (a plugin loaded in between sees neither), and
/// each plugin's correlation slot.
class LaunchRecord {
public:
  LaunchRecord() = default;
  /// The id both hooks receive; 0 when no plugin has launch hooks.
  uint64_t correlationId() const { return id; }

private:
  friend class PluginHost;
  uint64_t id = 0;
  std::shared_ptr<const PluginSnapshot> snapshot;
  std::vector<uint64_t> slots;
};

/// A backend registered by a plugin. Calls are serialized when its plugin is
/// not thread-safe; statuses become absl::Status with the plugin's name and
/// the plugin's code. A NULL slot is Unimplemented, except where the ABI
/// gives it a meaning (deviceCount, synchronize). The backend table is
/// frozen in the ABI (include/kjit-c/Plugin.h): append-only within major 1
/// (docs/PluginABI.md, "What is frozen").
class BackendRef {
public:
  /// What describe says about the target and one device. Attributes a
  /// backend does not report (a 1.0 backend, or unknown ones) are 0.
  struct Description {
    std::string target, arch;
    uint32_t warpSize = 0;
    std::vector<std::string> formats;
    uint32_t multiprocessorCount = 0;
    uint32_t maxThreadsPerBlock = 0;
    uint64_t maxSharedMemoryPerBlock = 0;
    std::array<uint8_t, 16> uuid{};
    /// 1.2: options every compile for this backend passes to its target.
    std::vector<std::pair<std::string, std::string>> compileOptions;
    /// 1.2: the KJIT_LAUNCH_* bits the backend honours (0: unknown).
    uint32_t launchFlags = 0;
    /// 1.3: the backend's own specialization attributes, in bit order.
    struct SpecAttribute {
      std::string name;
      /// KJIT_SPEC_ON_* bits.
      uint32_t kinds = 0;
    };
    std::vector<SpecAttribute> specAttributes;
  };
  /// Launch settings beyond the grid and warps of a LaunchInfo.
  struct LaunchAttributes {
    uint32_t sharedMemoryBytes = 0;
    /// KJIT_LAUNCH_* bits.
    uint32_t flags = 0;
    /// Programs per cluster; all zero: no clusters.
    std::array<uint32_t, 3> cluster = {0, 0, 0};
  };

  std::string_view name() const;
  /// The backend's plugin as messages name it: "plugin 'x' (path)".
  std::string pluginDescription() const;
  /// The ABI minor the backend's plugin was built for.
  uint32_t abiMinor() const;

  /// How many devices the backend drives; 1 when it has no device_count.
  absl::StatusOr<int32_t> deviceCount() const;
  absl::StatusOr<Description> describe(int32_t device) const;
  /// The bytes that join every cache key of this backend and device.
  absl::StatusOr<std::string> fingerprint(int32_t device,
                                          void *options = nullptr) const;
  /// Parses `name=value` options into an opaque handle (may be null).
  absl::StatusOr<void *> parseOptions(
      absl::Span<const std::pair<std::string_view, std::string_view>> options)
      const;
  void destroyOptions(void *handle) const;
  /// Artifact bytes of `format` to loadable bytes for `device`. `info`, if
  /// given, receives what the backend reported of the kernel (ABI 1.5): a
  /// JSON object, or empty.
  absl::StatusOr<std::string> finalize(int32_t device, std::string_view format,
                                       std::string_view artifact,
                                       std::string_view kernelName,
                                       void *options = nullptr,
                                       std::string *info = nullptr) const;
  /// Loadable bytes to a kernel handle on `device`.
  absl::StatusOr<void *> load(int32_t device, std::string_view loadable,
                              std::string_view kernelName) const;
  /// A loaded kernel, and whether its launches may pass only the values
  /// (kjit_backend_launch_args.values, ABI 1.4).
  struct LoadedKernel {
    void *kernel = nullptr;
    bool takesValues = false;
  };
  /// 1.4: loads with the template of the arguments every launch of the
  /// kernel passes (launch order, values unset), so that the backend may
  /// check them once and answer takes_values. A backend older than 1.4
  /// never sees the template and never takes values.
  absl::StatusOr<LoadedKernel>
  load(int32_t device, std::string_view loadable, std::string_view kernelName,
       absl::Span<const kjit_arg *const> argTemplate) const;
  /// Launches with the arguments of `launch` (converted to kjit_args here).
  absl::Status launch(void *kernel, const LaunchInfo &launch,
                      const LaunchAttributes &attributes) const;
  absl::Status launch(void *kernel, const LaunchInfo &info) const {
    return launch(kernel, info, LaunchAttributes());
  }
  /// 1.3: the attribute bits (describe's spec_attributes) that hold for
  /// one launch value of parameter `param`; only for a backend that
  /// describes attributes (which then has the entry).
  absl::StatusOr<uint32_t> specialize(int32_t device, uint32_t param,
                                      int32_t dtype, uint32_t flags,
                                      uint64_t bits) const;
  /// The launch path of the runtime: `args` is already in the ABI's form
  /// (the runtime keeps per-kernel templates of its kjit_args), so nothing
  /// is converted or allocated. Flags or clusters for a backend built
  /// against ABI 1.0, which cannot see them, are refused (Unimplemented).
  absl::Status launchPrepared(kjit_backend_launch_args &args) const;
  /// Waits for the work enqueued on `stream` of `device`; OK at once for a
  /// backend without synchronize (its launches are synchronous).
  absl::Status synchronize(int32_t device, uint64_t stream) const;
  /// 1.2 device memory. Whether the backend has any: without it a device
  /// reads host memory, and tools pass host pointers.
  bool hasDeviceMemory() const;
  /// `size` (> 0) bytes on `device`: the address a pointer argument takes.
  absl::StatusOr<uint64_t> allocate(int32_t device, uint64_t size) const;
  absl::Status deallocate(int32_t device, uint64_t address) const;
  /// Copies between host memory and an allocation, after the work on
  /// `stream`; returns when the copy is done.
  absl::Status copyToDevice(int32_t device, uint64_t address, const void *host,
                            uint64_t size, uint64_t stream = 0) const;
  absl::Status copyToHost(int32_t device, void *host, uint64_t address,
                          uint64_t size, uint64_t stream = 0) const;
  absl::Status unload(void *kernel) const;

private:
  friend class PluginHost;
  std::shared_ptr<LoadedPlugin> plugin;
};

/// A cache store registered by a plugin. Errors come back as statuses with
/// the store's code and message and are never logged here: the caller
/// (the runtime's remote tier) decides what an error means, counts it and
/// logs it as rarely as it likes. Values are opaque, untrusted bytes:
/// callers verify every value before using it (docs/PluginABI.md, "Cache
/// stores"). The store table is frozen like the rest of the ABI.
class CacheStoreRef {
public:
  /// What describe says; the defaults for a store without describe.
  struct Description {
    /// The largest value put accepts, in bytes; 0: no limit known.
    uint64_t maxValueSize = 0;
    /// Entries are shared over the network (Redis).
    bool isRemote = false;
  };
  struct PutOptions {
    /// KJIT_CACHE_PUT_* bits.
    uint32_t flags = 0;
    /// Expire after this many seconds; 0: no expiry asked for.
    uint32_t ttlSeconds = 0;
    uint32_t timeoutMs = 100;
  };
  enum class PutResult {
    Stored,
    /// KJIT_CACHE_PUT_IF_ABSENT and the key had an entry: kept.
    Exists,
  };

  std::string_view name() const;
  /// The value on a hit, nullopt on a miss, or the store's error.
  absl::StatusOr<std::optional<std::string>>
  get(std::string_view key, uint32_t timeoutMs = 100) const;
  /// An error when the store failed or cannot honour the flags (a store of
  /// ABI 1.0 cannot see them: FailedPrecondition).
  absl::StatusOr<PutResult> put(std::string_view key, std::string_view value,
                                const PutOptions &options) const;
  absl::StatusOr<PutResult> put(std::string_view key,
                                std::string_view value) const {
    return put(key, value, PutOptions());
  }
  /// True when an entry was removed, false when there was none; an error
  /// when the store failed or cannot remove (Unimplemented).
  absl::StatusOr<bool> remove(std::string_view key,
                              uint32_t timeoutMs = 100) const;
  absl::StatusOr<Description> describe() const;

private:
  friend class PluginHost;
  std::shared_ptr<LoadedPlugin> plugin;
};

/// Loads plugins and dispatches to them. Thread-safe: loading, dispatch and
/// shutdown may happen on any thread; the host's lock is never held while a
/// plugin runs. Plugins are never unloaded (dlclose) - see docs/PluginABI.md.
/// A process may hold several hosts (a runtime object owns one); each loads
/// and initializes its plugins itself, and a plugin without
/// KJIT_CAP_THREAD_SAFE is serialized across all of them.
class PluginHost {
public:
  /// A host that logs to `sink` (stderr when empty).
  explicit PluginHost(LogSink sink = {});
  /// Calls shutdown().
  ~PluginHost();
  PluginHost(const PluginHost &) = delete;
  PluginHost &operator=(const PluginHost &) = delete;

  /// Loads, negotiates and initializes the plugin at `path`. Every failure
  /// is logged and returned; none is fatal. Loading the same library twice
  /// is a no-op that succeeds.
  absl::Status loadPlugin(std::string_view path);

  /// Loads each plugin of the colon-separated KJIT_PLUGINS, in order; empty
  /// entries are skipped. Returns the number of plugins loaded.
  unsigned loadFromEnvironment();

  /// Calls every plugin's fini, in reverse load order, once. Hooks fired
  /// afterwards reach nobody; later loads are refused. First it runs the
  /// shutdown callbacks, while every plugin still answers.
  void shutdown();

  /// Registers `callback` to run at the start of shutdown(), before any
  /// fini: the runtime unloads the kernels that are still loaded there, so
  /// that their backend frees them whatever order the application tears
  /// things down in. Returns a token for removeShutdownCallback, or 0 (and
  /// does not keep the callback) when the host has shut down already.
  uint64_t addShutdownCallback(std::function<void()> callback);
  /// Forgets a callback; if shutdown is running it, waits until it returns.
  void removeShutdownCallback(uint64_t token);

  /// Runs every cache hook in load order. Skip if any plugin said skip.
  CacheDecision runCacheHook(const CompileInfo &info);
  /// Runs every compiled hook in load order.
  void runCompiledHook(const CompileInfo &info, const CompiledInfo &compiled);
  /// Runs the pre-run hooks in load order until one fails; its error
  /// (FailedPrecondition, naming the plugin and the kernel, with the hook's
  /// message) aborts the launch, and the later hooks do not run.
  absl::Status runPreRunHooks(std::string_view kernelName,
                              absl::Span<const ArgInfo> args);
  /// Runs launch_enter hooks in load order and returns the record that
  /// runLaunchExit needs.
  /// `correlationId`: the id the launch carries (allocateCorrelationId),
  /// or 0 for a new one.
  LaunchRecord runLaunchEnter(const LaunchInfo &info,
                              uint64_t correlationId = 0);
  /// Runs launch_exit hooks of the plugins that saw enter, in reverse order.
  void runLaunchExit(LaunchRecord &record, const LaunchInfo &info,
                     int32_t launchStatus = KJIT_STATUS_OK);

  /// Hands a backend's device-time report to the device-time sinks, then
  /// to every launch_complete hook in load order. One atomic load each
  /// while there are neither.
  void runLaunchCompleteHooks(const kjit_device_time &time);

  /// A correlation id no launch of this host has had: for a launch that
  /// asks for its device time without launch hooks (from the ids the
  /// launch hooks see, so the two never collide).
  uint64_t allocateCorrelationId() {
    return nextCorrelationId.fetch_add(1, std::memory_order_relaxed);
  }
  /// Adds or removes a sink; `sink` outlives its addition, and a removal
  /// returns once no report is being handed to it.
  void addDeviceTimeSink(DeviceTimeSink *sink);
  void removeDeviceTimeSink(DeviceTimeSink *sink);

  /// Cheap checks for the launch path: are there hooks of this kind at all?
  /// (launch_complete counts as a launch hook: it needs correlation ids.)
  bool hasLaunchHooks() const {
    return launchHooks.load(std::memory_order_acquire);
  }
  bool hasPreRunHooks() const {
    return preRunHooks.load(std::memory_order_acquire);
  }
  /// Whether a plugin has a launch_enter hook: the only reader of a
  /// launch's metadata (as in Triton, whose launch_metadata runs only for
  /// a launch-enter hook).
  bool hasLaunchEnterHooks() const {
    return launchEnterHooks.load(std::memory_order_acquire);
  }
  /// Whether a plugin wants launches timed on the device.
  bool hasLaunchCompleteHooks() const {
    return launchCompleteHooks.load(std::memory_order_acquire);
  }

  /// Registered backends and cache stores, in load order.
  std::vector<BackendRef> backends() const;
  std::vector<CacheStoreRef> cacheStores() const;
  /// The backend named `name`, or an error naming the ones there are.
  absl::Status findBackend(std::string_view name, BackendRef &out) const;

  /// Names of the initialized plugins, in load order.
  std::vector<std::string> pluginNames() const;

  /// Reports a message through the sink (used by the plugins' log entry).
  void log(LogLevel level, std::string_view source,
           std::string_view message) const;

  /// How many errors plugins reported through report_async_error.
  uint64_t asyncErrorCount() const {
    return asyncErrors.load(std::memory_order_relaxed);
  }

private:
  friend struct LoadedPlugin;
  std::shared_ptr<const PluginSnapshot> snapshot() const;
  void publish(std::shared_ptr<const PluginSnapshot> next);
  absl::Status fail(const std::string &message);

  LogSink sink;
  mutable std::mutex mutex; // guards current, handles and isShutdown
  std::shared_ptr<const PluginSnapshot> current;
  std::vector<void *> handles; // dlopen handles, to detect double loads
  bool isShutdown = false;
  std::atomic<bool> launchHooks{false};
  std::atomic<bool> launchEnterHooks{false};
  std::atomic<bool> preRunHooks{false};
  std::atomic<bool> launchCompleteHooks{false};
  std::atomic<uint64_t> nextCorrelationId{1};
  std::atomic<uint64_t> asyncErrors{0};
  /// The device-time sinks; `deviceTimeSinkCount` is their number, read
  /// without the lock.
  std::mutex sinkMutex;
  std::vector<DeviceTimeSink *> deviceTimeSinks;
  std::atomic<size_t> deviceTimeSinkCount{0};
  /// Held while shutdown runs the callbacks; guards them.
  std::mutex callbackMutex;
  std::map<uint64_t, std::function<void()>> shutdownCallbacks;
  uint64_t nextCallback = 1;
  bool callbacksRan = false;
};

} // namespace kjit::plugin

#endif // KJIT_PLUGIN_PLUGINHOST_H
