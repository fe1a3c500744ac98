//===- KernelCache.cpp - the per-device cache and its miss path -----------===//
//
// Read-copy-update maps, one per device (docs/Runtime.md), and the single
// flight of a miss: the first thread compiles, the others wait.
//
//===----------------------------------------------------------------------===//

#include "KernelImpl.h"

#include <optional>

namespace kjit::rt {

using kjit::strAppend;
using kjit::strCat;

Entry *Kernel::Impl::find(int32_t device, KeyView key) const {
  if (const Cache *cache = caches[device].load(std::memory_order_acquire)) {
    auto it = cache->find(key);
    if (it != cache->end())
      return it->second.get();
  }
  return nullptr;
}

Entry *Kernel::Impl::insert(int32_t device, KeyView key, bool &inserted) {
  inserted = false;
  std::lock_guard<std::mutex> lock(cacheWriteMutex);
  if (Entry *found = find(device, key)) // another thread inserted it meanwhile
    return found;
  const Cache *current = caches[device].load(std::memory_order_acquire);
  auto next =
      current ? std::make_unique<Cache>(*current) : std::make_unique<Cache>();
  static std::atomic<uint64_t> nextSerial{1};
  auto entry = std::make_shared<Entry>();
  entry->serial = nextSerial.fetch_add(1, std::memory_order_relaxed);
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

Entry *
Kernel::Impl::ensureEntry(int32_t device, KeyView key,
                          absl::FunctionRef<SpecializationRecord()> record,
                          bool isWarmup, absl::Status &status, bool *compiled,
                          bool *diskHit, bool *remoteHit) {
  bool inserted = false;
  Entry *entry = find(device, key);
  std::optional<SpecializationRecord> made;
  if (!entry) {
    // A miss. A block the device cannot run is refused before an entry is
    // inserted (a refused launch leaves the maps as they were) and before
    // the cache hook, the disk and the compiler are asked: the compiler's
    // own limit, 32 warps, would otherwise answer with a pass's message.
    made.emplace(record());
    if (status = checkBlock(*made, device); !status.ok())
      return nullptr;
    entry = insert(device, key, inserted);
  }
  if (inserted) {
    compile(*entry, *made, isWarmup, device);
    bool ready =
        entry->state.load(std::memory_order_acquire) == Entry::State::Ready;
    if (compiled)
      *compiled = ready && entry->origin == Entry::Origin::Compiled;
    if (diskHit)
      *diskHit = ready && entry->origin == Entry::Origin::Disk;
    if (remoteHit)
      *remoteHit = ready && entry->origin == Entry::Origin::Remote;
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

absl::Status Kernel::Impl::waitFor(Entry &entry) {
  std::unique_lock<std::mutex> lock(entry.mutex);
  entry.ready.wait(lock, [&] {
    return entry.state.load(std::memory_order_acquire) != Entry::State::Pending;
  });
  return entry.error;
}

} // namespace kjit::rt
