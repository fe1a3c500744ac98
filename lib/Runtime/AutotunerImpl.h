//===- AutotunerImpl.h - the autotuner's state, for its files ---*- C++ -*-===//
//
// Autotuner::Impl and the helpers both of its files use: Autotuner.cpp
// (configurations, keys, records, the decision) and AutotuneTrials.cpp
// (compiling the configurations on threads, timing the trials). Private to
// lib/Runtime.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_RUNTIME_AUTOTUNERIMPL_H
#define KJIT_LIB_RUNTIME_AUTOTUNERIMPL_H

#include "kjit/Runtime/Autotuner.h"

#include "KernelImpl.h"
#include "RemoteCache.h"
#include "TuningStore.h"
#include "kjit/Runtime/BuildConfig.h"

#include "kjit/Model/LaunchOptions.h"
#include "kjit/Model/Specialization.h"
#include "kjit/Plugin/PluginHost.h"
#include "kjit/Runtime/Runtime.h"

#include "kjit/Support/StrCat.h"

#include "absl/container/flat_hash_map.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

namespace kjit::rt {

using kjit::strCat;

namespace autotune {

/// A value as the key and the messages show it: a tensor by its dtype,
/// anything else as a specialization's constants are written.
inline std::string valueText(const Argument &value) {
  if (value.kind() == ArgKind::Tensor)
    return std::string(canonicalName(value.dtype()));
  return formatConstant(value);
}

/// The pieces, `separator` between them.
template <typename Range>
inline std::string join(const Range &pieces, std::string_view separator) {
  std::string out;
  for (const auto &piece : pieces) {
    if (!out.empty())
      out += separator;
    out += piece;
  }
  return out;
}

/// Nanoseconds of the steady clock.
inline uint64_t steadyNanos() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

/// Microseconds, as the messages show them.
inline std::string micros(double nanos) {
  return strCat(std::round(nanos / 100.0) / 10.0);
}

} // namespace autotune

using autotune::join;
using autotune::micros;
using autotune::steadyNanos;
using autotune::valueText;

struct Autotuner::Impl {
  Runtime &runtime;
  Kernel &kernel;
  AutotuneSpec spec;
  /// Parameter indices of the key's names, in the key's order.
  std::vector<size_t> keyParams;
  std::mutex mutex;
  absl::flat_hash_map<std::string, size_t> chosen;
  const TuningConfig *last = nullptr;
  /// The fake clock's time (AutotuneSpec::fakeLaunchNanos).
  uint64_t fakeNow = 0;

  const std::string &kernelName() const { return kernel.manifest().name; }
  uint64_t now() const {
    if (!spec.fakeLaunchNanos.empty())
      return fakeNow;
    return spec.clock ? spec.clock() : steadyNanos();
  }
  /// A trial launch of configuration `index` ran.
  void launched(size_t index) {
    if (!spec.fakeLaunchNanos.empty())
      fakeNow += spec.fakeLaunchNanos[index];
  }
  /// The clock the records name: "device", "host", "fake" or "custom" (a
  /// test's `clock`).
  std::string clockName(const Backend &backend) const {
    if (!spec.fakeLaunchNanos.empty())
      return "fake";
    if (spec.clock)
      return "custom";
    return (backend.launchFlags & KJIT_LAUNCH_TIMED) ? "device" : "host";
  }

  void log(const std::string &key, const std::string &text) const {
    if (runtime.logsAutotune())
      runtime.plugins().log(
          plugin::LogLevel::Info, "kjit",
          strCat("autotune ", kernelName(), " [", key, "]: ", text));
  }

  /// The argument bound to parameter `index`: a keyword, a positional, or
  /// the parameter's default; null when the call gives none.
  const Argument *argumentOf(size_t index,
                             absl::Span<const Argument> positional,
                             absl::Span<const KeywordArgument> keywords) const {
    const KernelParam &param = kernel.manifest().params[index];
    for (const KeywordArgument &keyword : keywords)
      if (keyword.name == param.name)
        return &keyword.value;
    if (index < positional.size())
      return &positional[index];
    return param.defaultValue ? &*param.defaultValue : nullptr;
  }

