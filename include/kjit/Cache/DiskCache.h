//===- DiskCache.h - the persistent cache of kernels ------------*- C++ -*-===//
//
// A directory of self-validating entries (EntryFormat.h), shared by every
// process of a user:
//
//   DIR/CACHEDIR.TAG             marks the directory as kjit's cache, for
//                                backup tools and for kjit itself
//   DIR/entries/ab/<key>         one entry per key (ab: its first two digits)
//   DIR/entries/ab/.tmp.*        a put in progress (never a valid name)
//   DIR/locks/<key>              the advisory lock of a compile of <key>
//   DIR/stats                    the counters of kjit-cache stats (its own
//                                lock, rewritten in place)
//   DIR/cleanup.lock             one eviction at a time
//
// Everything is opened relative to the directory's descriptor with
// O_NOFOLLOW, so no symbolic link inside it is ever followed, and the
// directory must be the user's own and not writable by others. kjit writes
// only into a directory that is its cache (its CACHEDIR.TAG) or empty, and
// touches only the names above in it. Every read is validated; an invalid
// entry is a miss that is counted, logged and removed (the caller compiles
// and puts the entry back). A put writes a temporary file and renames it,
// so a reader sees an old entry, a new one or none, even when the writer is
// killed. No error here ever fails a launch: the caller falls back to
// compiling. Rationale: docs/DiskCache.md.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_CACHE_DISKCACHE_H
#define KJIT_CACHE_DISKCACHE_H

#include "kjit/Cache/EntryFormat.h"

#include "absl/status/statusor.h"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace kjit::cache {

/// The size cap when KJIT_CACHE_MAX_SIZE is not set.
inline constexpr uint64_t kDefaultMaxSize = uint64_t(1) << 30;
/// How long a process waits for another one compiling the same key.
inline constexpr std::chrono::milliseconds kDefaultLockTimeout{60000};
/// Temporary files and lock files older than this are stale (a killed
/// writer's); eviction removes them.
inline constexpr int64_t kStaleSeconds = 3600;

/// The counters of `kjit-cache stats`, persisted in DIR/stats.
enum class Counter : size_t {
  ArtifactHits,
  ArtifactMisses,
  ManifestHits,
  ManifestMisses,
  /// Compiles after a disk miss (each put an entry back, or tried to).
  Compiles,
  /// Invalid entries found (and removed) by reads.
  Corrupt,
  Evictions,
  /// Puts that failed (no space, read-only, I/O error): nothing was stored.
  WriteErrors,
  /// Waits for another process's compile that ran out.
  LockTimeouts,
  BytesWritten,
  BytesRead,
  // The fleet cache (docs/RemoteCache.md), counted here when a disk cache
  // is open so that `kjit-cache stats` shows every process's.
  /// Values that passed verification and loaded.
  RemoteHits,
  RemoteMisses,
  /// Lookups and publications the store did not attempt (its circuit
  /// breaker was open, or writes are denied): misses that cost nothing.
  RemoteSkipped,
  /// Store errors other than timeouts (refused, reset, garbage, denied).
  RemoteErrors,
  RemoteTimeouts,
  /// Values rejected: bad HMAC, a replay, another version, a digest or
  /// entry that does not check, or one the backend would not load.
  RemoteVerifyFailures,
  /// Entries published (stored by the store; kept ones not counted).
  RemotePuts,
  /// Publications dropped: the queue was full, the value too large for
  /// the store, or the process exited first.
  RemoteDropped,
  RemoteBytesRead,
  RemoteBytesWritten,
  Count,
};
inline constexpr size_t kCounterCount = size_t(Counter::Count);
/// "artifact_hits", ... (the stats file's and --json's names).
const char *counterName(Counter counter);

struct Stats {
  std::array<uint64_t, kCounterCount> counters{};
  /// The bytes of entries as last counted (eviction's estimate).
  uint64_t sizeEstimate = 0;
  bool sizeKnown = false;
  uint64_t operator[](Counter counter) const {
    return counters[size_t(counter)];
  }
};

/// A size: "1073741824", "512K", "64M", "1G", "2GiB" (powers of 1024).
std::optional<uint64_t> parseSize(std::string_view text);
/// "1.5 GiB", "12.0 KiB", "900 B".
std::string formatSize(uint64_t bytes);
/// A duration: "500ms", "30s", "2m", "12h", "7d"; a number alone is
/// seconds.
std::optional<std::chrono::milliseconds> parseDuration(std::string_view text);

