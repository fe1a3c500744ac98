//===- PluginInternal.h - shared internals of the plugin host ---*- C++ -*-===//
//
// What the files of the plugin host (lib/Runtime/Plugin) share: the C-side
// objects (statuses, host contexts), the host's kjit_host_api table, one
// loaded plugin and the rules for calling into it, and small conversions.
// Runtime core: no LLVM or MLIR header may be included here.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_RUNTIME_PLUGIN_PLUGININTERNAL_H
#define KJIT_LIB_RUNTIME_PLUGIN_PLUGININTERNAL_H

#include "CallTracker.h"
#include "kjit/Plugin/PluginHost.h"
#include "kjit/Support/StrCat.h"

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/container/inlined_vector.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace kjit::plugin {
struct LoadedPlugin;
} // namespace kjit::plugin

/// The opaque status of the C ABI. Only the host creates and frees these, so
/// one allocator owns every status whichever plugin returned it; every live
/// one is in a registry (CApi.cpp), so that a pointer a plugin made itself is
/// recognized before the host reads or frees it.
struct kjit_status {
  int32_t code;
  std::string message;
};

/// What init receives: identifies the plugin (and its host) in log calls and
/// asynchronous error reports.
struct kjit_host_context {
  kjit::plugin::PluginHost *host = nullptr;
  kjit::plugin::LoadedPlugin *plugin = nullptr;
  std::string name;
};

namespace kjit::plugin::detail {

//===----------------------------------------------------------------------===//
// The C API (CApi.cpp)
//===----------------------------------------------------------------------===//

/// The host's function table, handed to every plugin's init.
extern const kjit_host_api kHostApi;

kjit_status *statusCreate(int32_t code, const char *message, size_t messageLen);
/// Frees a status the host made; ignores (never frees) any other pointer.
void statusDestroy(kjit_status *status);

/// What a plugin's (non-NULL) status said, read and freed. A pointer the
/// host did not make reads as KJIT_STATUS_INTERNAL with a message saying so,
/// and is neither read nor freed.
struct TakenStatus {
  int32_t code;
  std::string message;
};
TakenStatus takeStatus(kjit_status *status);

//===----------------------------------------------------------------------===//
// Bounds on what plugins hand the host (docs/PluginABI.md, "Bounds")
//===----------------------------------------------------------------------===//

/// Names, versions, targets, archs, format and option names and values.
constexpr size_t kMaxNameBytes = 4096;
/// Status messages, reject reasons, log lines: longer ones are cut.
constexpr size_t kMaxMessageBytes = 65536;
/// Entries of a list a backend describes (formats, compile options).
constexpr size_t kMaxListEntries = 1024;
/// A backend's fingerprint.
constexpr uint64_t kMaxFingerprintBytes = 65536;
/// A loadable artifact or a cache store's value.
constexpr uint64_t kMaxBufferBytes = uint64_t(1) << 32;
/// Bound on what a backend reports of a finalized kernel (ABI 1.5).
constexpr uint64_t kMaxFinalizeInfoBytes = 65536;

/// Checks a name-like string a plugin returned: not NULL when not empty, at
/// most kMaxNameBytes, no NUL and no control byte. A NUL before `size` means
/// the length lies; the scan stops there, so a NUL-terminated string is never
/// read past its terminator whatever `size` claims. Returns "" when the
/// string is good, else what is wrong with `what` ("plugin name").
std::string checkName(const char *data, size_t size, std::string_view what);

/// A message a plugin returned, bounded: cut at its first NUL and at
/// kMaxMessageBytes (the scan never reads past either).
std::string_view boundedMessage(const char *data, size_t size);

//===----------------------------------------------------------------------===//
// Small helpers
//===----------------------------------------------------------------------===//

inline std::string_view view(const char *data, size_t size) {
  return data ? std::string_view(data, size) : std::string_view();
}

/// Copies a plugin's table into a zeroed host-sized struct, so slots the
/// plugin's (older) header did not have read as NULL ("unsupported") and
/// slots of a newer header are ignored.
template <typename Table> Table copyTable(const Table *table) {
  Table copy;
  std::memset(&copy, 0, sizeof(copy));
  std::memcpy(&copy, table, std::min(table->struct_size, sizeof(Table)));
  return copy;
}

/// A zeroed args struct whose struct_size is the host's sizeof.
template <typename Args> Args zeroed() {
  Args args;
  std::memset(&args, 0, sizeof(args));
  args.struct_size = sizeof(args);
  return args;
}

inline kjit_buffer emptyBuffer() { return zeroed<kjit_buffer>(); }

/// Copies a plugin-produced buffer and releases it. A NULL `data` with a
/// size, or a size above `limit`, is an error naming the plugin and `entry`
/// (nothing is read; the buffer is still released).
absl::StatusOr<std::string> takeBuffer(const LoadedPlugin &plugin,
                                       const char *entry, kjit_buffer &buffer,
                                       uint64_t limit);

/// Turns a plugin's status into an absl::Status naming the plugin and entry,
/// and destroys it. NULL is OK.
absl::Status toAbsl(const LoadedPlugin &plugin, const char *entry,
                    kjit_status *status);

/// "plugin 'x' (path): <table> does not implement <entry>", where table is
/// "backend" or "cache store".
absl::Status unsupported(const LoadedPlugin &plugin, const char *table,
                         const char *entry);

/// "plugin 'x' (path) has been shut down".
absl::Status gone(const LoadedPlugin &plugin);

/// The status's message as a std::string.
inline std::string text(const absl::Status &status) {
  return std::string(status.message().data(), status.message().size());
}

/// The C view of a list of arguments; kjit_arg pointers stay valid as long
/// as this object does.
class ArgArray {
public:
  explicit ArgArray(absl::Span<const ArgInfo> args);
  size_t size() const { return pointers.size(); }
  const kjit_arg *const *data() const {
    return pointers.empty() ? nullptr : pointers.data();
  }

private:
  absl::InlinedVector<kjit_arg, 8> storage;
  absl::InlinedVector<const kjit_arg *, 8> pointers;
};

/// The serialization lock of a plugin library (by dlopen handle), shared by
/// every host of the process: a plugin without KJIT_CAP_THREAD_SAFE may keep
/// process-wide state, so two hosts must not call it at once either.
std::shared_ptr<std::recursive_mutex> serialLockFor(void *handle);

} // namespace kjit::plugin::detail

