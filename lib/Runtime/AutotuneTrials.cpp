//===- AutotuneTrials.cpp - compiling and timing configurations -----------===//
//
// The autotuner's measuring half (docs/Autotuning.md, "Compiling
// configurations in parallel" and "Timing trials"): the configurations of
// a key compiled on threads of their own, then timed on the device clock
// (the backend's device-time reports) or the host clock, warmed up and
// interleaved in rounds until each median is stable or stops early
// against the leader.
//
//===----------------------------------------------------------------------===//

#include "AutotunerImpl.h"

namespace kjit::rt {

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

} // namespace kjit::rt
