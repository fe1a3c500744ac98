//===- DeviceMemory.h - kjit-run's tensors on a device ----------*- C++ -*-===//
//
// kjit-run builds every tensor in host memory (HostBuffer) and, when the
// backend has device memory (ABI 1.2: allocate, copy, deallocate), mirrors
// it on the device: the launch gets device addresses, and the results are
// copied back into the host buffers before they are printed or saved. So
// `kjit-run --backend cuda` prints exactly what the host backend prints.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_TOOLS_KJIT_RUN_DEVICEMEMORY_H
#define KJIT_TOOLS_KJIT_RUN_DEVICEMEMORY_H

#include "Buffer.h"

#include "kjit/Plugin/PluginHost.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace kjit::run {

/// Device copies of host buffers on one device of one backend, freed when
/// this is destroyed (after a synchronize). Not thread-safe.
class DeviceMirror {
public:
  DeviceMirror(plugin::BackendRef backend, int32_t device)
      : backend_(std::move(backend)), device_(device) {}
  ~DeviceMirror();
  DeviceMirror(const DeviceMirror &) = delete;
  DeviceMirror &operator=(const DeviceMirror &) = delete;

  /// Allocates a device copy of `buffer` and copies its bytes in. The
  /// buffer must outlive this object (copyBack writes into it). Returns the
  /// device address a tensor argument takes.
  absl::StatusOr<uint64_t> mirror(HostBuffer &buffer);

  /// Waits for the launches on the default stream and copies every
  /// mirrored buffer back into its host buffer.
  absl::Status copyBack();

private:
  struct Copy {
    HostBuffer *host;
    uint64_t address;
  };
  plugin::BackendRef backend_;
  int32_t device_;
  std::vector<Copy> copies_;
};

} // namespace kjit::run

#endif // KJIT_TOOLS_KJIT_RUN_DEVICEMEMORY_H