/// Where the cache lives without KJIT_CACHE_DIR: $XDG_CACHE_HOME/kjit, else
/// $HOME/.cache/kjit, else empty (no home: no disk cache).
std::string defaultDirectory();

/// kjit's own environment variables that change what a compile produces:
/// their values join every artifact's key ("unset" and "empty" alike). A
/// backend plugin folds the variables that change its code into its own
/// fingerprint (the cuda toolkit's: plugins/cuda/Toolkit.c), which joins
/// the key as well; they are in neither list.
const std::vector<std::string> &codegenEnvironment();
/// kjit's other variables, which never change generated code. Every
/// variable kjit reads is in one of the two lists or in a plugin's
/// fingerprint_environment (test/Cache/env-registry.test checks the
/// sources).
const std::vector<std::string> &neutralEnvironment();

struct DiskCacheOptions {
  std::string directory;
  uint64_t maxSize = kDefaultMaxSize;
  std::chrono::milliseconds lockTimeout = kDefaultLockTimeout;
  /// fsync each entry and its directory before it is published (survives
  /// power loss, not only crashes; KJIT_CACHE_FSYNC=1).
  bool durable = false;
  /// Create the directory (0700) when it is missing, and make an empty one
  /// kjit's cache (write its CACHEDIR.TAG). Without it, a missing or empty
  /// directory is NotFound: there is no cache there.
  bool create = true;
  /// Inspect only (kjit-cache stats, list, show, verify): nothing in the
  /// directory is created, changed or removed, and counts are not kept.
  /// Implies not `create`; puts, locks, pruning and clearing do nothing.
  bool readOnly = false;
  /// Warnings (problems the cache worked around) and, with `verbose`,
  /// notes of every hit, miss and put.
  std::function<void(std::string_view)> warn;
  std::function<void(std::string_view)> note;
  bool verbose = false;
  /// Tests of putIfAbsent's fallbacks on a file system that has what they
  /// stand in for: act as if renameat2(RENAME_NOREPLACE) were refused
  /// (EINVAL), or hard links too.
  bool noRenameNoReplace = false;
  bool noHardLinks = false;
};

/// One entry as listed.
struct Listing {
  std::string key;
  uint64_t size = 0;
  /// The last use (a hit touches it) or the write, Unix nanoseconds.
  int64_t mtimeNanos = 0;
};

/// The persistent cache. Thread-safe; any number of processes may share
/// a directory.
class DiskCache {
public:
  /// Opens (and with `create`, makes) the directory. Errors say why it is
  /// not used: another owner, writable by others, not a directory, or a
  /// directory that is not empty and not marked as kjit's cache (kjit
  /// writes nothing into it). NotFound: no cache there and none made.
  static absl::StatusOr<std::unique_ptr<DiskCache>>
  open(DiskCacheOptions options);
  /// Writes the counters not yet written.
  ~DiskCache();
  DiskCache(const DiskCache &) = delete;
  DiskCache &operator=(const DiskCache &) = delete;

  const std::string &directory() const { return options_.directory; }
  const DiskCacheOptions &options() const { return options_; }

  /// A read. `Invalid` entries were counted, logged and removed.
  struct Lookup {
    enum class Result { Hit, Absent, Invalid } result = Result::Absent;
    EntryData entry;
    /// Why the entry was invalid.
    std::string problem;
  };
  /// `countMiss` false: an absent entry is not counted (a second look
  /// after waiting for another process's compile).
  Lookup get(EntryKind kind, std::string_view key, bool countMiss = true);
  /// An entry that read well but cannot be used (its metadata does not fit
  /// the kernel, the backend refused to load it): counted, logged, removed.
  void reject(std::string_view key, std::string_view why);
  /// Stores an entry (temporary file, then rename). False when it could not
  /// (counted and logged once per process); then nothing was published.
  bool put(const EntryData &entry);
  /// What putIfAbsent did.
  enum class PutResult { Stored, Exists, Failed };
  /// Stores an entry unless its key has one (of any content: the caller
  /// reads it with get, which checks it): the first writer of a key wins,
  /// across threads and processes. renameat2(RENAME_NOREPLACE), else
  /// linkat, else (no hard links) a look before the rename, which is not
  /// atomic. Failed: as put's false.
  PutResult putIfAbsent(const EntryData &entry);

