//===- KernelImpl.h - a kernel's state, shared by its parts -----*- C++ -*-===//
//
// Kernel.cpp (binding, globals, warmup, preload), KernelCache.cpp (the
// single-flight miss path over the dispatch cache, DispatchCache.h),
// KernelCompile.cpp
// (the key digest, hooks, compiler and backend on a miss) and
// KernelLaunch.cpp (the hit path and the ABI's arguments) share this state.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_RUNTIME_KERNELIMPL_H
#define KJIT_LIB_RUNTIME_KERNELIMPL_H

#include "DispatchCache.h"
#include "LaunchMetadata.h"
#include "RecompileLog.h"
#include "RuntimeImpl.h"
#include "kjit/Cache/DiskCache.h"
#include "kjit/Cache/EntryFormat.h"
#include "kjit/Plugin/PluginHost.h"
#include "kjit/Support/StrCat.h"

#include "absl/base/optimization.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"

#include <array>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace kjit::rt {

inline std::string statusText(const absl::Status &status) {
  return std::string(status.message().data(), status.message().size());
}

/// One compiled specialization. Created pending by the first thread that
/// misses; the others wait for it (single flight).
class RemoteCache;
struct LaunchArguments;

struct Entry {
  enum class State { Pending, Ready, Failed, Skipped };
  // What a launch reads comes first, in as few cache lines as it takes: a
  // GPU launch between two of them evicts much of the L1.
  void *backendKernel = nullptr;
  /// The backend that loaded it (owned by the runtime).
  const Backend *backend = nullptr;
  /// The backend checked the template at load (ABI 1.4's takes_values):
  /// launches pass only each argument's storage bits.
  bool takesValues = false;
  /// Dynamic shared memory each launch provides: the compile's
  /// `shared_dynamic_bytes` (the cuda target's matrix tiles), else 0.
  uint32_t sharedMemoryBytes = 0;
  /// The arguments passed at launch: manifest index and signature type
  /// (inline: a launch reads them next to the fields above). The type is
  /// the entry's, part of its key, so a launch need not read the
  /// binding's.
  struct LaunchParam {
    uint32_t index;
    SigType type;
  };
  absl::InlinedVector<LaunchParam, 8> launchParams;
  /// Written once, with release, after every other field is set; readers
  /// load it with acquire before touching them.
  std::atomic<State> state{State::Pending};
  std::mutex mutex;
  std::condition_variable ready;
  absl::Status error;
  /// The thread that inserted the pending entry and runs its compile (and
  /// so its cache and compiled hooks); none once it is no longer pending.
  /// A wait for it from that thread, or from one that thread waits for,
  /// would never end: waitFor refuses it.
  std::atomic<std::thread::id> compilingThread{};
  /// The signature types of launchParams.
  std::vector<std::string> launchTypes;
  /// The ABI form of the launch arguments with everything but the values
  /// filled in; the load hands it to the backend, and a launch that passes
  /// kjit_args copies it and sets the values.
  std::vector<kjit_arg> argTemplate;
  std::string key;
  /// The key the dispatch cache finds it by (set before it is published).
  SpecializationKey lookupKey;
  /// Where the loaded kernel came from.
  enum class Origin { Compiled, Disk, Remote } origin = Origin::Compiled;
  /// Unique in the process and never reused, unlike the entry's address:
  /// a thread's launch arguments remember the entry they were copied from.
  uint64_t serial = 0;
};

struct Kernel::Impl {
  // What every launch reads comes first, together: a GPU launch between two
  // of them evicts much of the L1.
  Module::Impl *module;
  /// Unique in the process (see makeKernel).
  uint64_t id = 0;
  std::optional<BindPlan> plan;
  /// The runtime's plugin host.
  plugin::PluginHost *host = nullptr;
  std::atomic<uint64_t> checkedVersion{UINT64_MAX};
  /// The runtime's backend, found once and kept (the runtime owns it).
  std::atomic<bool> backendFound{false};
  absl::StatusOr<const Backend *> backend = nullptr;
  /// The compiled entries per device, and the version that every memo of
  /// a lookup is checked against (DispatchCache.h): a hit is a lock-free
  /// probe with no shared write (two threads launching the same kernel do
  /// not contend). Sized for the backend's devices when it is found.
  DispatchCache dispatch;

