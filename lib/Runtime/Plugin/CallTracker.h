//===- CallTracker.h - the plugin calls each thread is inside ---*- C++ -*-===//
//
// fini promises a plugin that none of its entries is still running, so a
// shutdown waits for the calls that other threads are inside of. Every
// launch is such a call, so entering and leaving one must cost next to
// nothing: no locked instruction, no fence.
//
// Each thread publishes the plugins it is inside of, innermost last, in a
// record of its own that only it writes. A call pushes its plugin there and
// then checks that the plugin is still alive, with only a compiler barrier
// between the two (the light side); a shutdown marks the plugin gone, then
// runs one process-wide barrier, membarrier(2)'s PRIVATE_EXPEDITED (the
// heavy side, which registers the process for it the first time), then
// reads every record. This is Dekker's protocol with an
// asymmetric fence: either the shutdown sees the push, or the call sees the
// plugin gone. Where membarrier is refused (an old kernel, a seccomp
// filter), each call issues a full fence instead (the protocol is then the
// symmetric one).
//
// Records are never freed: a thread's is returned at its exit for the next
// thread to take, so a shutdown can read any record at any time; a thread
// that calls exit() from inside a call keeps its record, so that the
// shutdown run by the static destructors knows those calls as its own. In
// a child after fork() the other threads' records are free again. Calls
// nested deeper than a record holds (kMaxDepth) are counted the locked way,
// in the plugin's own counter. A plugin that is not thread-safe has its
// serialization lock taken before the call is published, so that a
// shutdown from inside one of its calls does not wait for a call blocked on
// that lock.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_RUNTIME_PLUGIN_CALLTRACKER_H
#define KJIT_LIB_RUNTIME_PLUGIN_CALLTRACKER_H

#include <atomic>
#include <cstdint>

namespace kjit::plugin {

class CallTracker {
public:
  /// Nested calls a record holds; deeper ones are rare (a launch from a
  /// hook of a launch from a hook ...) and take the locked path.
  static constexpr int kMaxDepth = 32;

  /// One thread's calls.
  struct Record {
    /// Before the plugins, so that a call (depth 0) reads and writes one
    /// cache line of the record.
    std::atomic<int> depth{0};
    /// The plugins of the calls this thread is inside of, outermost first:
    /// entries below min(depth, kMaxDepth) are meaningful.
    std::atomic<const void *> plugins[kMaxDepth] = {};
    std::atomic<bool> taken{false};
    /// The next record of the registry; set before the record is published.
    Record *next = nullptr;
  };

  /// This thread's record, taken on its first call.
  static Record &mine() {
    Record *record = threadRecord;
    return record ? *record : takeRecord();
  }

  /// Orders this thread's push before its check that the plugin is alive,
  /// against a shutdown's heavyBarrier.
  static void lightBarrier() {
    if (asymmetric())
      std::atomic_signal_fence(std::memory_order_seq_cst);
    else
      std::atomic_thread_fence(std::memory_order_seq_cst);
  }

  /// After a plugin was marked gone: every thread's earlier pushes are
  /// visible to this one's later reads, and every later check of another
  /// thread sees the plugin gone.
  static void heavyBarrier();

  /// Whether a thread other than this one is inside a call of `plugin`
  /// (only calls within kMaxDepth: deeper ones are the plugin's to count).
  static bool othersInside(const void *plugin);

  /// In a child after fork(): the records of threads that do not exist in
  /// it are free again (run by a pthread_atfork handler).
  static void forgetOtherThreads();

  enum : int { kUnknown, kAsymmetric, kSymmetric };

private:
  /// Returns this thread's record at its exit, for the next thread to take.
  struct Owner {
    Record *record = nullptr;
    ~Owner();
  };

  static bool asymmetric() {
    return barrierMode.load(std::memory_order_relaxed) == kAsymmetric;
  }
  static Record &takeRecord();

  /// Decided on the first record taken, before any call is tracked.
  static std::atomic<int> barrierMode;
  /// Read on every call: in the static TLS block (initial-exec), one
  /// instruction away.
  [[gnu::tls_model(
      "initial-exec")]] static inline thread_local Record *threadRecord =
      nullptr;
};

} // namespace kjit::plugin

#endif // KJIT_LIB_RUNTIME_PLUGIN_CALLTRACKER_H