  /// The key text: the key's values, then every tensor's dtype.
  std::string keyOf(absl::Span<const Argument> positional,
                    absl::Span<const KeywordArgument> keywords) const {
    const auto &params = kernel.manifest().params;
    std::vector<std::string> values, dtypes;
    for (size_t index : keyParams) {
      const Argument *value = argumentOf(index, positional, keywords);
      values.push_back(strCat(params[index].name, "=",
                              value ? valueText(*value) : "missing"));
    }
    for (size_t index = 0; index < params.size(); ++index)
      if (const Argument *value = argumentOf(index, positional, keywords);
          value && value->kind() == ArgKind::Tensor)
        dtypes.push_back(strCat(params[index].name, "=", valueText(*value)));
    std::string text = join(values, ", ");
    if (!text.empty() && !dtypes.empty())
      text += "; ";
    return text + join(dtypes, ", ");
  }

  /// The key of a call, after refusing one that sets what a configuration
  /// sets.
  absl::StatusOr<std::string>
  keyOfCall(absl::Span<const Argument> positional,
            absl::Span<const KeywordArgument> keywords) const {
    if (absl::Status status = checkKeywords(keywords); !status.ok())
      return status;
    return keyOf(positional, keywords);
  }

  /// Refuses a call that sets what a configuration sets.
  absl::Status checkKeywords(absl::Span<const KeywordArgument> keywords) const {
    for (const TuningConfig &config : spec.configs)
      for (const auto &[name, value] : config.values)
        for (const KeywordArgument &given : keywords)
          if (given.name == name)
            return absl::InvalidArgumentError(
                strCat("kernel '", kernelName(), "': '", name,
                       "' is set by the autotuner's configurations and by this "
                       "call; set it in one place"));
    return absl::OkStatus();
  }

  /// The call's keywords with configuration `index`'s values after them
  /// (checkKeywords passed).
  std::vector<KeywordArgument>
  keywordsWith(size_t index, absl::Span<const KeywordArgument> keywords) const {
    std::vector<KeywordArgument> all(keywords.begin(), keywords.end());
    for (const auto &[name, value] : spec.configs[index].values)
      all.push_back({name, value});
    return all;
  }

  absl::StatusOr<LaunchResult>
  launchWith(size_t index, const LaunchConfig &config,
             absl::Span<const Argument> positional,
             absl::Span<const KeywordArgument> keywords) {
    return kernel.launch(config, positional, keywordsWith(index, keywords));
  }

  absl::Status synchronize(const LaunchConfig &config) {
    absl::StatusOr<const Backend *> backend = runtime.backend();
    if (!backend.ok())
      return backend.status();
    return (*backend)->ref.synchronize(config.device, config.stream);
  }

  /// The indices of the configurations the prune function and the
  /// performance model keep for a call (all without them), ascending.
  absl::StatusOr<std::vector<size_t>>
  prune(absl::Span<const Argument> positional,
        absl::Span<const KeywordArgument> keywords,
        const std::string &key) const;

  /// How many threads compile `count` configurations (AutotuneSpec::
  /// compileThreads).
  absl::StatusOr<size_t> compileThreads(size_t count) const {
    size_t threads = size_t(std::max(0, spec.compileThreads));
    if (threads == 0) {
      if (const char *text = std::getenv("KJIT_TUNE_THREADS"); text && *text) {
        char *end = nullptr;
        errno = 0;
        unsigned long long value = std::strtoull(text, &end, 10);
        if (*end || errno || value == 0 || value > 1024 || *text == '-')
          return absl::InvalidArgumentError(
              strCat("KJIT_TUNE_THREADS is '", text,
                     "'; it takes a number of threads from 1 to 1024"));
        threads = size_t(value);
      } else {
        threads = std::max(1u, std::thread::hardware_concurrency());
      }
    }
    return std::max<size_t>(1, std::min(threads, count));
  }

