//===- DispatchCache.h - compiled entries per device ------------*- C++ -*-===//
//
// The one owner of what a launch finds its compiled kernel in: per device, a
// table from specialization key to entry that launches read without a lock,
// and a version that says whether anything a thread remembers of a lookup
// still holds. docs/Dispatch.md ("The dispatch cache") states the
// invariants; in short:
//
// - A table is open addressing over atomic entry pointers. A slot goes from
//   empty to an entry to dropped, never back, so a reader that probes while
//   a writer inserts or drops sees either state of each slot, both of which
//   it handles. Writers hold one mutex.
// - A table that fills up is replaced by one of twice its size, and the old
//   one is retired, never freed: a reader may still be probing it. Sizes
//   double, so the retired tables of a device hold fewer slots together
//   than its live one (memory linear in the entries; a copy-on-write map
//   per insert retained quadratic memory).
// - Entries are owned here and live as long as the cache: a thread may
//   still launch one that was dropped (a recompile after a global changed).
// - A device's version changes whenever an entry is dropped from its table
//   (forget, clear), never on insert: an entry stays its key's until
//   dropped. Whatever remembers a lookup (a thread's last entry, its last
//   launch) keeps the version it was made under and holds while the version
//   is unchanged. That comparison is the cache's one invalidation path.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_RUNTIME_DISPATCHCACHE_H
#define KJIT_LIB_RUNTIME_DISPATCHCACHE_H

#include "kjit/Model/Binder.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace kjit::rt {

struct Entry;

class DispatchCache {
public:
  DispatchCache();
  ~DispatchCache();
  DispatchCache(const DispatchCache &) = delete;
  DispatchCache &operator=(const DispatchCache &) = delete;

  /// Sizes the tables for the backend's devices. Called once, before any
  /// other call names a device (when the kernel finds its backend).
  void setDeviceCount(int32_t count);
  /// Whether `device` has a table (0 <= device < the backend's count).
  bool covers(int32_t device) const {
    return static_cast<uint32_t>(device) < static_cast<uint32_t>(count_);
  }

  /// The version of `device`'s table (covered): 1 at first, changed by
  /// every forget and clear. Never 0, which a memo can use for "nothing".
  uint64_t version(int32_t device) const {
    return devices_[device].version.load(std::memory_order_acquire);
  }
  /// The entry of `key` on `device` (covered), or null. Lock-free.
  Entry *find(int32_t device, KeyView key) const;
  /// After `find` missed: under the write lock, the entry another thread
  /// inserted meanwhile, or a new pending one (`inserted`) that the caller
  /// compiles.
  Entry *insert(int32_t device, KeyView key, bool &inserted);
  /// Drops the entry of `key` on `device` (a failed or skipped compile), so
  /// that the next launch misses again.
  void forget(int32_t device, KeyView key);
  /// Drops every entry of every device (the kernel's baked globals changed
  /// under the recompile policy).
  void clear();
  /// Calls `fn` for every entry ever made, dropped ones included, under the
  /// write lock (unloading them all).
  void forEachEntry(const std::function<void(Entry &)> &fn);

private:
  struct Table;
  /// A device's live table (null until its first insert, and after a
  /// clear) and its version, on a cache line of their own.
  struct alignas(64) Device {
    std::atomic<Table *> table{nullptr};
    std::atomic<uint64_t> version{1};
  };
  /// The device's table with room for one more entry: the live one, or a
  /// new one of twice its size with its entries, published in its place.
  Table &tableWithRoom(Device &device);

  std::unique_ptr<Device[]> devices_;
  int32_t count_ = 0;
  std::mutex writeMutex_;
  /// Every table made, live or retired (retired ones may still be read).
  std::vector<std::unique_ptr<Table>> tables_;
  std::vector<std::shared_ptr<Entry>> entries_;
};

} // namespace kjit::rt

#endif // KJIT_LIB_RUNTIME_DISPATCHCACHE_H