  KernelManifest manifest;
  std::string dependencyKey;
  /// Each function the kernel uses with the digest of its own IR (empty
  /// for a module from a manifest of an older kjit): the recompile log.
  std::vector<std::pair<std::string, std::string>> sourceDigests;
  /// The globals the kernel reads, with the bits it bakes in: the values at
  /// its first launch (or warmup, or preload), as the reference records
  /// them when it first computes a kernel's key.
  std::vector<std::string> usedGlobals;
  std::vector<uint64_t> bakedBits;
  bool baked = false;
  std::mutex globalsMutex;
  GlobalChangePolicy policy = GlobalChangePolicy::Error;

  std::once_flag backendOnce;
  /// The host's shutdown callback that unloads this kernel's entries, so
  /// that a host shut down before the kernel is destroyed still frees them.
  uint64_t shutdownToken = 0;
  std::atomic<bool> unloaded{false};
  /// Unloads every loaded entry, once (at host shutdown or destruction).
  void unloadAll();

  /// Set at any time, read only by launches that launch_enter hooks see.
  LaunchMetadataSlot launchMetadata;
  /// Only compiles are counted: a counter written on every launch would be
  /// a write shared by every launching thread (LaunchResult says whether a
  /// launch compiled).
  std::atomic<uint64_t> compiles{0};
  /// Entries loaded from the disk cache instead.
  std::atomic<uint64_t> diskHits{0};
  /// Entries loaded from the fleet cache (not found on disk).
  std::atomic<uint64_t> remoteHits{0};

