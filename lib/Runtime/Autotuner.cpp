//===- Autotuner.cpp - choosing a kernel's configuration by timing --------===//
//
// docs/Autotuning.md's first milestone and its parallel compiles:
// configurations checked against the manifest, the key read from the call,
// pruning, the configurations compiled on threads of their own, trials on
// the device clock (the backend's device-time reports) or the host clock,
// warmed up and interleaved in rounds until each median is stable, the
// lowest median chosen and remembered per key in the process. With a disk
// or fleet cache, the choice and each timing are records (TuningStore.h):
// looked up before anything is compiled or timed, stored if absent after,
// and a choice stored first by another process adopted.
//
//===----------------------------------------------------------------------===//

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

namespace {

/// Launch options that change speed, not results.
constexpr std::string_view kTunableOptions[] = {"num_warps", "num_stages",
                                                "num_ctas", "maxnreg"};

bool isTunableOption(std::string_view name) {
  return std::find(std::begin(kTunableOptions), std::end(kTunableOptions),
                   name) != std::end(kTunableOptions);
}

/// A value as the key and the messages show it: a tensor by its dtype,
/// anything else as a specialization's constants are written.
std::string valueText(const Argument &value) {
  if (value.kind() == ArgKind::Tensor)
    return std::string(canonicalName(value.dtype()));
  return formatConstant(value);
}

/// The pieces, `separator` between them.
template <typename Range>
std::string join(const Range &pieces, std::string_view separator) {
  std::string out;
  for (const auto &piece : pieces) {
    if (!out.empty())
      out += separator;
    out += piece;
  }
  return out;
}

/// A trial that a cache hook skipped: this process's hook, not the
/// configuration, so it is not recorded.
constexpr std::string_view kHookSkipped = "a cache hook skipped its launch";

int64_t unixNanos() {
  return int64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count());
}

uint64_t steadyNanos() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

} // namespace

std::string TuningConfig::text() const {
  std::vector<std::string> parts;
  for (const auto &[name, value] : values)
    parts.push_back(strCat(name, "=", valueText(value)));
  return join(parts, ", ");
}

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
    record.kernel = plan.kernel;
    record.source = plan.source;
    record.device = plan.device;
    record.tuningKey = plan.tuningKey;
    record.config = plan.configs[index];
    record.protocol = plan.protocol;
    record.clock = plan.clock;
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

namespace {

/// What a configuration's samples say (MeasureOptions).
struct Summary {
  double median = 0, p20 = 0, p80 = 0, ciLow = 0, ciHigh = 0;
};

Summary summarize(std::vector<double> samples) {
  Summary out;
  if (samples.empty())
    return out;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  out.median =
      n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  out.p20 = samples[size_t(std::floor(0.2 * double(n - 1)))];
  out.p80 = samples[size_t(std::ceil(0.8 * double(n - 1)))];
  // The order statistics that bound the median's 95% interval: ranks
  // n/2 -+ 0.98 sqrt(n) (0-based, clamped to the samples).
  const double half = 0.98 * std::sqrt(double(n));
  const double low = std::floor(double(n) / 2 - half);
  const double high = std::ceil(double(n) / 2 + half) - 1;
  out.ciLow = samples[low < 0 ? 0 : size_t(low)];
  out.ciHigh = samples[std::min(n - 1, size_t(std::max(0.0, high)))];
  return out;
}

/// Microseconds, as the messages show them.
std::string micros(double nanos) {
  return strCat(std::round(nanos / 100.0) / 10.0);
}

/// Device times of a batch of trial launches, filed by the backends'
/// reports (on their timer threads, or the launching one).
class TrialSink final : public plugin::DeviceTimeSink {
public:
  struct Report {
    bool reported = false;
    int32_t status = 0;
    uint64_t nanos = 0;
  };

  /// Expects a report for `id`.
  void expect(uint64_t id) {
    std::lock_guard<std::mutex> lock(mutex);
    pending.try_emplace(id);
  }

  void deviceTime(const kjit_device_time &time) override {
    std::lock_guard<std::mutex> lock(mutex);
    auto found = pending.find(time.correlation_id);
    if (found == pending.end() || found->second.reported)
      return;
    found->second = {true, time.launch_status,
                     time.end_ns > time.start_ns ? time.end_ns - time.start_ns
                                                 : 0};
    changed.notify_all();
  }

