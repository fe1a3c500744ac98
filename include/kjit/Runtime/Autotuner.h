//===- Autotuner.h - choosing a kernel configuration by timing --*- C++ -*-===//
//-*-===//
//
// A kernel with a list of configurations (constexpr values and launch
// options) and a key (named arguments' values and every tensor's dtype):
// the first launch of a key times each configuration on the device and
// launches the fastest; later launches of the key use it (docs/Autotuning.md).
// Trials are timed on the device clock through the backend ABI where the
// backend can. Each timing and each choice is a record in the disk cache
// and the fleet cache (docs/Autotuning.md "The records"): a process that
// finds the choice times nothing, one that finds some configurations'
// timings times only the others, and the first choice stored for a set is
// every process's.
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

/// How trials are timed (docs/Autotuning.md, "How many samples"). A
/// configuration is launched once untimed (it compiles or loads), then
/// warmed up: batches of 1, 2, 4, ... launches until at least
/// `minWarmupLaunches` launches and `warmupNanos` of measured time, or
/// `maxWarmupLaunches`. Trials then run in interleaved rounds, one batch per
/// configuration per round, sized from the warm-up to take about
/// `batchNanos` (at most `maxBatchLaunches`). On the device clock each
/// launch is a sample; on the host clock a batch is one (its time per
/// launch). A configuration stops at the first of: `minSamples` samples
/// with the 95% confidence interval of their median (order statistics,
/// ranks n/2 -+ 0.98 sqrt(n)) within -+`relativeInterval` of it;
/// `budgetNanos` of measured time; `maxSamples` samples; or, with at least
/// `minSamples`, an interval that starts more than `leaderMargin` beyond
/// the end of the leader's (the lowest median with `minSamples`).
struct MeasureOptions {
  int minWarmupLaunches = 3;
  uint64_t warmupNanos = 2'000'000;
  int maxWarmupLaunches = 100;
  uint64_t batchNanos = 1'000'000;
  int maxBatchLaunches = 100;
  int minSamples = 10;
  double relativeInterval = 0.01;
  uint64_t budgetNanos = 50'000'000;
  int maxSamples = 1000;
  double leaderMargin = 0.10;
  /// How long a batch waits, after its synchronize, for the backend's
  /// device-time reports.
  uint64_t reportTimeoutNanos = 1'000'000'000;
};

/// The arguments of a call by parameter name (those the call gives or
/// defaults), for the prune function and the performance model.
using NamedArguments = std::vector<std::pair<std::string, Argument>>;

struct AutotuneSpec {
  std::vector<TuningConfig> configs;
  /// Parameters whose values join the key (scalars; tensors join it by
  /// dtype, all of them, as in Triton).
  std::vector<std::string> key;
  MeasureOptions measure;
  /// Triton's prune_configs_by. `prune` (early_config_prune) returns the
  /// indices of the configurations to keep for a call; then, with
  /// `perfModel` set and `topK` not 0, the `topK` of those with the lowest
  /// estimates are kept (ties by index). Both must be deterministic (every
  /// rank must prune alike) and keep at least one configuration; an error
  /// of either stops the tuning with it.
  std::function<absl::StatusOr<std::vector<size_t>>(
      const std::vector<TuningConfig> &configs, const NamedArguments &args)>
      prune;
  std::function<absl::StatusOr<double>(const TuningConfig &config,
                                       const NamedArguments &args)>
      perfModel;
  size_t topK = 0;
  /// How many threads compile the configurations before their trials
  /// (those not loaded yet; each is one specialization); 0: KJIT_TUNE_THREADS,
  /// else the hardware's thread count. Never more than there are
  /// configurations; 1 compiles them on the tuning thread.
  int compileThreads = 0;
  /// A host clock for the trials, in nanoseconds, in place of the device's
  /// (tests fake it): set, trials are timed with it around their launches
  /// and a synchronize, as on a backend that cannot time launches
  /// (KJIT_LAUNCH_TIMED); empty: the device clock where the backend has
  /// one, else std::chrono::steady_clock.
  std::function<uint64_t()> clock;
  /// Tests: a fake clock on which each launch of configuration i costs
  /// fakeLaunchNanos[i] (one per configuration), in place of `clock` and
  /// the device's. Its records name the clock "fake", so they never mix
  /// with real timings.
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
  /// "device clock", "host clock" or "fake clock".
  std::string clock;
  /// What became of the choice: "found (disk, by HOST:PID)", "published
  /// (won)", "adopted (remote, by HOST:PID)", "not stored (...)"; empty
  /// without a disk or fleet cache.
  std::string choice;
  /// How many threads compiled the configurations.
  int compileThreads = 0;
  struct Result {
    /// Left out by the prune function or the performance model.
    bool pruned = false;
    /// Empty when it ran; else why it was skipped (its compile or launch
    /// failed).
    std::string skipped;
    /// The median of the samples, their 20th and 80th percentiles and the
    /// 95% confidence interval of the median, in nanoseconds per launch.
    double medianNanos = 0, p20Nanos = 0, p80Nanos = 0, ciLowNanos = 0,
           ciHighNanos = 0;
    int samples = 0;
    /// Launches per sample: 1 on the device clock, the batch on the host
    /// clock.
    int batchLaunches = 0;
    int warmupLaunches = 0;
    /// Stopped beyond the leader (MeasureOptions::leaderMargin).
    bool stoppedEarly = false;
    /// "timed" (here), "disk" or "remote" (its record was found), or
    /// empty: not looked at (pruned, or the choice was found).
    std::string from;
  };
  std::vector<Result> results;
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
  /// With a disk or fleet cache, a stored choice for the key is taken as it
  /// is.
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