namespace kjit::plugin {

/// One plugin as one host loaded it.
struct LoadedPlugin {
  // What every launch reads comes first, together: a GPU launch between two
  // of them evicts much of the L1.
  std::atomic<bool> alive{true};
  bool threadSafe = false;
  uint32_t minor = 0;
  void *self = nullptr;
  kjit_backend_table backend;
  bool hasBackend = false;

  std::string path;
  std::string name;
  void *handle = nullptr;
  const kjit_plugin_api *api = nullptr;
  kjit_host_context context;
  kjit_hook_table hooks;
  bool hasHooks = false;
  kjit_cache_store_table store;
  bool hasStore = false;

  /// Serializes every entry of a plugin that is not thread-safe, across
  /// hosts. Recursive because a hook may re-enter the runtime (launch from a
  /// launch hook).
  std::shared_ptr<std::recursive_mutex> serial;
  /// Calls running now on other threads are in their CallTracker records;
  /// those nested deeper than a record holds are counted here. Shutdown
  /// waits on `drained` until none is left but its own thread's.
  std::atomic<int> deepCalls{0};
  std::mutex drainMutex;
  std::condition_variable drained;

  /// A call nested deeper than CallTracker::kMaxDepth, on this thread's
  /// stack: such calls form a list, innermost first, so that a shutdown
  /// from inside one does not wait for itself. (A plain pointer, so that
  /// nothing is destroyed at thread exit before a host destroyed later
  /// still looks at it.)
  struct DeepCall {
    const LoadedPlugin *plugin;
    const DeepCall *outer;
  };
  [[gnu::tls_model("initial-exec")]] static inline thread_local const DeepCall
      *innermostDeepCall = nullptr;

