//===- TuningStore.cpp - the autotuner's records on disk ------------------===//

#include "TuningStore.h"

#include "Digest.h"
#include "kjit/Cache/EntryFormat.h"
#include "kjit/Support/StrCat.h"

#include <chrono>

#include <unistd.h>

namespace kjit::rt {

std::string deviceClass(const DeviceClassInputs &in) {
  KeyDigest digest;
  digest.add("kjit-device-class", std::to_string(cache::kFormatVersion));
  digest.add("target", in.target);
  digest.add("arch", in.arch);
  for (const std::string &format : in.formats)
    digest.add("format", format);
  for (const auto &[name, value] : in.compileOptions)
    digest.add("option:" + name, value);
  digest.add("max-threads-per-block", std::to_string(in.maxThreadsPerBlock));
  digest.add("fingerprint", in.fingerprint);
  return digest.finishHex();
}

std::string timingKey(const TimingKeyInputs &in, std::string_view config) {
  KeyDigest digest;
  // The domain: a timing key never equals another kind's key.
  digest.add("kjit-tuning", std::to_string(cache::kFormatVersion));
  digest.add("protocol", in.protocol);
  digest.add("clock", in.clock);
  digest.add("build", in.buildIdentity);
  digest.add("environment", in.environment);
  digest.add("extensions", in.compilerExtensions);
  digest.add("device-class", in.deviceClass);
  digest.add("source", in.source);
  digest.add("call", in.callSpecialization);
  digest.add("tuning-key", in.tuningKey);
  digest.add("config", config);
  return digest.finishHex();
}

std::string choiceKey(std::string_view protocol, std::string_view deviceClass,
                      std::string_view tuningKey,
                      absl::Span<const std::string> sortedKeys) {
  KeyDigest digest;
  digest.add("kjit-tuning-choice", std::to_string(cache::kFormatVersion));
  digest.add("protocol", protocol);
  digest.add("device-class", deviceClass);
  digest.add("tuning-key", tuningKey);
  for (const std::string &key : sortedKeys)
    digest.add("timing-key", key);
  return digest.finishHex();
}

std::string tuningWriter() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0)
    host[0] = '\0';
  return strCat(host[0] ? host : "unknown-host", ":", getpid());
}

namespace {

/// "its metadata names device class 'b...', not this device's 'c...'".
std::string names(std::string_view what, std::string_view found,
                  std::string_view ours, std::string_view whose = "") {
  return strCat("its metadata names ", what, " '", found, "', not ",
                whose.empty() ? std::string_view("") : whose,
                whose.empty() ? "" : " ", "'", ours, "'");
}

std::string deviceMisfit(const cache::TuningDevice &found,
                         const cache::TuningDevice &ours) {
  if (found.deviceClass != ours.deviceClass)
    return names("device class", found.deviceClass, ours.deviceClass,
                 "this device's");
  if (found.target != ours.target)
    return names("target", found.target, ours.target);
  if (found.arch != ours.arch)
    return names("arch", found.arch, ours.arch);
  return {};
}

} // namespace

std::string TuningStore::misfit(const TuningPlan &plan, size_t index,
                                const cache::TimingRecord &record) {
  if (record.kernel != plan.kernel)
    return names("kernel", record.kernel, plan.kernel);
  if (record.source != plan.source)
    return names("kernel source", record.source, plan.source,
                 "this kernel's");
  if (std::string device = deviceMisfit(record.device, plan.device);
      !device.empty())
    return device;
  if (record.tuningKey != plan.tuningKey)
    return names("tuning key", record.tuningKey, plan.tuningKey);
  if (record.config != plan.configs[index])
    return names("configuration", record.config, plan.configs[index]);
  if (record.protocol != plan.protocol)
    return names("protocol", record.protocol, plan.protocol);
  if (record.clock != plan.clock)
    return names("clock", record.clock, plan.clock);
  return {};
}

