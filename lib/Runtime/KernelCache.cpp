//===- KernelCache.cpp - the per-device cache and its miss path -----------===//
//
// The single flight of a miss over the dispatch cache (DispatchCache.h):
// the first thread compiles, the others wait.
//
//===----------------------------------------------------------------------===//

#include "KernelImpl.h"

#include <algorithm>
#include <optional>
#include <thread>
#include <vector>

namespace kjit::rt {

using kjit::strCat;

Entry *
Kernel::Impl::ensureEntry(int32_t device, KeyView key,
                          absl::FunctionRef<SpecializationRecord()> record,
                          bool isWarmup, absl::Status &status, bool *compiled,
                          bool *diskHit, bool *remoteHit) {
  bool inserted = false;
  Entry *entry = dispatch.find(device, key);
  std::optional<SpecializationRecord> made;
  if (!entry) {
    // A miss. A block the device cannot run is refused before an entry is
    // inserted (a refused launch leaves the maps as they were) and before
    // the cache hook, the disk and the compiler are asked: the compiler's
    // own limit, 32 warps, would otherwise answer with a pass's message.
    made.emplace(record());
    if (status = checkBlock(*made, device); !status.ok())
      return nullptr;
    entry = dispatch.insert(device, key, inserted);
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
  // A failed or skipped entry goes (after its waiters were told), so that
  // the next launch asks the cache hook and compiles again, as the
  // reference does on every miss.
  if (inserted &&
      entry->state.load(std::memory_order_acquire) != Entry::State::Ready)
    dispatch.forget(device, key);
  return entry;
}

namespace {

/// The pending entry each waiting thread waits for (waitFor), so that a
/// wait can follow the chain from an entry to its compiling thread, to the
/// entry that thread waits for, and so on. Waits are rare (a miss that
/// another thread is compiling): one mutex serves the process.
struct Waits {
  std::mutex mutex;
  std::vector<std::pair<std::thread::id, const Entry *>> waiting;
};

Waits &waits() {
  // Never destroyed: a thread may still wait while static objects go away.
  static Waits *all = new Waits;
  return *all;
}

} // namespace

absl::Status Kernel::Impl::waitFor(Entry &entry) {
  auto notPending = [&] {
    return entry.state.load(std::memory_order_acquire) != Entry::State::Pending;
  };
  if (notPending()) {
    std::lock_guard<std::mutex> lock(entry.mutex);
    return entry.error;
  }
  const std::thread::id self = std::this_thread::get_id();
  Waits &all = waits();
  {
    // Checked and registered at once: of two threads that would wait for
    // each other, the second sees the first's wait.
    std::lock_guard<std::mutex> lock(all.mutex);
    const Entry *next = &entry;
    // Each thread waits for one entry at a time, so a chain visits each
    // waiter at most once.
    for (size_t hop = 0; next && hop <= all.waiting.size(); ++hop) {
      std::thread::id owner =
          next->compilingThread.load(std::memory_order_acquire);
      if (owner == self)
        return absl::FailedPreconditionError(strCat(
            "kernel '", manifest.name,
            "' cannot be launched with this specialization here: ",
            hop == 0 ? "this thread is compiling it, and the launch comes "
                       "from a hook or callback of that compile"
                     : "the thread compiling it waits, through launches "
                       "from hooks, for a compile this thread is running",
            "; waiting for it would never end (docs/Runtime.md, "
            "\"Re-entry\")"));
      if (owner == std::thread::id())
        break;
      auto waiter = std::find_if(
          all.waiting.begin(), all.waiting.end(),
          [&](const auto &waiting) { return waiting.first == owner; });
      next = waiter == all.waiting.end() ? nullptr : waiter->second;
    }
    all.waiting.emplace_back(self, &entry);
  }
  absl::Status error;
  {
    std::unique_lock<std::mutex> lock(entry.mutex);
    entry.ready.wait(lock, notPending);
    error = entry.error;
  }
  std::lock_guard<std::mutex> lock(all.mutex);
  all.waiting.erase(
      std::find(all.waiting.begin(), all.waiting.end(),
                std::pair<std::thread::id, const Entry *>(self, &entry)));
  return error;
}

} // namespace kjit::rt