  /// Waits up to `timeout` for every expected report, then hands them
  /// over (by id, in launch order) and forgets them.
  std::vector<Report> take(const std::vector<uint64_t> &ids,
                           std::chrono::nanoseconds timeout) {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait_for(lock, timeout, [&] {
      for (uint64_t id : ids)
        if (!pending[id].reported)
          return false;
      return true;
    });
    std::vector<Report> out;
    for (uint64_t id : ids) {
      out.push_back(pending[id]);
      pending.erase(id);
    }
    return out;
  }

private:
  std::mutex mutex;
  std::condition_variable changed;
  absl::flat_hash_map<uint64_t, Report> pending;
};

/// Adds a sink to the host for a scope.
class SinkScope {
public:
  SinkScope(plugin::PluginHost &host, plugin::DeviceTimeSink &sink)
      : host(host), sink(sink) {
    host.addDeviceTimeSink(&sink);
  }
  ~SinkScope() { host.removeDeviceTimeSink(&sink); }
  SinkScope(const SinkScope &) = delete;
  SinkScope &operator=(const SinkScope &) = delete;

private:
  plugin::PluginHost &host;
  plugin::DeviceTimeSink &sink;
};

} // namespace

absl::StatusOr<std::vector<size_t>>
Autotuner::Impl::prune(absl::Span<const Argument> positional,
                       absl::Span<const KeywordArgument> keywords,
                       const std::string &key) const {
  std::vector<size_t> kept(spec.configs.size());
  for (size_t index = 0; index < kept.size(); ++index)
    kept[index] = index;
  if (!spec.prune && !(spec.perfModel && spec.topK))
    return kept;
  NamedArguments named;
  const auto &params = kernel.manifest().params;
  for (size_t index = 0; index < params.size(); ++index)
    if (const Argument *value = argumentOf(index, positional, keywords))
      named.emplace_back(params[index].name, *value);
  std::string where = strCat("kernel '", kernelName(), "': ");
  if (spec.prune) {
    absl::StatusOr<std::vector<size_t>> chosen =
        spec.prune(spec.configs, named);
    if (!chosen.ok())
      return absl::Status(chosen.status().code(),
                          strCat(where, "the prune function failed for key [",
                                 key, "]: ", chosen.status().message()));
    std::vector<size_t> indices = *chosen;
    std::sort(indices.begin(), indices.end());
    indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
    for (size_t index : indices)
      if (index >= spec.configs.size())
        return absl::InvalidArgumentError(strCat(
            where, "the prune function kept configuration ", index,
            " for key [", key, "], but there are ", spec.configs.size()));
    kept = std::move(indices);
  }
  if (spec.perfModel && spec.topK && kept.size() > spec.topK) {
    std::vector<std::pair<double, size_t>> estimates;
    for (size_t index : kept) {
      absl::StatusOr<double> estimate =
          spec.perfModel(spec.configs[index], named);
      if (!estimate.ok())
        return absl::Status(estimate.status().code(),
                            strCat(where,
                                   "the performance model failed for config ",
                                   index, " (", spec.configs[index].text(),
                                   "): ", estimate.status().message()));
      if (!std::isfinite(*estimate))
        return absl::InvalidArgumentError(
            strCat(where, "the performance model estimated ", *estimate,
                   " for config ", index, " (", spec.configs[index].text(),
                   "); an estimate is a finite number"));
      estimates.emplace_back(*estimate, index);
    }
    // By estimate, then index: a tie goes to the earlier configuration.
    std::sort(estimates.begin(), estimates.end());
    estimates.resize(spec.topK);
    kept.clear();
    for (const auto &[estimate, index] : estimates)
      kept.push_back(index);
    std::sort(kept.begin(), kept.end());
  }
  if (kept.empty())
    return absl::InvalidArgumentError(
        strCat(where, "the prune function kept no configuration for key [", key,
               "]; it must keep at least one"));
  return kept;
}

absl::Status Autotuner::Impl::compileConfigurations(
    const LaunchConfig &config, absl::Span<const Argument> positional,
    absl::Span<const KeywordArgument> keywords, const std::string &key,
    const std::vector<size_t> &indices, TuningOutcome &outcome) {
  Kernel::Impl &launcher = kernelImpl(kernel);
  // The configurations' compiles, on threads of their own: joined here,
  // before any trial (docs/Autotuning.md, "Compiling configurations in
  // parallel"). A failure skips its configuration with the error its
  // launch would meet.
  absl::StatusOr<size_t> threads = compileThreads(indices.size());
  if (!threads.ok())
    return threads.status();
  outcome.compileThreads = int(*threads);
  std::vector<absl::Status> compiled(spec.configs.size());
  {
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t at; (at = next.fetch_add(1)) < indices.size();) {
        size_t index = indices[at];
        compiled[index] = launcher.prepareTrial(config, positional,
                                                keywordsWith(index, keywords));
      }
    };
    std::vector<std::thread> pool;
    for (size_t thread = 1; thread < *threads; ++thread) {
      try {
        pool.emplace_back(work);
      } catch (const std::system_error &) {
        outcome.compileThreads = int(thread); // the ones there are do it all
        break;
      }
    }
    work();
    for (std::thread &thread : pool)
      thread.join();
  }
  for (size_t index : indices)
    if (!compiled[index].ok()) {
      outcome.results[index].skipped = std::string(compiled[index].message());
      log(key, strCat(describe(index),
                      " skipped: ", outcome.results[index].skipped));
    }

  return absl::OkStatus();
}

