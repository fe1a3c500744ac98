//===- RemoteCache.h - the fleet cache tier over a cache store --*- C++ -*-===//
//
// The third lookup, after memory and disk: a cache store plugin (Redis)
// shared by machines. The store is trusted with nothing. Every value is a
// signed envelope (kjit/Cache/RemoteEnvelope.h) around one disk cache
// entry, opened and checked here before any byte of it reaches the disk
// cache or a backend's loader; a value that fails is a miss and a counted
// verification failure. Publication runs on a background thread and never
// delays a launch. Rationale: docs/RemoteCache.md. No LLVM or MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_RUNTIME_REMOTECACHE_H
#define KJIT_LIB_RUNTIME_REMOTECACHE_H

#include "kjit/Cache/DiskCache.h"
#include "kjit/Cache/EntryFormat.h"
#include "kjit/Plugin/PluginHost.h"

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace kjit::rt {

struct RemoteCacheSettings {
  /// The shared secret's file (KJIT_REDIS_KEY_FILE); empty: none, and the
  /// remote cache stays off.
  std::string keyFile;
  /// Entries expire after this long in the store (KJIT_REMOTE_CACHE_TTL).
  std::chrono::seconds ttl{7 * 24 * 3600};
  /// How long the process's exit waits for queued publications.
  std::chrono::milliseconds drainTimeout{5000};
};

class RemoteCache {
public:
  /// The remote tier over the first cache store `host` loaded, or null when
  /// there is none (quietly) or it cannot be used (why is logged: no key
  /// file, a bad key file). `disk` (may be null) receives the counters.
  static std::unique_ptr<RemoteCache> open(const RemoteCacheSettings &settings,
                                           plugin::PluginHost &host,
                                           cache::DiskCache *disk);
  /// Drains the publications (at most the drain timeout) and stops.
  ~RemoteCache();
  RemoteCache(const RemoteCache &) = delete;
  RemoteCache &operator=(const RemoteCache &) = delete;

  /// A verified entry of `kind` stored under `key` (the disk cache's key),
  /// or nullopt: a miss, a store error or a rejected value (each counted,
  /// errors and rejections logged; a value the store would not hand over
  /// for its size, OUT_OF_RANGE, is a rejection). `*replaceable`: the store
  /// holds a bad value that a good one should replace; never one signed
  /// with another secret, which may be another fleet's (or a forger's) and
  /// is left alone.
  std::optional<cache::EntryData>
  get(std::string_view key, bool *replaceable = nullptr,
      cache::EntryKind kind = cache::EntryKind::Artifact);
  /// A value from get loaded: counted as a hit.
  void hit() { add(cache::Counter::RemoteHits); }
  /// A value that verified but cannot be used (the backend would not load
  /// it, its metadata does not fit): counted and logged as a rejection
  /// ("compiling instead"; "timing instead" for the autotuner's kinds).
  void reject(std::string_view key, std::string_view why,
              cache::EntryKind kind = cache::EntryKind::Artifact);
  /// Queues `entry` for the store; returns at once. A full queue drops it
  /// (counted). The first writer of a key wins, unless `replace`: the key
  /// holds a replaceable bad value (see get).
  void publish(cache::EntryData entry, bool replace = false);
  /// Stores `entry` now, on this thread, unless the store holds a value
  /// under its key (or, with `replace`, whatever it holds), bounded by the
  /// store's timeout: the autotuner's choice, which cannot wait in a
  /// queue. OK when the store answered, stored or kept; the store's error
  /// otherwise (counted, not logged: the caller says what it does
  /// instead). Whether this value is the one stored, only a get says: the
  /// ABI lets a store that kept another value answer as if it stored.
  absl::Status publishNow(const cache::EntryData &entry, bool replace = false);
  /// Waits until the queued publications are done or `timeout` passed;
  /// what is left is dropped (counted). Then the worker stops: later
  /// publications are dropped. Called before the plugin host shuts down.
  void drain(std::chrono::milliseconds timeout);

  /// The store's name ("redis").
  std::string storeName() const { return std::string(store_.name()); }
  /// This process's count of `counter` (a remote one).
  uint64_t count(cache::Counter counter) const;
  /// The key under which the store holds the entry of disk key `key`: the
  /// kjit version, the envelope version and the kind ("a/" artifacts, "m/"
  /// manifests, "t/" timing records, "c/" choices: a value of one kind
  /// never answers for another), then the disk key (which covers the build
  /// identity).
  static std::string storeKey(std::string_view key, cache::EntryKind kind);

private:
  RemoteCache(plugin::PluginHost &host, plugin::CacheStoreRef store,
              std::string secret, const RemoteCacheSettings &settings,
              uint64_t maxValueSize, cache::DiskCache *disk);
  void add(cache::Counter counter, uint64_t amount = 1);
  /// Counts and logs a store error of `operation`; CANCELLED (the store
  /// did not try) is counted as skipped and not logged.
  void storeError(const absl::Status &status, std::string_view operation);
  void work();

  plugin::PluginHost &host_;
  plugin::CacheStoreRef store_;
  std::string secret_;
  std::string writerId_;
  RemoteCacheSettings settings_;
  uint64_t maxValueSize_;
  cache::DiskCache *disk_;
  std::array<std::atomic<uint64_t>, cache::kCounterCount> counts_{};

  std::mutex queueMutex_;
  std::condition_variable queueChanged_;
  struct Publication {
    cache::EntryData entry;
    bool replace = false;
  };
  std::deque<Publication> queue_;
  size_t queuedBytes_ = 0;
  /// The entry the worker is publishing (drain waits for it too).
  bool busy_ = false;
  bool stopping_ = false;
  std::thread worker_;
};

} // namespace kjit::rt

#endif // KJIT_LIB_RUNTIME_REMOTECACHE_H