  /// Says once per process that a backend cannot time launches.
  void warnHostClock(const Backend &backend) const {
    static std::atomic<bool> said{false};
    if (!said.exchange(true))
      runtime.plugins().log(
          plugin::LogLevel::Warning, "kjit",
          strCat("autotune: backend '", backend.ref.name(),
                 "' cannot time launches on the device (its describe lacks "
                 "KJIT_LAUNCH_TIMED); trials are timed on the host clock "
                 "around synchronize, which adds launch overhead to every "
                 "sample"));
  }

  /// "config 3 (C=4, num_warps=2)".
  std::string describe(size_t index) const {
    return strCat("config ", index, " (", spec.configs[index].text(), ")");
  }

  /// Compiles (or loads) configurations `indices` for the call on threads
  /// of their own (docs/Autotuning.md, "Compiling configurations in
  /// parallel"); a failure skips its configuration with the error its
  /// launch would meet (TuningOutcome::Result::skipped).
  absl::Status compileConfigurations(const LaunchConfig &config,
                                     absl::Span<const Argument> positional,
                                     absl::Span<const KeywordArgument> keywords,
                                     const std::string &key,
                                     const std::vector<size_t> &indices,
                                     TuningOutcome &outcome);

  /// Times configurations `indices` (those not skipped) for the call
  /// (docs/Autotuning.md, "Timing trials"): their results' samples,
  /// medians and intervals, or why they were skipped; an error stops the
  /// tuning (a device left unusable, a trial callback's failure).
  absl::Status timeConfigurations(const LaunchConfig &config,
                                  absl::Span<const Argument> positional,
                                  absl::Span<const KeywordArgument> keywords,
                                  const std::string &key,
                                  const std::vector<size_t> &indices,
                                  TuningOutcome &outcome);

  /// The records' keys and what they must echo for this call, over the
  /// configurations `kept`; nullopt when there is neither a disk nor a
  /// fleet cache, or the device cannot be described (the tuning then stays
  /// in the process).
  std::optional<TuningPlan> planFor(const LaunchConfig &config,
                                    absl::Span<const Argument> positional,
                                    absl::Span<const KeywordArgument> keywords,
                                    const std::string &key,
                                    const std::vector<size_t> &kept);

  /// Completes a record of configuration `index` timed (or failed) here
  /// and stores it if absent (no plan: nothing to store).
  void fillRecord(const TuningPlan *found, size_t index, int64_t measured,
                  const std::string &writer, cache::TimingRecord &record,
                  TuningStore &store) {
    // A median outside the records' bounds (a clock too coarse to see a
    // launch: 0) is used here but not stored: no reader would take it.
    if (!found ||
        (record.ran && !(record.medianNanos > 0 &&
                         record.medianNanos <= cache::kMaxMedianNanos)))
      return;
    const TuningPlan &plan = *found;
    plan.echoInto(index, record);
    record.measuredUnixNanos = measured;
    record.writer = writer;
    record.kjit = kBuildVersion;
    store.storeTiming(plan, index, record);
  }

  /// Takes a stored choice: the winner is the configuration under its
  /// timing key.
  TuningOutcome adopt(const TuningPlan &plan, const cache::ChoiceRecord &choice,
                      const std::string &from, TuningOutcome outcome);

  /// A stored choice found: one on disk that the fleet has not confirmed
  /// is put and read back first, when there is a store.
  TuningOutcome found(const TuningPlan &plan, TuningStore &store,
                      Found<cache::ChoiceRecord> choice, TuningOutcome outcome);

  void warn(const std::string &text) const {
    runtime.plugins().log(plugin::LogLevel::Warning, "kjit",
                          strCat("autotune: ", text));
  }

  /// Times the configurations for `key` and remembers the winner (the
  /// caller holds `mutex`).
  absl::StatusOr<TuningOutcome> tune(const LaunchConfig &config,
                                     absl::Span<const Argument> positional,
                                     absl::Span<const KeywordArgument> keywords,
                                     const std::string &key);
};

} // namespace kjit::rt

#endif // KJIT_LIB_RUNTIME_AUTOTUNERIMPL_H
