//===- Autotuner.cpp - choosing a kernel's configuration by timing --------===//
//
// Configurations checked against the manifest, the key read from the call,
// trials on the host clock around launches and a synchronize, interleaved in
// rounds, the median's minimum chosen and remembered per key in the process
// (docs/Autotuning.md). With a disk or fleet cache, the choice and each
// timing are records (TuningStore.h): looked up before anything is timed,
// stored if absent after, and a choice stored first by another process
// adopted.
//
//===----------------------------------------------------------------------===//

#include "kjit/Runtime/Autotuner.h"

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
#include <chrono>
#include <mutex>

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
  const char *clockName() const {
    if (!spec.fakeLaunchNanos.empty())
      return "fake";
    return spec.clock ? "custom" : "host";
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

  /// The records' keys and what they must echo for this call; nullopt when
  /// there is neither a disk nor a fleet cache, or the device cannot be
  /// described (the tuning then stays in the process).
  std::optional<TuningPlan> planFor(const LaunchConfig &config,
                                    absl::Span<const Argument> positional,
                                    absl::Span<const KeywordArgument> keywords,
                                    const std::string &key);

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

std::optional<TuningPlan> Autotuner::Impl::planFor(
    const LaunchConfig &config, absl::Span<const Argument> positional,
    absl::Span<const KeywordArgument> keywords, const std::string &key) {
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
  plan.clock = clockName();
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
  plan.set = plan.timingKeys;
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
  chosen[outcome.key] = winner;
  log(outcome.key,
      strCat(spec.configs.size(), " configurations; choice found (", where,
             "): config ", winner, " (", spec.configs[winner].text(), ") ",
             choice.winnerMedianNanos / 1000.0, " us"));
  return outcome;
}

absl::StatusOr<TuningOutcome> Autotuner::Impl::tune(
    const LaunchConfig &config, absl::Span<const Argument> positional,
    absl::Span<const KeywordArgument> keywords, const std::string &key) {
  const MeasureOptions &measure = spec.measure;
  TuningOutcome outcome;
  outcome.key = key;
  outcome.results.resize(spec.configs.size());
  outcome.clock = clockName();

  // The records: a stored choice decides; otherwise one process per
  // machine tunes the set (the others wait for its choice), and the
  // configurations with a stored timing are not timed again.
  std::optional<TuningPlan> plan = planFor(config, positional, keywords, key);
  TuningStore store(plan ? runtime.diskCache() : nullptr,
                    plan ? runtime.remoteCache() : nullptr);
  cache::DiskCache::KeyLock choiceLock;
  std::vector<bool> toTime(spec.configs.size(), true);
  if (store.enabled()) {
    if (auto choice = store.findChoice(*plan))
      return found(*plan, store, *std::move(choice), std::move(outcome));
    choiceLock = store.lockChoice(*plan);
    if (auto choice = store.findChoice(*plan))
      return found(*plan, store, *std::move(choice), std::move(outcome));
    for (size_t index = 0; index < spec.configs.size(); ++index) {
      std::optional<Found<cache::TimingRecord>> timing =
          store.findTiming(*plan, index);
      if (!timing)
        continue;
      const cache::TimingRecord &record = timing->record;
      TuningOutcome::Result &result = outcome.results[index];
      toTime[index] = false;
      result.from = timing->from;
      std::string where =
          strCat(" (", timing->from, ", by ", record.writer, ")");
      if (!record.ran) {
        result.skipped = record.reason;
        log(key, strCat("config ", index, " (", spec.configs[index].text(),
                        ") skipped: ", record.reason, where));
        continue;
      }
      result.medianNanos = record.medianNanos;
      result.rounds = int(record.rounds);
      log(key, strCat("config ", index, " (", spec.configs[index].text(),
                      ") found: ", record.medianNanos / 1000.0, " us", where));
    }
  }
  bool trialsBegan = false; // records may leave nothing to time
  auto before = [&]() -> absl::Status {
    trialsBegan = true;
    return spec.beforeTrials ? spec.beforeTrials() : absl::OkStatus();
  };
  // Warm-up: compiles (or loads) each configuration and finds how many
  // launches make a round.
  std::vector<int> batch(spec.configs.size(), 1);
  for (size_t index = 0; index < spec.configs.size(); ++index) {
    TuningOutcome::Result &result = outcome.results[index];
    if (!toTime[index])
      continue;
    result.from = "timed";
    if (absl::Status status = before(); !status.ok())
      return status;
    uint64_t start = now();
    for (int launch = 0; launch < std::max(1, measure.warmupLaunches);
         ++launch) {
      if (launch == 1)
        start = now(); // the first launch compiled
      absl::StatusOr<LaunchResult> launched =
          launchWith(index, config, positional, keywords);
      if (!launched.ok()) {
        result.skipped = std::string(launched.status().message());
        break;
      }
      if (!launched->launched) {
        result.skipped = std::string(kHookSkipped);
        break;
      }
      ++outcome.trialLaunches;
      this->launched(index);
    }
    if (!result.skipped.empty()) {
      log(key, strCat("config ", index, " (", spec.configs[index].text(),
                      ") skipped: ", result.skipped));
      continue;
    }
    if (absl::Status status = synchronize(config); !status.ok())
      return status; // the device is unusable: no configuration can run
    uint64_t each = std::max<uint64_t>(
        1, (now() - start) / uint64_t(std::max(1, measure.warmupLaunches - 1)));
    batch[index] = int(std::clamp<uint64_t>(
        measure.roundNanos / each, 1,
        uint64_t(std::max(1, measure.maxLaunchesPerRound))));
  }

  // Rounds, configurations in turn, so that drift favours none.
  std::vector<std::vector<double>> samples(spec.configs.size());
  for (int round = 0; round < std::max(1, measure.rounds); ++round)
    for (size_t index = 0; index < spec.configs.size(); ++index) {
      TuningOutcome::Result &result = outcome.results[index];
      if (!toTime[index] || !result.skipped.empty())
        continue;
      if (absl::Status status = before(); !status.ok())
        return status;
      uint64_t start = now();
      for (int launch = 0; launch < batch[index]; ++launch) {
        absl::StatusOr<LaunchResult> launched =
            launchWith(index, config, positional, keywords);
        if (!launched.ok()) {
          result.skipped = std::string(launched.status().message());
          break;
        }
        ++outcome.trialLaunches;
        this->launched(index);
      }
      if (!result.skipped.empty())
        continue;
      if (absl::Status status = synchronize(config); !status.ok())
        return status;
      samples[index].push_back(double(now() - start) / batch[index]);
    }
  if (spec.afterTrials && trialsBegan)
    if (absl::Status status = spec.afterTrials(); !status.ok())
      return status;

  std::optional<size_t> best;
  std::vector<std::string> skipped;
  // Ties go to the lower timing key (with records: the same in every
  // process, whatever the list's order), else the earlier configuration.
  auto faster = [&](size_t index, size_t than) {
    double mine = outcome.results[index].medianNanos,
           theirs = outcome.results[than].medianNanos;
    if (mine != theirs)
      return mine < theirs;
    return plan && plan->timingKeys[index] < plan->timingKeys[than];
  };
  int64_t measured = unixNanos();
  std::string writer = plan ? tuningWriter() : std::string();
  for (size_t index = 0; index < spec.configs.size(); ++index) {
    TuningOutcome::Result &result = outcome.results[index];
    bool timedHere = toTime[index];
    if (!result.skipped.empty()) {
      skipped.push_back(strCat("config ", index, " (",
                               spec.configs[index].text(),
                               "): ", result.skipped));
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
      std::vector<double> &times = samples[index];
      std::sort(times.begin(), times.end());
      result.rounds = int(times.size());
      result.medianNanos = times[times.size() / 2];
      log(key, strCat("config ", index, " (", spec.configs[index].text(),
                      "): ", result.rounds, " rounds of ", batch[index],
                      " launches: median ", result.medianNanos / 1000.0,
                      " us; ", outcome.clock, " clock"));
      cache::TimingRecord record;
      record.medianNanos = result.medianNanos;
      record.rounds = result.rounds;
      record.launchesPerRound = batch[index];
      fillRecord(plan ? &*plan : nullptr, index, measured, writer, record,
                 store);
    }
    if (!best || faster(index, *best))
      best = index;
  }
  if (!best)
    return absl::FailedPreconditionError(strCat(
        "kernel '", kernelName(), "': no configuration could run for key [",
        key, "]: ", skipped.size(), " of ", spec.configs.size(), " skipped (",
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
    mine.winnerMedianNanos = outcome.results[*best].medianNanos;
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
                 "config ", theirs, " (", spec.configs[theirs].text(), ") ",
                 stored.choice.winnerMedianNanos / 1000.0, " us, by ",
                 stored.choice.writer, "; this process measured config ", *best,
                 " (", spec.configs[*best].text(), ") fastest"));
      outcome.winner = theirs;
      outcome.results[theirs].medianNanos = stored.choice.winnerMedianNanos;
    }
    published = strCat("; ", outcome.choice);
  }
  chosen[key] = outcome.winner;
  // Why: the runner-up, the fastest of the others that ran.
  std::optional<size_t> next;
  for (size_t index = 0; index < spec.configs.size(); ++index)
    if (index != outcome.winner && outcome.results[index].skipped.empty() &&
        (!next || faster(index, *next)))
      next = index;
  std::string runnerUp =
      next ? strCat("; next config ", *next, " (", spec.configs[*next].text(),
                    ") ", outcome.results[*next].medianNanos / 1000.0, " us")
           : std::string("; no other configuration ran");
  log(key, strCat("chose config ", outcome.winner, " (",
                  spec.configs[outcome.winner].text(), ") ",
                  outcome.results[outcome.winner].medianNanos / 1000.0, " us",
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
