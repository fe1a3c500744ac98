//===- LaunchMetadata.h - a kernel's launch-metadata callback ---*- C++ -*-===//
//
// Where Kernel::setLaunchMetadata keeps its callback: a slot that may be
// set again while other threads launch the kernel. A launch that a
// launch_enter hook sees takes its own reference to the callback under the
// slot's lock and calls it outside it, so a callback replaced meanwhile
// stays alive until that launch is done with it, and the callback may
// itself launch or set a callback. Launches without launch hooks never
// read the slot: the hit path pays nothing for it.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_RUNTIME_LAUNCHMETADATA_H
#define KJIT_LIB_RUNTIME_LAUNCHMETADATA_H

#include "kjit/Model/Argument.h"

#include "absl/types/span.h"

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace kjit::rt {

class LaunchMetadataSlot {
public:
  using Callback = std::function<std::string(absl::Span<const Argument>)>;

  /// Replaces the callback; an empty one removes it.
  void set(Callback callback) {
    std::shared_ptr<const Callback> next;
    if (callback)
      next = std::make_shared<const Callback>(std::move(callback));
    std::lock_guard<std::mutex> lock(mutex_);
    current_.swap(next);
    // The old callback (now in `next`) is released outside the lock, after
    // the last launch that took it.
  }

  /// The callback, or null when none is set.
  std::shared_ptr<const Callback> get() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return current_;
  }

private:
  mutable std::mutex mutex_;
  std::shared_ptr<const Callback> current_;
};

} // namespace kjit::rt

#endif // KJIT_LIB_RUNTIME_LAUNCHMETADATA_H