absl::Status Autotuner::Impl::timeConfigurations(
    const LaunchConfig &config, absl::Span<const Argument> positional,
    absl::Span<const KeywordArgument> keywords, const std::string &key,
    const std::vector<size_t> &indices, TuningOutcome &outcome) {
  const MeasureOptions &measure = spec.measure;
  absl::StatusOr<const Backend *> backend = runtime.backend();
  if (!backend.ok())
    return backend.status();
  plugin::PluginHost &host = runtime.plugins();
  const bool fake = !spec.fakeLaunchNanos.empty();
  const bool deviceClock =
      !spec.clock && !fake && ((*backend)->launchFlags & KJIT_LAUNCH_TIMED);
  outcome.clock = fake          ? "fake clock"
                  : deviceClock ? "device clock"
                                : "host clock";
  if (!deviceClock && !spec.clock && !fake)
    warnHostClock(**backend);
  Kernel::Impl &launcher = kernelImpl(kernel);
  TrialSink sink;
  std::optional<SinkScope> sinkScope;
  if (deviceClock)
    sinkScope.emplace(host, sink);

  struct Trials {
    std::vector<double> samples;
    uint64_t spent = 0;
    int batch = 1;
    /// Rounds run: at most maxSamples, should a backend drop some reports.
    int rounds = 0;
    bool done = false;
  };
  std::vector<Trials> trials(spec.configs.size());

  auto before = [&]() -> absl::Status {
    return spec.beforeTrials ? spec.beforeTrials() : absl::OkStatus();
  };
  // The tuning's end after configuration `index` broke the device.
  auto stopped = [&](size_t index, const absl::Status &status) {
    return absl::Status(status.code(),
                        strCat("kernel '", kernelName(),
                               "': autotuning stopped: ", describe(index),
                               " left the device unusable (", status.message(),
                               ")"));
  };
  // A batch of `count` launches of configuration `index`: their times per
  // launch (device clock) or their mean (host clock) into `samples` when
  // given, their measured time returned. A launch that fails (or that a
  // cache hook skips) skips the configuration; ABORTED, or a synchronize
  // that fails, stops the tuning.
  auto runBatch =
      [&](size_t index, int count, bool timed,
          std::vector<double> *samples) -> absl::StatusOr<uint64_t> {
    TuningOutcome::Result &result = outcome.results[index];
    std::vector<KeywordArgument> all = keywordsWith(index, keywords);
    if (absl::Status status = before(); !status.ok())
      return status;
    std::vector<uint64_t> ids;
    std::vector<bool> timedLaunch;
    uint64_t start = now();
    for (int launch = 0; launch < count; ++launch) {
      uint64_t id = 0;
      if (timed && deviceClock) {
        id = host.allocateCorrelationId();
        sink.expect(id);
      }
      bool deviceTimed = false;
      absl::StatusOr<LaunchResult> launched =
          launcher.launchTrial(config, positional, all, id, &deviceTimed);
      ++outcome.trialLaunches;
      if (id) {
        ids.push_back(id);
        timedLaunch.push_back(deviceTimed);
      }
      if (launched.ok() && !launched->launched)
        launched =
            absl::FailedPreconditionError("a cache hook skipped its launch");
      if (!launched.ok()) {
        if (launched.status().code() == absl::StatusCode::kAborted)
          return stopped(index, launched.status());
        result.skipped = std::string(launched.status().message());
        sink.take(ids, std::chrono::nanoseconds(0));
        return uint64_t(0);
      }
      this->launched(index);
    }
    // A synchronize that fails leaves no configuration able to run.
    if (absl::Status status = synchronize(config); !status.ok())
      return stopped(index, status);
    uint64_t elapsed = now() - start;
    if (!timed)
      return elapsed;
    if (!deviceClock) {
      if (samples)
        samples->push_back(double(elapsed) / count);
      return elapsed;
    }
    // Device times: each launch's report, waited for after the synchronize.
    std::vector<TrialSink::Report> reports =
        sink.take(ids, std::chrono::nanoseconds(measure.reportTimeoutNanos));
    uint64_t spent = 0;
    size_t missing = 0;
    for (size_t at = 0; at < reports.size(); ++at) {
      const TrialSink::Report &report = reports[at];
      if (!timedLaunch[at]) { // an empty grid: nothing ran
        if (samples)
          samples->push_back(0);
        continue;
      }
      if (!report.reported) {
        ++missing;
        continue;
      }
      if (report.status != KJIT_STATUS_OK) {
        absl::Status failed(
            absl::StatusCode(report.status),
            strCat("its launch failed on the device (",
                   absl::StatusCodeToString(absl::StatusCode(report.status)),
                   ")"));
        if (failed.code() == absl::StatusCode::kAborted)
          return stopped(index, failed);
        result.skipped = std::string(failed.message());
        return uint64_t(0);
      }
      spent += report.nanos;
      if (samples)
        samples->push_back(double(report.nanos));
    }
    if (missing)
      runtime.plugins().log(
          plugin::LogLevel::Warning, "kjit",
          strCat("autotune: backend '", (*backend)->ref.name(),
                 "' reported no device time for ", missing, " of ",
                 reports.size(), " trials of ", kernelName(), " ",
                 describe(index), " within ",
                 double(measure.reportTimeoutNanos) / 1e9,
                 " s; they are left out"));
    // None came: the backend does not time this kernel's launches, and
    // waiting for more would only cost a timeout per batch.
    if (missing && missing == size_t(std::count(timedLaunch.begin(),
                                                timedLaunch.end(), true)))
      result.skipped = "the backend reported no device time for its trials";
    return spent;
  };

  // Each configuration once untimed (it loads, or finds that a cache hook
  // skips it), then its warm-up, which sizes its batches.
  for (size_t index : indices) {
    TuningOutcome::Result &result = outcome.results[index];
    if (!result.skipped.empty())
      continue;
    absl::StatusOr<uint64_t> first = runBatch(index, 1, false, nullptr);
    if (!first.ok())
      return first.status();
    int launches = 0;
    uint64_t spent = 0;
    for (int size = 1; result.skipped.empty(); size *= 2) {
      size = std::min(size, measure.maxWarmupLaunches - launches);
      if (size <= 0)
        break;
      absl::StatusOr<uint64_t> batch = runBatch(index, size, true, nullptr);
      if (!batch.ok())
        return batch.status();
      launches += size;
      spent += *batch;
      if (launches >= measure.minWarmupLaunches && spent >= measure.warmupNanos)
        break;
    }
    if (!result.skipped.empty()) {
      log(key, strCat(describe(index), " skipped: ", result.skipped));
      continue;
    }
    result.warmupLaunches = launches;
    uint64_t each =
        std::max<uint64_t>(1, spent / uint64_t(std::max(1, launches)));
    trials[index].batch = int(
        std::clamp<uint64_t>(measure.batchNanos / each, 1,
                             uint64_t(std::max(1, measure.maxBatchLaunches))));
  }

  // Rounds, configurations in turn, so that drift favours none, until each
  // has stopped.
  auto running = [&](size_t index) {
    return !outcome.results[index].pruned &&
           outcome.results[index].skipped.empty() && !trials[index].done;
  };
  for (bool any = true; any;) {
    any = false;
    for (size_t index : indices) {
      if (!running(index))
        continue;
      Trials &trial = trials[index];
      int count = trial.batch;
      if (deviceClock)
        count = std::min(count, measure.maxSamples - int(trial.samples.size()));
      absl::StatusOr<uint64_t> batch =
          runBatch(index, std::max(1, count), true, &trial.samples);
      if (!batch.ok())
        return batch.status();
      trial.spent += *batch;
      ++trial.rounds;
      if (!outcome.results[index].skipped.empty())
        log(key, strCat(describe(index),
                        " skipped: ", outcome.results[index].skipped));
    }
    // The stopping rule, after the round.
    std::optional<size_t> leader;
    std::vector<Summary> summaries(spec.configs.size());
    for (size_t index : indices) {
      if (!outcome.results[index].skipped.empty() ||
          trials[index].samples.empty())
        continue;
      summaries[index] = summarize(trials[index].samples);
      if (int(trials[index].samples.size()) >= measure.minSamples &&
          (!leader || summaries[index].median < summaries[*leader].median))
        leader = index;
    }
    for (size_t index : indices) {
      if (!running(index))
        continue;
      Trials &trial = trials[index];
      const Summary &summary = summaries[index];
      const int n = int(trial.samples.size());
      const bool enough = n >= measure.minSamples;
      if (enough &&
          summary.ciLow >= summary.median * (1 - measure.relativeInterval) &&
          summary.ciHigh <= summary.median * (1 + measure.relativeInterval))
        trial.done = true;
      if (trial.spent >= measure.budgetNanos || n >= measure.maxSamples ||
          trial.rounds >= measure.maxSamples)
        trial.done = true;
      if (!trial.done && enough && leader && *leader != index &&
          summary.ciLow >
              summaries[*leader].ciHigh * (1 + measure.leaderMargin)) {
        trial.done = true;
        outcome.results[index].stoppedEarly = true;
        log(key, strCat(describe(index), " stopped after ", n,
                        " trials: at least ", micros(summary.ciLow), " us, ",
                        std::round(measure.leaderMargin * 100),
                        "% beyond the leader's ",
                        micros(summaries[*leader].ciHigh), " us"));
      }
      any |= !trial.done;
    }
  }

  // Each configuration's samples, summarized.
  for (size_t index : indices) {
    TuningOutcome::Result &result = outcome.results[index];
    if (!result.skipped.empty())
      continue;
    Summary summary = summarize(trials[index].samples);
    result.samples = int(trials[index].samples.size());
    result.batchLaunches = deviceClock ? 1 : trials[index].batch;
    result.medianNanos = summary.median;
    result.p20Nanos = summary.p20;
    result.p80Nanos = summary.p80;
    result.ciLowNanos = summary.ciLow;
    result.ciHighNanos = summary.ciHigh;
    if (!result.stoppedEarly)
      log(key,
          strCat(describe(index), ": ", result.samples, " trials after ",
                 result.warmupLaunches, " warm-up launches: median ",
                 micros(summary.median), " us (p20 ", micros(summary.p20),
                 ", p80 ", micros(summary.p80), ", 95% ", micros(summary.ciLow),
                 "-", micros(summary.ciHigh), "); ", outcome.clock));
  }
  return absl::OkStatus();
}

