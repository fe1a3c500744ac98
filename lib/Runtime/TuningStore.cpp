//===- TuningStore.cpp - the autotuner's records on disk ------------------===//

#include "TuningStore.h"

#include "CacheKey.h"
#include "Digest.h"
#include "RemoteCache.h"
#include "kjit/Cache/EntryFormat.h"
#include "kjit/Support/StrCat.h"

#include <chrono>

#include <unistd.h>

namespace kjit::rt {

std::string deviceClass(const DeviceClassInputs &in) {
  KeyDigest digest;
  digest.add("kjit-device-class", std::to_string(cache::kFormatVersion));
  addBackend(digest, in.target, in.arch, in.formats, in.compileOptions);
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
    return names("kernel source", record.source, plan.source, "this kernel's");
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

namespace {

cache::EntryData entryOf(const std::string &key,
                         const cache::ChoiceRecord &choice) {
  cache::EntryData entry;
  entry.kind = cache::EntryKind::Choice;
  entry.key = key;
  entry.createdNanos = uint64_t(choice.chosenUnixNanos);
  entry.metadata = cache::toJson(choice);
  return entry;
}

bool sameChoice(const cache::ChoiceRecord &a, const cache::ChoiceRecord &b) {
  return a.writer == b.writer && a.chosenUnixNanos == b.chosenUnixNanos &&
         a.winner == b.winner;
}

} // namespace

std::optional<cache::ChoiceRecord>
TuningStore::remoteChoice(const TuningPlan &plan, bool *replaceable) {
  std::optional<cache::EntryData> entry =
      remote_->get(plan.choiceKey, replaceable, cache::EntryKind::Choice);
  if (!entry)
    return std::nullopt;
  absl::StatusOr<cache::ChoiceRecord> choice =
      cache::choiceRecordFromJson(entry->metadata);
  std::string why = choice.ok() ? misfit(plan, *choice)
                                : std::string(choice.status().message());
  if (!why.empty()) {
    // Signed with this fleet's secret: a good value may replace it.
    *replaceable = true;
    remote_->reject(plan.choiceKey, why, cache::EntryKind::Choice);
    return std::nullopt;
  }
  remote_->hit();
  return *std::move(choice);
}

void TuningStore::writeChoice(const TuningPlan &plan,
                              const cache::ChoiceRecord &choice) {
  if (disk_)
    (void)disk_->put(entryOf(plan.choiceKey, choice));
}

std::optional<Found<cache::ChoiceRecord>>
TuningStore::findChoice(const TuningPlan &plan) {
  if (disk_) {
    cache::DiskCache::Lookup found =
        disk_->get(cache::EntryKind::Choice, plan.choiceKey);
    if (found.result == cache::DiskCache::Lookup::Result::Hit) {
      absl::StatusOr<cache::ChoiceRecord> choice =
          cache::choiceRecordFromJson(found.entry.metadata);
      std::string why = choice.ok() ? misfit(plan, *choice)
                                    : std::string(choice.status().message());
      if (why.empty())
        return Found<cache::ChoiceRecord>{*std::move(choice), "disk"};
      disk_->reject(plan.choiceKey, why);
    }
  }
  if (!remote_)
    return std::nullopt;
  bool replaceable = false;
  std::optional<cache::ChoiceRecord> choice = remoteChoice(plan, &replaceable);
  replaceChoice_ = replaceable;
  if (!choice)
    return std::nullopt;
  writeChoice(plan, *choice);
  return Found<cache::ChoiceRecord>{*std::move(choice), "remote"};
}

std::optional<Found<cache::TimingRecord>>
TuningStore::findTiming(const TuningPlan &plan, size_t index) {
  const std::string &key = plan.timingKeys[index];
  if (disk_) {
    cache::DiskCache::Lookup found = disk_->get(cache::EntryKind::Tuning, key);
    if (found.result == cache::DiskCache::Lookup::Result::Hit) {
      absl::StatusOr<cache::TimingRecord> record =
          cache::timingRecordFromJson(found.entry.metadata);
      std::string why = record.ok() ? misfit(plan, index, *record)
                                    : std::string(record.status().message());
      if (why.empty())
        return Found<cache::TimingRecord>{*std::move(record), "disk"};
      disk_->reject(key, why);
    }
  }
  if (!remote_)
    return std::nullopt;
  bool replaceable = false;
  std::optional<cache::EntryData> entry =
      remote_->get(key, &replaceable, cache::EntryKind::Tuning);
  if (!entry) {
    if (replaceable)
      replaceTimings_.insert(key);
    return std::nullopt;
  }
  absl::StatusOr<cache::TimingRecord> record =
      cache::timingRecordFromJson(entry->metadata);
  std::string why = record.ok() ? misfit(plan, index, *record)
                                : std::string(record.status().message());
  if (!why.empty()) {
    replaceTimings_.insert(key);
    remote_->reject(key, why, cache::EntryKind::Tuning);
    return std::nullopt;
  }
  remote_->hit();
  if (disk_)
    (void)disk_->putIfAbsent(*entry);
  return Found<cache::TimingRecord>{*std::move(record), "remote"};
}

void TuningStore::storeTiming(const TuningPlan &plan, size_t index,
                              const cache::TimingRecord &record) {
  cache::EntryData entry;
  entry.kind = cache::EntryKind::Tuning;
  entry.key = plan.timingKeys[index];
  entry.createdNanos = uint64_t(record.measuredUnixNanos);
  entry.metadata = cache::toJson(record);
  // Exists: another process timed it first; its record stays (records are
  // never replaced, so that everyone who read one read the same).
  if (disk_)
    (void)disk_->putIfAbsent(entry);
  if (remote_)
    remote_->publish(entry, replaceTimings_.count(entry.key) != 0);
}

std::optional<cache::ChoiceRecord>
TuningStore::settle(const TuningPlan &plan, cache::ChoiceRecord choice,
                    std::string *why) {
  choice.confirmed = true; // the store's copy is the fleet's
  cache::EntryData entry = entryOf(plan.choiceKey, choice);
  // A bad value of ours was there at the lookup: another process may have
  // replaced it with its choice since, which a put without NX would
  // overwrite. A look first narrows that window to the put's round trip.
  if (replaceChoice_) {
    bool replaceable = false;
    if (std::optional<cache::ChoiceRecord> held =
            remoteChoice(plan, &replaceable))
      return held;
    replaceChoice_ = replaceable;
  }
  // Twice at most: a bad value of ours in the store is replaced once.
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (absl::Status put = remote_->publishNow(entry, replaceChoice_);
        !put.ok()) {
      *why = strCat("store '", remote_->storeName(), "': ", put.message());
      return std::nullopt;
    }
    // The put's answer does not say who won: a store may answer "stored"
    // for a key it kept. What it holds now does.
    bool replaceable = false;
    if (std::optional<cache::ChoiceRecord> held =
            remoteChoice(plan, &replaceable))
      return held;
    replaceChoice_ = replaceable;
    if (!replaceable)
      break;
  }
  *why = strCat("store '", remote_->storeName(),
                "': it holds no usable choice after the put");
  return std::nullopt;
}

TuningStore::Published TuningStore::publishChoice(const TuningPlan &plan,
                                                  cache::ChoiceRecord mine) {
  Published published;
  published.choice = mine;
  if (remote_) {
    std::string why;
    if (std::optional<cache::ChoiceRecord> fleet = settle(plan, mine, &why)) {
      published.stored = true;
      published.won = sameChoice(*fleet, mine);
      if (!published.won)
        published.from = "remote";
      published.choice = *std::move(fleet);
      writeChoice(plan, published.choice);
      return published;
    }
    published.unconfirmed = why;
    mine.confirmed = false;
    published.choice = mine;
  }
  if (!disk_)
    return published;
  cache::EntryData entry = entryOf(plan.choiceKey, mine);
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
    cache::DiskCache::Lookup found =
        disk_->get(cache::EntryKind::Choice, plan.choiceKey);
    if (found.result != cache::DiskCache::Lookup::Result::Hit)
      continue;
    absl::StatusOr<cache::ChoiceRecord> stored =
        cache::choiceRecordFromJson(found.entry.metadata);
    std::string why = stored.ok() ? misfit(plan, *stored)
                                  : std::string(stored.status().message());
    if (!why.empty()) {
      disk_->reject(plan.choiceKey, why);
      continue;
    }
    published.choice = *std::move(stored);
    published.stored = true; // by another writer: adopted, not won
    published.from = "disk";
    return published;
  }
  return published;
}

std::optional<Found<cache::ChoiceRecord>>
TuningStore::confirm(const TuningPlan &plan,
                     const cache::ChoiceRecord &unconfirmed, std::string *why) {
  if (!remote_)
    return std::nullopt;
  std::optional<cache::ChoiceRecord> fleet = settle(plan, unconfirmed, why);
  if (!fleet)
    return std::nullopt;
  writeChoice(plan, *fleet);
  bool ours = sameChoice(*fleet, unconfirmed);
  return Found<cache::ChoiceRecord>{*std::move(fleet),
                                    ours ? "disk" : "remote"};
}

cache::DiskCache::KeyLock TuningStore::lockChoice(const TuningPlan &plan) {
  if (!disk_)
    return {};
  return disk_->lock(plan.choiceKey, "tuning");
}

} // namespace kjit::rt