std::string TuningStore::misfit(const TuningPlan &plan,
                                const cache::ChoiceRecord &choice) {
  if (choice.kernel != plan.kernel)
    return names("kernel", choice.kernel, plan.kernel);
  if (std::string device = deviceMisfit(choice.device, plan.device);
      !device.empty())
    return device;
  if (choice.tuningKey != plan.tuningKey)
    return names("tuning key", choice.tuningKey, plan.tuningKey);
  if (choice.timingKeys != plan.set)
    return strCat("its metadata names another set of configurations (",
                  choice.timingKeys.size(), " timing keys), not this one (",
                  plan.set.size(), ")");
  // The reader checked that the winner is in the set; its configuration
  // must be the one this process has under that key.
  for (size_t index = 0; index < plan.timingKeys.size(); ++index)
    if (plan.timingKeys[index] == choice.winner &&
        plan.configs[index] != choice.winnerConfig)
      return names("winning configuration", choice.winnerConfig,
                   plan.configs[index]);
  return {};
}

std::optional<cache::ChoiceRecord>
TuningStore::findChoice(const TuningPlan &plan) {
  if (!disk_)
    return std::nullopt;
  cache::DiskCache::Lookup found =
      disk_->get(cache::EntryKind::Choice, plan.choiceKey);
  if (found.result != cache::DiskCache::Lookup::Result::Hit)
    return std::nullopt;
  absl::StatusOr<cache::ChoiceRecord> choice =
      cache::choiceRecordFromJson(found.entry.metadata);
  if (!choice.ok()) {
    disk_->reject(plan.choiceKey, std::string(choice.status().message()));
    return std::nullopt;
  }
  if (std::string why = misfit(plan, *choice); !why.empty()) {
    disk_->reject(plan.choiceKey, why);
    return std::nullopt;
  }
  return *std::move(choice);
}

std::optional<cache::TimingRecord>
TuningStore::findTiming(const TuningPlan &plan, size_t index) {
  if (!disk_)
    return std::nullopt;
  const std::string &key = plan.timingKeys[index];
  cache::DiskCache::Lookup found = disk_->get(cache::EntryKind::Tuning, key);
  if (found.result != cache::DiskCache::Lookup::Result::Hit)
    return std::nullopt;
  absl::StatusOr<cache::TimingRecord> record =
      cache::timingRecordFromJson(found.entry.metadata);
  if (!record.ok()) {
    disk_->reject(key, std::string(record.status().message()));
    return std::nullopt;
  }
  if (std::string why = misfit(plan, index, *record); !why.empty()) {
    disk_->reject(key, why);
    return std::nullopt;
  }
  return *std::move(record);
}

void TuningStore::storeTiming(const TuningPlan &plan, size_t index,
                              const cache::TimingRecord &record) {
  if (!disk_)
    return;
  cache::EntryData entry;
  entry.kind = cache::EntryKind::Tuning;
  entry.key = plan.timingKeys[index];
  entry.createdNanos = uint64_t(record.measuredUnixNanos);
  entry.metadata = cache::toJson(record);
  // Exists: another process timed it first; its record stays (records are
  // never replaced, so that everyone who read one read the same).
  (void)disk_->putIfAbsent(entry);
}

TuningStore::Published
TuningStore::publishChoice(const TuningPlan &plan,
                           const cache::ChoiceRecord &mine) {
  Published published;
  published.choice = mine;
  if (!disk_)
    return published;
  cache::EntryData entry;
  entry.kind = cache::EntryKind::Choice;
  entry.key = plan.choiceKey;
  entry.createdNanos = uint64_t(mine.chosenUnixNanos);
  entry.metadata = cache::toJson(mine);
  // Twice at most: a stored choice that does not check is rejected
  // (removed), and the second try may store ours.
  for (int attempt = 0; attempt < 2; ++attempt) {
    cache::DiskCache::PutResult put = disk_->putIfAbsent(entry);
    if (put == cache::DiskCache::PutResult::Failed)
      return published;
    if (put == cache::DiskCache::PutResult::Stored) {
      published.won = published.stored = true;
      return published;
    }
    if (std::optional<cache::ChoiceRecord> stored = findChoice(plan)) {
      published.choice = *std::move(stored);
      published.stored = true; // by another writer: adopted, not won
      return published;
    }
  }
  return published;
}

cache::DiskCache::KeyLock TuningStore::lockChoice(const TuningPlan &plan) {
  if (!disk_)
    return {};
  return disk_->lock(plan.choiceKey, "tuning");
}

} // namespace kjit::rt