std::optional<TuningPlan> Autotuner::Impl::planFor(
    const LaunchConfig &config, absl::Span<const Argument> positional,
    absl::Span<const KeywordArgument> keywords, const std::string &key,
    const std::vector<size_t> &kept) {
  if (!runtime.diskCache() && !runtime.remoteCache())
    return std::nullopt;
  absl::StatusOr<const Backend *> backend = runtime.backend();
  if (!backend.ok())
    return std::nullopt;
  absl::StatusOr<const DeviceDescription *> described =
      runtime.device(**backend, config.device);
  absl::StatusOr<std::string> fingerprint =
      runtime.fingerprint(**backend, config.device);
  if (!described.ok() || !fingerprint.ok())
    return std::nullopt; // the launch reports it
  DeviceClassInputs device;
  device.target = (*backend)->target;
  device.arch = (*described)->arch;
  device.formats = (*described)->formats;
  device.compileOptions = (*described)->compileOptions;
  device.maxThreadsPerBlock = (*described)->maxThreadsPerBlock;
  device.fingerprint = *fingerprint;

  TuningPlan plan;
  plan.kernel = kernelName();
  plan.source = kernel.dependencyKey();
  plan.tuningKey = key;
  plan.protocol = std::string(kTrialProtocol);
  plan.clock = clockName(**backend);
  plan.device = {(*backend)->target, (*described)->arch, deviceClass(device)};
  // What the call fixes that no configuration sets: the constexprs (the
  // call's or their defaults) and the launch options it passes.
  auto setByConfigs = [&](const std::string &name) {
    for (const TuningConfig &tuning : spec.configs)
      for (const auto &value : tuning.values)
        if (value.first == name)
          return true;
    return false;
  };
  std::vector<std::string> fixed;
  const auto &params = kernel.manifest().params;
  for (size_t index = 0; index < params.size(); ++index)
    if (params[index].isConstexpr && !setByConfigs(params[index].name)) {
      const Argument *value = argumentOf(index, positional, keywords);
      fixed.push_back(strCat(params[index].name, "=",
                             value ? valueText(*value) : "missing"));
    }
  for (const KeywordArgument &keyword : keywords)
    if (findLaunchOption(keyword.name))
      fixed.push_back(strCat(keyword.name, "=", valueText(keyword.value)));
  std::string call = join(fixed, "; ");

  TimingKeyInputs inputs;
  inputs.protocol = plan.protocol;
  inputs.clock = plan.clock;
  inputs.buildIdentity = runtime.buildIdentity();
  inputs.environment = runtime.codegenEnvironment();
  inputs.compilerExtensions = runtime.compilerExtensions();
  inputs.deviceClass = plan.device.deviceClass;
  inputs.source = plan.source;
  inputs.callSpecialization = call;
  inputs.tuningKey = key;
  for (const TuningConfig &tuning : spec.configs) {
    plan.configs.push_back(tuning.text());
    plan.timingKeys.push_back(timingKey(inputs, plan.configs.back()));
  }
  // The set is what the prune function kept: another prune is another set.
  for (size_t index : kept)
    plan.set.push_back(plan.timingKeys[index]);
  std::sort(plan.set.begin(), plan.set.end());
  plan.set.erase(std::unique(plan.set.begin(), plan.set.end()), plan.set.end());
  plan.choiceKey =
      choiceKey(plan.protocol, plan.device.deviceClass, key, plan.set);
  return plan;
}

