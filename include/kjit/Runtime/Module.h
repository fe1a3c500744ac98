//===- Module.h - modules, kernels and launches -----------------*- C++ -*-===//
//
// A Module is a kernel IR file with its globals table, loaded into a
// Runtime; a Kernel binds launch arguments, finds its specialization in a
// per-device cache, compiles on a miss (one compile per key however many
// threads ask), checks the globals it baked in, and launches through the
// runtime's backend with the hooks of its plugins. No LLVM or MLIR header
// here; the compiler library is loaded with dlopen when something must be
// compiled or analysed. Rationale: docs/Runtime.md.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_RUNTIME_MODULE_H
#define KJIT_RUNTIME_MODULE_H

#include "kjit/Model/Binder.h"
#include "kjit/Model/KernelManifest.h"
#include "kjit/Model/Specialization.h"

#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kjit::rt {

class Kernel;
struct KernelAnalysis;
class Runtime;

/// The same tensor seen as another dtype, without a copy (the reference's
/// `reinterpret`). Anything but a tensor is returned unchanged.
Argument reinterpret(const Argument &tensor, DType dtype);

/// What a launch does when a global the kernel baked in has changed.
enum class GlobalChangePolicy {
  /// Fail with the reference's message (the default).
  Error,
  /// Re-analyse with the new values and compile new entries.
  Recompile,
};

/// A grid: programs along x, y, z.
using Grid = std::array<uint32_t, 3>;

/// One launch.
struct LaunchConfig {
  /// The grid, 1 to 3 dimensions (unused ones are 1).
  Grid grid = {1, 1, 1};
  /// If set, computes the grid from the bound arguments (in declaration
  /// order, defaults applied) instead of `grid`.
  std::function<Grid(absl::Span<const Argument>)> gridFn;
  /// The device index on the backend.
  int32_t device = 0;
  /// The backend's stream, as an integer (cuda: a CUstream, 0 the legacy
  /// default stream; host: ignored).
  uint64_t stream = 0;
  /// False: a launch whose specialization is not loaded in this process
  /// fails with Unavailable ("warm it up ... before the capture") instead
  /// of asking the hooks, the caches or the compiler, and never waits for
  /// another thread's compile. A launch recorded into a CUDA graph must not
  /// load a module (it would invalidate the capture); the Python package
  /// also tries every launch this way first, so that only a launch that
  /// would load asks whether its stream is capturing (docs/Python.md).
  bool mayLoad = true;
};

/// What happened in a launch.
struct LaunchResult {
  /// False when a cache hook answered "skip": nothing was compiled or run.
  bool launched = false;
  /// True when this launch compiled (a cache miss).
  bool compiled = false;
  /// True when this launch found its kernel in the disk cache (a miss in
  /// memory that did not compile).
  bool diskHit = false;
  /// True when this launch found its kernel in the fleet cache (a miss in
  /// memory and on disk that did not compile).
  bool remoteHit = false;
};

/// Counters of one kernel, for tools and tests. Hits are not counted here
/// (see LaunchResult::compiled): a per-launch counter would be a write
/// shared by every launching thread.
struct KernelStats {
  uint64_t compiles = 0;
  /// Specializations loaded from the disk cache instead of compiled.
  uint64_t diskHits = 0;
  /// Specializations loaded from the fleet cache (docs/RemoteCache.md).
  uint64_t remoteHits = 0;
};

/// A kernel IR file and its globals table.
class Module {
public:
  /// Reads and analyses a kernel IR file (loads the compiler library) into
  /// `runtime`, which must outlive the module.
  static absl::StatusOr<std::shared_ptr<Module>> load(Runtime &runtime,
                                                      std::string path);
  /// The same into the process's default runtime (Runtime::global()).
  static absl::StatusOr<std::shared_ptr<Module>> load(std::string path);
  /// The same from text; `sourceName` names it in diagnostics.
  static absl::StatusOr<std::shared_ptr<Module>>
  fromText(Runtime &runtime, std::string text, std::string sourceName);
  static absl::StatusOr<std::shared_ptr<Module>>
  fromText(std::string text, std::string sourceName);
  ~Module();

  /// The kernel called `name`; errors list the kernels that exist.
  absl::StatusOr<Kernel *> kernel(std::string_view name);
  std::vector<std::string> kernelNames() const;

  /// Changes a global's value (converted to the global's type). Kernels that
  /// baked in the old value notice at their next launch.
  absl::Status setGlobal(std::string_view name, const Argument &value);
  /// The global's current value as text, or an error naming the globals.
  absl::StatusOr<std::string> global(std::string_view name) const;

  struct Impl;

private:
  explicit Module(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// One kernel of a Module. Thread-safe: any number of threads may launch it.
class Kernel {
public:
  ~Kernel();

  const KernelManifest &manifest() const;
  /// The dependency key: content of the kernel and its callees, its line,
  /// and the values of the globals it reads.
  const std::string &dependencyKey() const;

  /// Binds the arguments, compiles on a cache miss, checks the globals and
  /// launches. Launch options (num_warps, debug, ...) are keywords.
  absl::StatusOr<LaunchResult>
  launch(const LaunchConfig &config, absl::Span<const Argument> positional,
         absl::Span<const KeywordArgument> keywords = {});

  /// Binds the arguments as a launch on `device` would, and nothing else:
  /// no hook runs, nothing is compiled or launched. The binder's error for
  /// arguments a launch would refuse (tensors may be mock tensors, so a
  /// tool can check its arguments before it allocates their memory).
  absl::Status checkArguments(absl::Span<const Argument> positional,
                              absl::Span<const KeywordArgument> keywords = {},
                              int32_t device = 0);

  /// Compiles the specialization these arguments select without launching
  /// (tensors may be mock tensors: dtype only, treated as 16-byte aligned).
  /// Returns the record, which `preload` accepts in another process.
  absl::StatusOr<SpecializationRecord>
  warmup(absl::Span<const Argument> positional,
         absl::Span<const KeywordArgument> keywords = {}, int32_t device = 0);

  /// Rebuilds the cache entry of a serialized record (JSON) without the
  /// original call. The record must match this kernel and target.
  absl::Status preload(std::string_view recordJson, int32_t device = 0);

  void setGlobalChangePolicy(GlobalChangePolicy policy);
  /// A per-kernel callback adding fields to the launch hooks' metadata; it
  /// returns the members of a JSON object (`"flops": 12, "bytes": 96`). It
  /// runs only for launches that a plugin's launch_enter hook sees. It may
  /// be set, replaced or removed (an empty function) at any time, also while
  /// other threads launch the kernel: a launch calls the callback that was
  /// set when it read it, which stays alive until that call returns. The
  /// callback may run on several launching threads at once.
  void setLaunchMetadata(
      std::function<std::string(absl::Span<const Argument>)> callback);

  KernelStats stats() const;

  struct Impl;

private:
  friend absl::StatusOr<std::unique_ptr<Kernel>>
  makeKernel(Module::Impl *module, KernelAnalysis analysis);
  /// The runtime's own parts that launch in other ways (the autotuner's
  /// trials) reach the implementation through this (KernelImpl.h).
  friend Impl &kernelImpl(Kernel &kernel);
  explicit Kernel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace kjit::rt

#endif // KJIT_RUNTIME_MODULE_H