  /// How many of this plugin's deep calls this thread is inside of.
  int deepCallsOnThisThread() const {
    int n = 0;
    for (const DeepCall *c = innermostDeepCall; c; c = c->outer)
      n += c->plugin == this;
    return n;
  }

  /// Runs `fn` under the plugin's contract: serialized unless thread-safe,
  /// never after fini, no exception escaping. Returns false when the plugin
  /// is gone.
  template <typename Fn> bool call(Fn &&fn) {
    if (threadSafe)
      return enter(fn);
    // The serialization lock comes first: a call waiting for it is not yet
    // published, so a shutdown from inside the call that holds it (a hook
    // of this plugin) does not wait for the waiter, which then finds the
    // plugin gone.
    std::lock_guard<std::recursive_mutex> lock(*serial);
    return enter(fn);
  }

  /// Publishes the call in this thread's record, checks that the plugin is
  /// still alive and runs `fn`. Always inlined: otherwise every backend
  /// launch is a frame of its own between the runtime and the plugin, and
  /// costs four more lines of code with cold caches (docs/Dispatch.md).
  template <typename Fn> ABSL_ATTRIBUTE_ALWAYS_INLINE bool enter(Fn &fn) {
    CallTracker::Record &record = CallTracker::mine();
    const int depth = record.depth.load(std::memory_order_relaxed);
    DeepCall deep{this, innermostDeepCall};
    if (ABSL_PREDICT_TRUE(depth < CallTracker::kMaxDepth)) {
      // Release: a shutdown that reads this slot with acquire and finds
      // another plugin there sees this call's end as well.
      record.plugins[depth].store(this, std::memory_order_release);
    } else {
      deepCalls.fetch_add(1);
      innermostDeepCall = &deep;
    }
    record.depth.store(depth + 1, std::memory_order_release);
    struct Leave {
      LoadedPlugin &p;
      CallTracker::Record &record;
      int depth;
      const DeepCall &deep;
      ~Leave() {
        record.depth.store(depth, std::memory_order_release);
        if (ABSL_PREDICT_FALSE(depth >= CallTracker::kMaxDepth)) {
          innermostDeepCall = deep.outer;
          p.deepCalls.fetch_sub(1);
        }
        // A shutdown waiting for this call polls, so it needs no wake-up;
        // one sent when this thread sees it is only sooner.
        if (ABSL_PREDICT_FALSE(!p.alive.load(std::memory_order_relaxed))) {
          {
            std::lock_guard<std::mutex> lock(p.drainMutex);
          }
          p.drained.notify_all();
        }
      }
    } leave{*this, record, depth, deep};
    // The push above before this check, against drain's marking and heavy
    // barrier (CallTracker.h): either drain sees the push, or this sees
    // the plugin gone.
    CallTracker::lightBarrier();
    if (!alive.load(std::memory_order_relaxed))
      return false;
    fn();
    return true;
  }

  /// Marks the plugin gone and waits until no other thread is inside one of
  /// its entries.
  void drain() {
    alive.store(false);
    CallTracker::heavyBarrier();
    int mine = deepCallsOnThisThread();
    std::unique_lock<std::mutex> lock(drainMutex);
    // Polled as well as woken: a call that left without seeing the plugin
    // gone sends no wake-up.
    while (CallTracker::othersInside(this) || deepCalls.load() > mine)
      drained.wait_for(lock, std::chrono::milliseconds(1));
  }

  /// Logs and counts an error the plugin reported asynchronously; takes
  /// the status.
  void reportAsyncError(std::string_view kernel, kjit_status *status);

  /// Describes this plugin in messages: its name and where it came from.
  std::string describe() const {
    return kjit::strCat("plugin '", name, "' (", path, ")");
  }
};

} // namespace kjit::plugin

#endif // KJIT_LIB_RUNTIME_PLUGIN_PLUGININTERNAL_H