  /// The lock of a compile of one key, across processes and threads. Not
  /// held when waiting timed out or the lock file cannot be opened: the
  /// caller compiles anyway.
  class KeyLock {
  public:
    KeyLock() = default;
    KeyLock(KeyLock &&other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
    KeyLock &operator=(KeyLock &&other) noexcept;
    ~KeyLock();
    bool held() const { return fd_ >= 0; }
    /// How long acquiring it took.
    std::chrono::milliseconds waited{0};

  private:
    friend class DiskCache;
    int fd_ = -1;
  };
  /// `doing`: what the holder does with the key, for the message of a wait
  /// that timed out ("compiling", "tuning").
  KeyLock lock(std::string_view key, std::string_view doing = "compiling");

  void count(Counter counter, uint64_t amount = 1);
  /// Merges this process's counters into DIR/stats (under its flock).
  void flushStats();
  /// The persisted counters plus this process's unwritten ones.
  Stats stats();
  /// Sets every counter to zero.
  absl::Status zeroStats();

  /// Maintenance (kjit-cache). The entries, oldest use first.
  std::vector<Listing> list();
  /// Reads an entry without counting, touching or removing it.
  absl::StatusOr<EntryData> read(std::string_view key,
                                 EntryHeader *header = nullptr);
  /// The path of an entry's file.
  std::string entryPath(std::string_view key) const;

  struct PruneResult {
    uint64_t evicted = 0, evictedBytes = 0, keptBytes = 0, keptEntries = 0;
    uint64_t staleTemporaries = 0, staleLocks = 0;
    /// False when it did nothing: `problem` says why, and `busy` is true
    /// when another process was evicting (normal without `wait`).
    bool ran = true;
    bool busy = false;
    std::string problem;
  };
  /// Evicts least recently used entries until they fit in 90% of
  /// `maxSize` (none when they fit already), and removes temporary and lock
  /// files older than `staleSeconds` (negative: 0; more than the seconds
  /// since the epoch: none). Only names kjit makes are touched. Tolerates
  /// files vanishing under it. One eviction at a time (DIR/cleanup.lock):
  /// `wait` waits up to a minute for another one instead of giving up.
  PruneResult prune(uint64_t maxSize, int64_t staleSeconds = kStaleSeconds,
                    bool wait = false);
  /// Removes every entry, lock and temporary file (names kjit makes, and
  /// nothing else); the counters stay. The number of entries removed, or
  /// an error when some could not be.
  /// `which`: only the valid entries (judged by their header) of the kinds
  /// it accepts; temporary and lock files stay.
  absl::StatusOr<uint64_t>
  clear(const std::function<bool(EntryKind)> &which = {});

private:
  DiskCache(DiskCacheOptions options, int root);
  int openShard(std::string_view key, bool create);
  PutResult store(const EntryData &entry, bool ifAbsent);
  int publishIfAbsent(int shard, const std::string &temp,
                      const std::string &name);
  /// Why the open shard of `key` may not be used (another owner, writable
  /// by others), or empty.
  std::string shardProblem(int shard, std::string_view key) const;
  /// Removes the entry file or directory at `name` if it is still the one
  /// open as `fd` (-1: whatever is there). Empty, or why it could not.
  std::string removeEntry(int shard, std::string_view name, int fd);
  void warnOnce(int which, std::string_view message);
  /// True the first time this process finds `key`'s invalid entry
  /// impossible to remove, so that it is said once, not at every look.
  bool firstTimeKept(std::string_view key);
  void warn(std::string_view message);
  void note(std::string_view message);
  void maybeEvict();
  /// Changes DIR/stats under its flock; 0 or the errno that stopped it.
  int updateStats(const std::function<void(Stats &)> &change);

  DiskCacheOptions options_;
  int root_ = -1;
  int entries_ = -1;
  int locks_ = -1;
  std::array<std::atomic<uint64_t>, kCounterCount> pending_{};
  std::atomic<int64_t> pendingSize_{0};
  std::mutex statsMutex_;
  std::atomic<uint32_t> warned_{0};
  std::mutex keptMutex_;
  std::set<std::string> kept_;
};

} // namespace kjit::cache

#endif // KJIT_CACHE_DISKCACHE_H
