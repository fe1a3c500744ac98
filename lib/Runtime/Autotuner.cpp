//===- Autotuner.cpp - choosing a kernel's configuration by timing --------===//
//
// docs/Autotuning.md: configurations checked against the manifest, the key
// read from the call, pruning, then (AutotuneTrials.cpp) the configurations
// compiled on threads of their own and timed; the lowest median chosen and
// remembered per key in the process. With a disk or fleet cache, the choice
// and each timing are records (TuningStore.h): looked up before anything is
// compiled or timed, stored if absent after, and a choice stored first by
// another process adopted.
//
//===----------------------------------------------------------------------===//

#include "AutotunerImpl.h"

namespace kjit::rt {

namespace {

/// Launch options that change speed, not results.
constexpr std::string_view kTunableOptions[] = {"num_warps", "num_stages",
                                                "num_ctas", "maxnreg"};

bool isTunableOption(std::string_view name) {
  return std::find(std::begin(kTunableOptions), std::end(kTunableOptions),
                   name) != std::end(kTunableOptions);
}

/// A trial that a cache hook skipped: this process's hook, not the
/// configuration, so it is not recorded.
constexpr std::string_view kHookSkipped = "a cache hook skipped its launch";

int64_t unixNanos() {
  return int64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count());
}

} // namespace

std::string TuningConfig::text() const {
  std::vector<std::string> parts;
  for (const auto &[name, value] : values)
    parts.push_back(strCat(name, "=", valueText(value)));
  return join(parts, ", ");
}

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
