//===- CallTracker.cpp - which plugin calls each thread is inside of ------===//

#include "CallTracker.h"

#include <chrono>
#include <thread>

#include <linux/membarrier.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace kjit::plugin {

std::atomic<int> CallTracker::barrierMode{CallTracker::kUnknown};

namespace {

/// Every record ever taken, newest first; never shrinks.
std::atomic<CallTracker::Record *> registry{nullptr};

/// Set when this thread's record owner has been destroyed.
[[gnu::tls_model("initial-exec")]] thread_local bool threadExiting = false;

long membarrier(int command) { return syscall(__NR_membarrier, command, 0, 0); }

} // namespace

namespace {
/// The process's barrier mode: asymmetric when the kernel offers expedited
/// membarriers. Asked, not registered for: a registration in a process that
/// already runs several threads waits for an RCU grace period (10-20 ms in
/// a Python process with PyTorch's threads), which would fall on the first
/// launch of the process. The first heavyBarrier registers instead: a
/// shutdown, which is rare and may wait. (A seccomp filter that allows the
/// query and refuses the registration leaves heavyBarrier its fallbacks.)
int decideBarrierMode() {
  // In a child after fork() only the forking thread exists: the records of
  // the parent's other threads, which may have been inside calls, are free.
  pthread_atfork(nullptr, nullptr, CallTracker::forgetOtherThreads);
  constexpr long kNeeded = MEMBARRIER_CMD_PRIVATE_EXPEDITED |
                           MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED;
  long offered = membarrier(MEMBARRIER_CMD_QUERY);
  if (offered > 0 && (offered & kNeeded) == kNeeded)
    return CallTracker::kAsymmetric;
  return CallTracker::kSymmetric;
}
} // namespace

CallTracker::Record &CallTracker::takeRecord() {
  // The mode is settled before this thread's first call is tracked, once
  // per process; a thread that saw "symmetric" fences every call, which is
  // right in either mode. Sequentially consistent, so that a shutdown that
  // reads the mode sees it with the registration done.
  if (barrierMode.load(std::memory_order_seq_cst) == kUnknown) {
    static const int mode = decideBarrierMode();
    int expected = kUnknown;
    barrierMode.compare_exchange_strong(expected, mode,
                                        std::memory_order_seq_cst);
  }
  Record *record = nullptr;
  for (Record *r = registry.load(std::memory_order_acquire); r && !record;
       r = r->next) {
    bool free = false;
    if (r->taken.compare_exchange_strong(free, true, std::memory_order_acq_rel))
      record = r;
  }
  if (!record) {
    record = new Record; // never freed: a shutdown may read it at any time
    record->taken.store(true, std::memory_order_relaxed);
    Record *head = registry.load(std::memory_order_relaxed);
    do
      record->next = head;
    while (!registry.compare_exchange_weak(
        head, record, std::memory_order_release, std::memory_order_relaxed));
  }
  // A call late in the thread's exit, after the owner was destroyed, keeps
  // its record taken: one record, once per such thread.
  if (!threadExiting) {
    thread_local Owner owner;
    owner.record = record;
  }
  threadRecord = record;
  return *record;
}

CallTracker::Owner::~Owner() {
  threadExiting = true;
  // exit() called from inside a plugin call runs this before the static
  // destructors that shut the plugins down: the record then still shows
  // those calls and stays this thread's, so that the shutdown recognizes
  // them as its own. (It is never released; one record per such exit.)
  if (!record || record->depth.load(std::memory_order_relaxed) != 0)
    return;
  // A call made later in the thread's exit (a destructor that launches)
  // takes a record again.
  threadRecord = nullptr;
  record->taken.store(false, std::memory_order_release);
  record = nullptr;
}

void CallTracker::forgetOtherThreads() {
  const Record *self = threadRecord;
  for (Record *r = registry.load(std::memory_order_acquire); r; r = r->next) {
    if (r == self)
      continue;
    r->depth.store(0, std::memory_order_relaxed);
    r->taken.store(false, std::memory_order_relaxed);
  }
}

void CallTracker::heavyBarrier() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // Symmetric mode: every call fences, so the fence above completes the
  // protocol. (Unknown: no thread has taken a record yet, or this one sees
  // the mode late; a membarrier then costs nothing that matters.)
  if (barrierMode.load(std::memory_order_seq_cst) == kSymmetric)
    return;
  if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0)
    return;
  // The calls fence only for the compiler, so a barrier on every thread is
  // required. The expedited one fails until the process registers for it
  // (the first shutdown, or a child after fork: registrations do not carry
  // over): register, then barrier; failing that, the
  // global membarrier, which needs no registration (it waits for every
  // CPU to pass a scheduling point: milliseconds, once per shutdown).
  if (membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0 &&
      membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0)
    return;
  if (membarrier(MEMBARRIER_CMD_GLOBAL) == 0)
    return;
  // No barrier reaches the other threads: from now on every call fences,
  // and the calls that entered before are waited out with a grace period
  // far longer than the few instructions between a call's record store and
  // its check.
  barrierMode.store(kSymmetric, std::memory_order_release);
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

bool CallTracker::othersInside(const void *plugin) {
  const Record *self = threadRecord;
  for (const Record *r = registry.load(std::memory_order_acquire); r;
       r = r->next) {
    if (r == self)
      continue;
    int depth = r->depth.load(std::memory_order_acquire);
    if (depth > kMaxDepth)
      depth = kMaxDepth;
    for (int i = 0; i < depth; ++i)
      if (r->plugins[i].load(std::memory_order_acquire) == plugin)
        return true;
  }
  return false;
}

} // namespace kjit::plugin