  /// What a thread keeps for this kernel between launches
  /// (KernelLaunch.cpp).
  struct ThreadState;
  /// Whether the globals this kernel baked still hold, or what the policy
  /// made of a change. While no global was assigned since the last check,
  /// a launch pays one comparison here.
  absl::Status checkGlobals() {
    uint64_t version = module->globalsVersion.load(std::memory_order_acquire);
    if (version == checkedVersion.load(std::memory_order_acquire))
      return absl::OkStatus();
    return checkAssignedGlobals(version);
  }
  /// checkGlobals' comparison alone: no global was assigned since the last
  /// check. (Always inlined: the replay of a launch reads it, and GCC
  /// otherwise makes it a call of its own there.)
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool globalsUnchanged() const {
    return module->globalsVersion.load(std::memory_order_acquire) ==
           checkedVersion.load(std::memory_order_acquire);
  }
  /// checkGlobals after an assignment: compares the values at `version`
  /// with the baked ones, and records `version` as checked.
  absl::Status checkAssignedGlobals(uint64_t version);
  /// The pre-run hooks with the launch's arguments as given; the first
  /// hook error, which aborts the launch or warmup. Without such hooks, one
  /// inline check.
  absl::Status runPreRunHooks(absl::Span<const Argument> positional,
                              absl::Span<const KeywordArgument> keywords) {
    if (ABSL_PREDICT_TRUE(!host->hasPreRunHooks()))
      return absl::OkStatus();
    return describeToPreRunHooks(positional, keywords);
  }
  absl::Status
  describeToPreRunHooks(absl::Span<const Argument> positional,
                        absl::Span<const KeywordArgument> keywords);
  /// Whether the kernel's backend drives `device`, which the dispatch
  /// cache then covers; the backend's error, or the runtime's refusal of the
  /// device, otherwise. One comparison once the backend is found.
  absl::Status checkDevice(int32_t device) {
    const absl::StatusOr<const Backend *> &found = getBackend();
    if (ABSL_PREDICT_TRUE(dispatch.covers(device)))
      return absl::OkStatus();
    return refuseDevice(found, device);
  }
  ABSL_ATTRIBUTE_NOINLINE absl::Status
  refuseDevice(const absl::StatusOr<const Backend *> &found, int32_t device);
  /// Whether the device can run `record`'s block (32 x num_warps threads
  /// within its described max_threads_per_block); the refusal otherwise.
  absl::Status checkBlock(const SpecializationRecord &record, int32_t device);
  /// The kernel's backend, found on the first call: after that, one load.
  const absl::StatusOr<const Backend *> &getBackend() {
    if (ABSL_PREDICT_TRUE(backendFound.load(std::memory_order_acquire)))
      return backend;
    return findBackend();
  }
  const absl::StatusOr<const Backend *> &findBackend();
  void compile(Entry &entry, const SpecializationRecord &record, bool isWarmup,
               int32_t device);
  /// Loads `entry` from the disk cache; false on a miss (an unusable entry
  /// is rejected, which counts and removes it).
  bool loadFromDisk(cache::DiskCache &disk, Entry &entry, int32_t device,
                    const Backend &backend, const DeviceDescription &forDevice,
                    bool countMiss);
  /// Loads `entry` from the fleet cache, and writes what loaded to `disk`
  /// (may be null); false on a miss. `replaceable`: the store holds a bad
  /// value for the key that the compile's entry should replace
  /// (RemoteCache::get).
  bool loadFromRemote(RemoteCache &remote, cache::DiskCache *disk, Entry &entry,
                      int32_t device, const Backend &backend,
                      const DeviceDescription &forDevice, bool &replaceable);
  /// Loads a cached entry's kernel into `entry` on `device` (described by
  /// `forDevice`); false, with why in `why`, when its metadata does not fit
  /// the kernel or the device, or the backend refuses it.
  bool loadCached(const cache::EntryData &cached, Entry &entry, int32_t device,
                  const Backend &backend, const DeviceDescription &forDevice,
                  std::string &why);
  /// Loads `loadable` on `device` into `entry` (its handle and backend),
  /// handing the backend the entry's argument template.
  absl::StatusOr<plugin::BackendRef::LoadedKernel>
  loadEntry(const Backend &backend, int32_t device, std::string_view loadable,
            Entry &entry);
  /// Waits until `entry` is no longer pending; its error. A wait that
  /// could never end is refused instead: for an entry this thread is
  /// compiling (a hook or callback of that compile launched the same
  /// specialization), or for one whose compiling thread waits, through
  /// any chain of such waits, for an entry this thread is compiling.
  absl::Status waitFor(Entry &entry);
  /// The entry of `key` on `device`, ready or failed: the miss path (cache
  /// hook, compile, load) runs here once per key however many threads ask;
  /// the others wait. A failed or skipped entry is forgotten again.
  /// `record` is called only on a miss. `compiled` tells whether this call
  /// compiled, `diskHit` whether it found the kernel in the disk cache.
  /// Null, with `status` saying why, when checkBlock refuses the miss.
  Entry *ensureEntry(int32_t device, KeyView key,
                     absl::FunctionRef<SpecializationRecord()> record,
                     bool isWarmup, absl::Status &status, bool *compiled,
                     bool *diskHit = nullptr, bool *remoteHit = nullptr);
  /// A launch after the pre-run hooks, with `state` and `arguments` the
  /// thread's (or, for a nested launch, its own).
  absl::StatusOr<LaunchResult>
  launchWith(ThreadState &state, LaunchArguments &arguments,
             const LaunchConfig &config, absl::Span<const Argument> positional,
             absl::Span<const KeywordArgument> keywords);
  /// launchWith's entry when the thread remembers none for the key: looked
  /// up (or compiled) and remembered. Null with `status` OK when the cache
  /// hook skipped it, null with an error when it failed or when it is not
  /// loaded and `mayLoad` is false (LaunchConfig::mayLoad).
  ABSL_ATTRIBUTE_NOINLINE Entry *findEntry(ThreadState &state, int32_t device,
                                           uint64_t version,
                                           const BackendAttributes *attributes,
                                           bool mayLoad, LaunchResult &result,
                                           absl::Status &status);
  /// A launch from inside a launch of this thread (a hook, the grid or
  /// metadata callback): with a binding and arguments of its own.
  ABSL_ATTRIBUTE_NOINLINE absl::StatusOr<LaunchResult>
  launchNested(const LaunchConfig &config,
               absl::Span<const Argument> positional,
               absl::Span<const KeywordArgument> keywords);
  /// The autotuner's compile of one configuration, on any thread: binds
  /// as a launch would and runs the miss path through ensureEntry (cache
  /// hook, disk, fleet, compiler, finalize, load), so that a launch of the
  /// same specialization waits for it. No pre-run hook runs (the trials
  /// do). The error a launch would meet, else OK (also when a cache hook
  /// skipped it: the trial says so).
  absl::Status prepareTrial(const LaunchConfig &config,
                            absl::Span<const Argument> positional,
                            absl::Span<const KeywordArgument> keywords);
  /// One of the autotuner's trials: a launch as `Kernel::launch` makes it
  /// (pre-run hooks, bind, the entry found or compiled, launch hooks),
  /// with a binding of its own and never kept for a replay, and, when
  /// `correlationId` is not 0 and the backend can, timed on the device
  /// (KJIT_LAUNCH_TIMED) under that id. `*timed` tells whether the backend
  /// was asked to time it (false also for an empty grid, which launches
  /// nothing).
  absl::StatusOr<LaunchResult>
  launchTrial(const LaunchConfig &config, absl::Span<const Argument> positional,
              absl::Span<const KeywordArgument> keywords,
              uint64_t correlationId, bool *timed);
  /// What both do first: binds the call into `binding` as a launch would
  /// (with the backend's `attributes`, may be null), and checks the globals
  /// and the device.
  absl::Status bindTrial(const LaunchConfig &config,
                         absl::Span<const Argument> positional,
                         absl::Span<const KeywordArgument> keywords,
                         Binding &binding, const BackendAttributes *attributes);
  absl::Status launchEntry(const Entry &entry, const Binding &binding,
                           const LaunchConfig &config,
                           LaunchArguments &arguments);
  /// After a launch of values whose bind found its last inputs again: keeps
  /// it in `state` to be made again as it was (KernelLaunch.cpp,
  /// LastLaunch), when it qualifies.
  ABSL_ATTRIBUTE_NOINLINE void
  keepLastLaunch(ThreadState &state, const Entry &entry,
                 const LaunchConfig &config, const LaunchArguments &arguments,
                 absl::Span<const Argument> positional,
                 absl::Span<const KeywordArgument> keywords) const;
  /// launchEntry's rarer paths, kept out of its code: a grid beyond i32,
  /// and a launch that passes kjit_args (a backend that did not take the
  /// template, or launch hooks to describe it to).
  ABSL_ATTRIBUTE_NOINLINE absl::Status gridTooLarge(const Grid &grid) const;
  /// The entry's launch values from the binding into `arguments`, when
  /// they are not those of the last launch (a memo hit skips it).
  ABSL_ATTRIBUTE_NOINLINE static void encodeValues(const Entry &entry,
                                                   const Binding &binding,
                                                   size_t count,
                                                   LaunchArguments &arguments);
  ABSL_ATTRIBUTE_NOINLINE absl::Status
  launchArguments(const Entry &entry, const Binding &binding,
                  const LaunchConfig &config, const Grid &grid, bool empty,
                  bool hooked, kjit_backend_launch_args &launch,
                  LaunchArguments &arguments);
};

/// The implementation of `kernel` (Module.h's friend).
Kernel::Impl &kernelImpl(Kernel &kernel);

} // namespace kjit::rt

#endif // KJIT_LIB_RUNTIME_KERNELIMPL_H