TuningOutcome Autotuner::Impl::found(const TuningPlan &plan, TuningStore &store,
                                     Found<cache::ChoiceRecord> choice,
                                     TuningOutcome outcome) {
  if (!choice.record.confirmed && runtime.remoteCache()) {
    std::string why;
    if (std::optional<Found<cache::ChoiceRecord>> fleet =
            store.confirm(plan, choice.record, &why)) {
      if (fleet->from != "disk")
        log(outcome.key,
            strCat("the fleet's choice replaced this machine's unconfirmed "
                   "one (by ",
                   choice.record.writer, ")"));
      else
        log(outcome.key, "the fleet confirmed this machine's choice");
      choice = *std::move(fleet);
    }
  }
  return adopt(plan, choice.record, choice.from, std::move(outcome));
}

TuningOutcome Autotuner::Impl::adopt(const TuningPlan &plan,
                                     const cache::ChoiceRecord &choice,
                                     const std::string &from,
                                     TuningOutcome outcome) {
  size_t winner = 0;
  while (plan.timingKeys[winner] != choice.winner) // the set holds it
    ++winner;
  outcome.winner = winner;
  outcome.results[winner].medianNanos = choice.winnerMedianNanos;
  std::string where = strCat(from, ", by ", choice.writer,
                             choice.confirmed ? "" : ", unconfirmed");
  outcome.choice = strCat("found (", where, ")");
  outcome.clock = plan.clock + " clock";
  chosen[outcome.key] = winner;
  log(outcome.key,
      strCat(spec.configs.size(), " configurations; choice found (", where,
             "): ", describe(winner), " ", micros(choice.winnerMedianNanos),
             " us"));
  return outcome;
}

