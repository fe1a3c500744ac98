//===- DispatchCache.cpp - a kernel's compiled entries, per device --------===//

#include "DispatchCache.h"

#include "KernelImpl.h"

#include <thread>

namespace kjit::rt {

namespace {
/// A slot whose entry was dropped: probes go on past it.
Entry *dropped() { return reinterpret_cast<Entry *>(uintptr_t(1)); }

/// Slots of a device's first table.
constexpr size_t kFirstCapacity = 8;
} // namespace

struct DispatchCache::Table {
  explicit Table(size_t capacity)
      : mask(capacity - 1),
        slots(std::make_unique<std::atomic<Entry *>[]>(capacity)) {}
  const size_t mask;
  const std::unique_ptr<std::atomic<Entry *>[]> slots;
  /// Slots holding an entry or dropped (written under the write lock).
  size_t used = 0;

  size_t capacity() const { return mask + 1; }
  /// Places `entry` in the first empty slot of its probe sequence (the
  /// caller made room; writers only).
  void place(Entry *entry) {
    size_t i = entry->lookupKey.hash() & mask;
    while (slots[i].load(std::memory_order_relaxed))
      i = (i + 1) & mask;
    slots[i].store(entry, std::memory_order_release);
    ++used;
  }
};

DispatchCache::DispatchCache() = default;
DispatchCache::~DispatchCache() = default;

void DispatchCache::setDeviceCount(int32_t count) {
  count_ = count > 0 ? count : 0;
  devices_ = std::make_unique<Device[]>(size_t(count_));
}

Entry *DispatchCache::find(int32_t device, KeyView key) const {
  const Table *table = devices_[device].table.load(std::memory_order_acquire);
  if (!table)
    return nullptr;
  // At most half the slots are used, so a probe ends at an empty one.
  for (size_t i = key.hash & table->mask;; i = (i + 1) & table->mask) {
    Entry *entry = table->slots[i].load(std::memory_order_acquire);
    if (!entry)
      return nullptr;
    if (entry != dropped() && entry->lookupKey.view() == key)
      return entry;
  }
}

DispatchCache::Table &DispatchCache::tableWithRoom(Device &device) {
  Table *live = device.table.load(std::memory_order_relaxed);
  // At most half full after this insert (dropped slots count).
  if (live && 2 * (live->used + 1) <= live->capacity())
    return *live;
  size_t capacity = live ? 2 * live->capacity() : kFirstCapacity;
  auto next = std::make_unique<Table>(capacity);
  if (live)
    for (size_t i = 0; i < live->capacity(); ++i) {
      Entry *entry = live->slots[i].load(std::memory_order_relaxed);
      if (entry && entry != dropped())
        next->place(entry);
    }
  // Published whole: a reader finds every entry of the old table in it.
  device.table.store(next.get(), std::memory_order_release);
  tables_.push_back(std::move(next));
  return *tables_.back();
}

Entry *DispatchCache::insert(int32_t device, KeyView key, bool &inserted) {
  inserted = false;
  std::lock_guard<std::mutex> lock(writeMutex_);
  if (Entry *found = find(device, key)) // another thread inserted it meanwhile
    return found;
  static std::atomic<uint64_t> nextSerial{1};
  auto entry = std::make_shared<Entry>();
  entry->serial = nextSerial.fetch_add(1, std::memory_order_relaxed);
  entry->lookupKey = SpecializationKey(key);
  // Published with the slot below: the caller compiles it on this thread.
  entry->compilingThread.store(std::this_thread::get_id(),
                               std::memory_order_relaxed);
  tableWithRoom(devices_[device]).place(entry.get());
  entries_.push_back(std::move(entry));
  inserted = true;
  return entries_.back().get();
}

void DispatchCache::forget(int32_t device, KeyView key) {
  std::lock_guard<std::mutex> lock(writeMutex_);
  Device &slot = devices_[device];
  const Table *table = slot.table.load(std::memory_order_relaxed);
  if (!table)
    return;
  for (size_t i = key.hash & table->mask;; i = (i + 1) & table->mask) {
    Entry *entry = table->slots[i].load(std::memory_order_relaxed);
    if (!entry)
      return;
    if (entry != dropped() && entry->lookupKey.view() == key) {
      table->slots[i].store(dropped(), std::memory_order_release);
      slot.version.fetch_add(1, std::memory_order_acq_rel);
      return;
    }
  }
}

void DispatchCache::clear() {
  std::lock_guard<std::mutex> lock(writeMutex_);
  for (int32_t d = 0; d < count_; ++d) {
    Device &device = devices_[d];
    if (!device.table.load(std::memory_order_relaxed))
      continue;
    // The table is retired (readers may be in it); the next insert starts
    // a new one.
    device.table.store(nullptr, std::memory_order_release);
    device.version.fetch_add(1, std::memory_order_acq_rel);
  }
}

void DispatchCache::forEachEntry(const std::function<void(Entry &)> &fn) {
  std::lock_guard<std::mutex> lock(writeMutex_);
  for (const std::shared_ptr<Entry> &entry : entries_)
    fn(*entry);
}

} // namespace kjit::rt
