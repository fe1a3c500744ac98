//===- Autotuner.h - choosing a kernel configuration by timing --*- C++ -*-===//
//-*-===//
//
// A kernel with a list of configurations (constexpr values and launch
// options) and a key (named arguments' values and every tensor's dtype):
// the first launch of a key times each configuration on the device and
// launches the fastest; later launches of the key use it. Each timing and
// each choice is a record in the disk cache and the fleet cache
// (docs/Autotuning.md "The records"): a process that finds the choice times
// nothing, one that finds some configurations' timings times only the
// others, and the first choice stored for a set is every process's.
// Parallel compiles and the device clock come later.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_RUNTIME_AUTOTUNER_H
#define KJIT_RUNTIME_AUTOTUNER_H

#include "kjit/Runtime/Module.h"

#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kjit::rt {

class Runtime;

/// One configuration: constexpr parameters and the launch options that
/// change speed only (num_warps, num_stages, num_ctas, maxnreg), by name.
struct TuningConfig {
  std::vector<std::pair<std::string, Argument>> values;
  /// "SLOTS=4, num_warps=4".
  std::string text() const;
};

/// How trials are timed: each configuration is launched `warmupLaunches`
/// times, then `rounds` rounds go over the configurations in turn, each a
/// batch of launches that takes about `roundNanos` (at most
/// `maxLaunchesPerRound`) timed from its first launch to the synchronize
/// after its last. A configuration's time is the median of its rounds'
/// per-launch times.
struct MeasureOptions {
  int warmupLaunches = 2;
  int rounds = 7;
  uint64_t roundNanos = 1'000'000;
  int maxLaunchesPerRound = 100;
};

struct AutotuneSpec {
  std::vector<TuningConfig> configs;
  /// Parameters whose values join the key (scalars; tensors join it by
  /// dtype, all of them, as in Triton).
  std::vector<std::string> key;
  MeasureOptions measure;
  /// The clock trials are read from, in nanoseconds; empty:
  /// std::chrono::steady_clock. Tests fake it.
  std::function<uint64_t()> clock;
  /// Tests: a fake clock on which each launch of configuration i costs
  /// fakeLaunchNanos[i] (one per configuration), instead of `clock`. Its
  /// records name the clock "fake", so they never mix with real timings.
  std::vector<uint64_t> fakeLaunchNanos;
  /// Front ends' reset_to_zero and restore_value (Triton's): beforeTrials
  /// runs before each batch of trial launches and before the launch that
  /// ends a tuning, to zero the accumulators and put back the values the
  /// trials changed; afterTrials once when the trials end (the front end
  /// drops what it kept). Neither runs when no trial ran (the records gave
  /// the choice or every timing). A failure stops the tuning with its
  /// status.
  std::function<absl::Status()> beforeTrials, afterTrials;
};

/// What tuning one key found.
struct TuningOutcome {
  /// "n_cols=4096; in=fp32, out=fp32".
  std::string key;
  size_t winner = 0;
  /// The launches the trials made, warm-up included.
  uint64_t trialLaunches = 0;
  struct Result {
    /// Empty when it ran; else why it was skipped (its compile or launch
    /// failed).
    std::string skipped;
    double medianNanos = 0;
    int rounds = 0;
    /// "timed" (here), "disk" (its record was found), or empty: not looked
    /// at (the choice was found).
    std::string from;
  };
  std::vector<Result> results;
  /// The clock of the timings: "host", "fake", "custom".
  std::string clock;
  /// What became of the choice: "found (disk, by HOST:PID)", "published
  /// (won)", "adopted (by HOST:PID)", "not stored (...)"; empty without a
  /// disk cache.
  std::string choice;
};

class Autotuner {
public:
  /// Checks the configurations and the key against the kernel's
  /// parameters; errors name the configuration or key and what is wrong.
  /// `runtime` is the kernel's (it synchronizes and logs).
  static absl::StatusOr<std::unique_ptr<Autotuner>>
  create(Runtime &runtime, Kernel &kernel, AutotuneSpec spec);
  ~Autotuner();

  /// Launches with the configuration chosen for the arguments' key, tuning
  /// the key first when this process has no choice for it. A launch that
  /// may not load (`config.mayLoad` false: a CUDA graph capture) is
  /// refused for a key with no choice: timing would break the capture.
  absl::StatusOr<LaunchResult>
  launch(const LaunchConfig &config, absl::Span<const Argument> positional,
         absl::Span<const KeywordArgument> keywords = {});

  /// Tunes the arguments' key (again, if it was) without the final launch.
  /// With a disk cache, a stored choice for the key is taken as it is.
  absl::StatusOr<TuningOutcome>
  tune(const LaunchConfig &config, absl::Span<const Argument> positional,
       absl::Span<const KeywordArgument> keywords = {});

  /// The configuration the last launch used (Triton's best_config); null
  /// before the first.
  const TuningConfig *lastChosen() const;
  const std::vector<TuningConfig> &configs() const;

  struct Impl;

private:
  explicit Autotuner(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace kjit::rt

#endif // KJIT_RUNTIME_AUTOTUNER_H