absl::StatusOr<TuningOutcome> Autotuner::Impl::tune(
    const LaunchConfig &config, absl::Span<const Argument> positional,
    absl::Span<const KeywordArgument> keywords, const std::string &key) {
  TuningOutcome outcome;
  outcome.key = key;
  outcome.results.resize(spec.configs.size());
  absl::StatusOr<std::vector<size_t>> kept = prune(positional, keywords, key);
  if (!kept.ok())
    return kept.status();
  for (TuningOutcome::Result &result : outcome.results)
    result.pruned = true;
  for (size_t index : *kept)
    outcome.results[index].pruned = false;
  if (kept->size() < spec.configs.size()) {
    std::vector<std::string> names;
    for (size_t index : *kept)
      names.push_back(std::to_string(index));
    log(key, strCat(spec.configs.size(), " configurations, ",
                    spec.configs.size() - kept->size(), " pruned (kept ",
                    join(names, ", "), ")"));
  }

  // The records: a stored choice decides; otherwise one process per
  // machine tunes the set (the others wait for its choice), and the
  // configurations with a stored timing are neither compiled nor timed.
  std::optional<TuningPlan> plan =
      planFor(config, positional, keywords, key, *kept);
  TuningStore store(plan ? runtime.diskCache() : nullptr,
                    plan ? runtime.remoteCache() : nullptr);
  cache::DiskCache::KeyLock choiceLock;
  std::vector<size_t> toTime;
  if (store.enabled()) {
    if (auto choice = store.findChoice(*plan))
      return found(*plan, store, *std::move(choice), std::move(outcome));
    choiceLock = store.lockChoice(*plan);
    if (auto choice = store.findChoice(*plan))
      return found(*plan, store, *std::move(choice), std::move(outcome));
  }
  for (size_t index : *kept) {
    std::optional<Found<cache::TimingRecord>> timing =
        store.enabled() ? store.findTiming(*plan, index) : std::nullopt;
    if (!timing) {
      toTime.push_back(index);
      outcome.results[index].from = "timed";
      continue;
    }
    const cache::TimingRecord &record = timing->record;
    TuningOutcome::Result &result = outcome.results[index];
    result.from = timing->from;
    std::string where = strCat(" (", timing->from, ", by ", record.writer, ")");
    if (!record.ran) {
      result.skipped = record.reason;
      log(key, strCat(describe(index), " skipped: ", record.reason, where));
      continue;
    }
    result.medianNanos = record.medianNanos;
    result.samples = int(record.rounds);
    result.batchLaunches = int(record.launchesPerRound);
    log(key, strCat(describe(index), " found: ", micros(record.medianNanos),
                    " us", where));
  }

  if (!toTime.empty()) {
    if (absl::Status status = compileConfigurations(
            config, positional, keywords, key, toTime, outcome);
        !status.ok())
      return status;
    if (absl::Status status = timeConfigurations(config, positional, keywords,
                                                 key, toTime, outcome);
        !status.ok())
      return status;
    if (spec.afterTrials)
      if (absl::Status status = spec.afterTrials(); !status.ok())
        return status;
  } else {
    outcome.clock = plan ? plan->clock + " clock" : std::string();
  }

  // The lowest median wins; a tie goes to the lower timing key (with
  // records: the same in every process, whatever the list's order), else
  // the earlier configuration.
  auto faster = [&](size_t index, size_t than) {
    double mine = outcome.results[index].medianNanos,
           theirs = outcome.results[than].medianNanos;
    if (mine != theirs)
      return mine < theirs;
    return plan && plan->timingKeys[index] < plan->timingKeys[than];
  };
  int64_t measured = unixNanos();
  std::string writer = plan ? tuningWriter() : std::string();
  std::optional<size_t> best;
  std::vector<std::string> skipped;
  for (size_t index : *kept) {
    const TuningOutcome::Result &result = outcome.results[index];
    bool timedHere = result.from == "timed";
    if (!result.skipped.empty()) {
      skipped.push_back(strCat(describe(index), ": ", result.skipped));
      if (timedHere && result.skipped != kHookSkipped) {
        cache::TimingRecord record;
        record.ran = false;
        record.reason = result.skipped;
        fillRecord(plan ? &*plan : nullptr, index, measured, writer, record,
                   store);
      }
      continue;
    }
    if (timedHere) {
      cache::TimingRecord record;
      record.medianNanos = result.medianNanos;
      record.rounds = std::max(1, result.samples);
      record.launchesPerRound = std::max(1, result.batchLaunches);
      fillRecord(plan ? &*plan : nullptr, index, measured, writer, record,
                 store);
    }
    if (!best || faster(index, *best))
      best = index;
  }
  if (!best)
    return absl::FailedPreconditionError(strCat(
        "kernel '", kernelName(), "': no configuration could run for key [",
        key, "]: ", skipped.size(), " of ", kept->size(), " skipped (",
        join(skipped, "; "), ")"));
  outcome.winner = *best;
  std::string published;
  double winning = outcome.results[*best].medianNanos;
  if (store.enabled() && !(winning > 0 && winning <= cache::kMaxMedianNanos)) {
    outcome.choice = "not stored (its median is outside the records' bounds)";
    published = strCat("; ", outcome.choice);
  } else if (store.enabled()) {
    cache::ChoiceRecord mine;
    mine.kernel = plan->kernel;
    mine.device = plan->device;
    mine.tuningKey = key;
    mine.timingKeys = plan->set;
    mine.winner = plan->timingKeys[*best];
    mine.winnerConfig = plan->configs[*best];
    mine.winnerMedianNanos = winning;
    mine.chosenUnixNanos = measured;
    mine.writer = writer;
    mine.kjit = kBuildVersion;
    TuningStore::Published stored = store.publishChoice(*plan, mine);
    if (!stored.unconfirmed.empty())
      warn(strCat("could not confirm the fleet's choice for ", kernelName(),
                  " [", key, "] (", stored.unconfirmed,
                  "); using this process's choice, marked unconfirmed"));
    if (stored.won) {
      outcome.choice = stored.unconfirmed.empty()
                           ? "published (won)"
                           : "published (won on this machine, unconfirmed)";
    } else if (!stored.stored) {
      outcome.choice = stored.unconfirmed.empty()
                           ? "not stored (the disk cache did not take it)"
                           : "not stored (no store took it)";
    } else {
      // Another process chose first: its choice is everyone's.
      size_t theirs = 0;
      while (plan->timingKeys[theirs] != stored.choice.winner)
        ++theirs;
      outcome.choice =
          strCat("adopted (", stored.from, ", by ", stored.choice.writer, ")");
      log(key,
          strCat(stored.from == "remote" ? "the fleet's choice kept: "
                                         : "the stored choice kept: ",
                 describe(theirs), " ", micros(stored.choice.winnerMedianNanos),
                 " us, by ", stored.choice.writer, "; this process measured ",
                 describe(*best), " fastest"));
      outcome.winner = theirs;
      outcome.results[theirs].medianNanos = stored.choice.winnerMedianNanos;
    }
    published = strCat("; ", outcome.choice);
  }
  chosen[key] = outcome.winner;
  // Why: the runner-up, the fastest of the others that ran.
  std::optional<size_t> next;
  for (size_t index : *kept)
    if (index != outcome.winner && outcome.results[index].skipped.empty() &&
        (!next || faster(index, *next)))
      next = index;
  std::string runnerUp =
      next ? strCat("; next ", describe(*next), " ",
                    micros(outcome.results[*next].medianNanos), " us")
           : std::string("; no other configuration ran");
  log(key, strCat("chose ", describe(outcome.winner), " ",
                  micros(outcome.results[outcome.winner].medianNanos), " us",
                  runnerUp, published));
  return outcome;
}

