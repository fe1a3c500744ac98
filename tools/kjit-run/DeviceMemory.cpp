//===- DeviceMemory.cpp - kjit-run's tensors on a backend's device --------===//

#include "DeviceMemory.h"

#include <algorithm>

using namespace kjit;
using namespace kjit::run;

DeviceMirror::~DeviceMirror() {
  // Nothing may still read the memory: wait first. An error here was (or
  // will be) reported by copyBack or the launch; freeing goes on.
  (void)backend_.synchronize(device_, /*stream=*/0);
  for (const Copy &copy : copies_)
    (void)backend_.deallocate(device_, copy.address);
}

absl::StatusOr<uint64_t> DeviceMirror::mirror(HostBuffer &buffer) {
  // A tensor of zero elements still needs a valid, unique address.
  uint64_t bytes = std::max<uint64_t>(buffer.sizeInBytes(), 1);
  absl::StatusOr<uint64_t> address = backend_.allocate(device_, bytes);
  if (!address.ok())
    return address.status();
  copies_.push_back({&buffer, *address});
  if (absl::Status copied = backend_.copyToDevice(
          device_, *address, buffer.data(), buffer.sizeInBytes());
      !copied.ok())
    return copied;
  return *address;
}

absl::Status DeviceMirror::copyBack() {
  if (absl::Status done = backend_.synchronize(device_, /*stream=*/0);
      !done.ok())
    return done;
  for (const Copy &copy : copies_)
    if (absl::Status copied = backend_.copyToHost(
            device_, copy.host->data(), copy.address, copy.host->sizeInBytes());
        !copied.ok())
      return copied;
  return absl::OkStatus();
}
