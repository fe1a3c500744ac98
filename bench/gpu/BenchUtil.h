//===- BenchUtil.h - timers and statistics of the GPU harness ---*- C++ -*-===//
//
// Shared by kjit_dispatch and kjit_gpu_bench (bench/gpu/README.md): a
// monotonic clock, the median and spread of rounds, and the runtime set-up
// both benches use (a Runtime on one backend, device buffers through the
// backend's ABI 1.2 memory when it has any, host memory otherwise).
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_BENCH_GPU_BENCHUTIL_H
#define KJIT_BENCH_GPU_BENCHUTIL_H

#include "kjit/Plugin/PluginHost.h"
#include "kjit/Runtime/Runtime.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace kjit::bench {

inline double nowSeconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Spread {
  double median = 0, min = 0, max = 0;
};

inline Spread spread(std::vector<double> values) {
  Spread s;
  if (values.empty())
    return s;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  s.median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  s.min = values.front();
  s.max = values.back();
  return s;
}

[[noreturn]] inline void die(const std::string &what,
                             const absl::Status &status) {
  std::fprintf(stderr, "error: %s: %s\n", what.c_str(),
               std::string(status.message()).c_str());
  std::exit(1);
}

template <typename T> T check(absl::StatusOr<T> value, const char *what) {
  if (!value.ok())
    die(what, value.status());
  return *std::move(value);
}

inline void check(const absl::Status &status, const char *what) {
  if (!status.ok())
    die(what, status);
}

/// A buffer on the backend's device (or in host memory for a backend
/// without device memory: the host backend reads host pointers).
class DeviceBuffer {
public:
  DeviceBuffer(const rt::Backend &backend, uint64_t bytes)
      : backend_(&backend), bytes_(bytes) {
    if (backend.ref.hasDeviceMemory()) {
      address_ = check(backend.ref.allocate(0, bytes), "allocate");
    } else {
      host_.reset(static_cast<char *>(std::aligned_alloc(64, roundUp(bytes))));
      if (!host_)
        die("allocate", absl::ResourceExhaustedError("out of host memory"));
      address_ = uint64_t(uintptr_t(host_.get()));
    }
  }
  ~DeviceBuffer() {
    if (!host_ && address_)
      (void)backend_->ref.deallocate(0, address_);
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  uint64_t address() const { return address_; }
  void upload(const void *data) {
    if (host_)
      std::memcpy(host_.get(), data, bytes_);
    else
      check(backend_->ref.copyToDevice(0, address_, data, bytes_),
            "copyToDevice");
  }
  void download(void *data) const {
    if (host_)
      std::memcpy(data, host_.get(), bytes_);
    else
      check(backend_->ref.copyToHost(0, data, address_, bytes_), "copyToHost");
  }

private:
  static uint64_t roundUp(uint64_t n) { return (n + 63) / 64 * 64; }
  struct Free {
    void operator()(char *p) const { std::free(p); }
  };
  const rt::Backend *backend_;
  uint64_t bytes_;
  uint64_t address_ = 0;
  std::unique_ptr<char, Free> host_;
};

/// The runtime on `target`, plus the backend it launches on.
struct Setup {
  std::unique_ptr<rt::Runtime> runtime;
  const rt::Backend *backend = nullptr;
};

inline Setup makeRuntime(const std::string &target) {
  rt::RuntimeOptions options;
  options.target = target;
  Setup setup;
  setup.runtime = check(rt::Runtime::create(std::move(options)), "runtime");
  setup.backend = check(setup.runtime->backend(), "backend");
  return setup;
}

inline void synchronize(const Setup &setup) {
  check(setup.backend->ref.synchronize(0, 0), "synchronize");
}

} // namespace kjit::bench

#endif // KJIT_BENCH_GPU_BENCHUTIL_H