Autotuner::Autotuner(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Autotuner::~Autotuner() = default;

absl::StatusOr<std::unique_ptr<Autotuner>>
Autotuner::create(Runtime &runtime, Kernel &kernel, AutotuneSpec spec) {
  const KernelManifest &manifest = kernel.manifest();
  if (spec.configs.empty())
    return absl::InvalidArgumentError(strCat(
        "autotune of kernel '", manifest.name, "' has no configurations"));
  std::vector<std::string> names, constexprs;
  for (const KernelParam &param : manifest.params) {
    names.push_back(param.name);
    if (param.isConstexpr)
      constexprs.push_back(param.name);
  }
  for (size_t index = 0; index < spec.configs.size(); ++index)
    for (const auto &[name, value] : spec.configs[index].values) {
      std::string where = strCat("autotune config ", index, " of kernel '",
                                 manifest.name, "': ");
      if (findLaunchOption(name)) {
        if (!isTunableOption(name))
          return absl::InvalidArgumentError(
              strCat(where, "launch option '", name,
                     "' changes results, not only speed; it cannot be tuned "
                     "(tunable: ",
                     join(kTunableOptions, ", "), ")"));
        continue;
      }
      if (std::find(constexprs.begin(), constexprs.end(), name) ==
          constexprs.end())
        return absl::InvalidArgumentError(strCat(
            where, "'", name, "' is not a constexpr parameter (constexprs: ",
            constexprs.empty() ? "none" : join(constexprs, ", "), ")"));
    }
  auto impl = std::unique_ptr<Impl>(
      new Impl{runtime, kernel, std::move(spec), {}, {}, {}, nullptr});
  for (const std::string &name : impl->spec.key) {
    std::string where =
        strCat("autotune key of kernel '", manifest.name, "': ");
    auto found = std::find(names.begin(), names.end(), name);
    if (found == names.end())
      return absl::InvalidArgumentError(
          strCat(where, "'", name,
                 "' names no parameter (parameters: ", join(names, ", "), ")"));
    size_t index = size_t(found - names.begin());
    if (manifest.params[index].type.kind == ParamType::Kind::Pointer)
      return absl::InvalidArgumentError(
          strCat(where, "'", name,
                 "' is a pointer; tensors join the key by dtype already"));
    impl->keyParams.push_back(index);
  }
  return std::unique_ptr<Autotuner>(new Autotuner(std::move(impl)));
}

absl::StatusOr<TuningOutcome>
Autotuner::tune(const LaunchConfig &config,
                absl::Span<const Argument> positional,
                absl::Span<const KeywordArgument> keywords) {
  Impl &impl = *impl_;
  absl::StatusOr<std::string> found = impl.keyOfCall(positional, keywords);
  if (!found.ok())
    return found.status();
  const std::string &key = *found;
  if (!config.mayLoad)
    return absl::UnavailableError(
        strCat("kernel '", impl.kernelName(), "': key [", key,
               "] cannot be tuned by a launch that may not load (a CUDA graph "
               "capture), which timing would break: tune before the capture"));
  std::lock_guard<std::mutex> lock(impl.mutex);
  return impl.tune(config, positional, keywords, key);
}

absl::StatusOr<LaunchResult>
Autotuner::launch(const LaunchConfig &config,
                  absl::Span<const Argument> positional,
                  absl::Span<const KeywordArgument> keywords) {
  Impl &impl = *impl_;
  absl::StatusOr<std::string> keyText = impl.keyOfCall(positional, keywords);
  if (!keyText.ok())
    return keyText.status();
  const std::string &key = *keyText;
  std::optional<size_t> winner;
  bool tunedNow = false;
  {
    std::lock_guard<std::mutex> lock(impl.mutex);
    if (auto found = impl.chosen.find(key); found != impl.chosen.end())
      winner = found->second;
  }
  if (!winner) {
    if (!config.mayLoad)
      return absl::UnavailableError(strCat(
          "kernel '", impl.kernelName(), "': key [", key,
          "] has no chosen configuration in this process, and this launch "
          "may not load (a CUDA graph capture), which timing would break: "
          "tune before the capture"));
    std::lock_guard<std::mutex> lock(impl.mutex);
    if (auto found = impl.chosen.find(key); found != impl.chosen.end()) {
      winner = found->second; // another thread tuned it meanwhile
    } else {
      absl::StatusOr<TuningOutcome> outcome =
          impl.tune(config, positional, keywords, key);
      if (!outcome.ok())
        return outcome.status();
      winner = outcome->winner;
      // A choice found in the records ran no trial: nothing to undo.
      tunedNow = outcome->trialLaunches > 0;
    }
  }
  // The trials left their marks in the arguments: the launch that ends a
  // tuning gets them as a trial does.
  if (tunedNow && impl.spec.beforeTrials)
    if (absl::Status status = impl.spec.beforeTrials(); !status.ok())
      return status;
  absl::StatusOr<LaunchResult> launched =
      impl.launchWith(*winner, config, positional, keywords);
  if (launched.ok()) {
    std::lock_guard<std::mutex> lock(impl.mutex);
    impl.last = &impl.spec.configs[*winner];
  }
  return launched;
}

const TuningConfig *Autotuner::lastChosen() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->last;
}

const std::vector<TuningConfig> &Autotuner::configs() const {
  return impl_->spec.configs;
}

} // namespace kjit::rt
