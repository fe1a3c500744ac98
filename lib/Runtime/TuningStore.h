//===- TuningStore.h - the autotuner's records on disk ----------*- C++ -*-===//
//
// The keys of the autotuner's records (pure functions of their inputs, like
// CacheKey.h) and their trip through the disk cache: a timing record per
// configuration, a choice record per set, each checked against what this
// process expects before it is used (its metadata echoes the kernel, its
// source, the device class, the tuning key, the configuration or the set),
// written if absent so that the first writer of a key wins
// (docs/Autotuning.md "The records", "First published wins", "Trust rules").
// A record that fails a check is rejected through the disk cache (counted,
// said, removed) and its configuration timed again.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_RUNTIME_TUNINGSTORE_H
#define KJIT_LIB_RUNTIME_TUNINGSTORE_H

#include "kjit/Cache/DiskCache.h"
#include "kjit/Cache/TuningRecord.h"

#include "absl/types/span.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kjit::rt {

/// How M1's autotuner times (host clock around rounds of launches and a
/// synchronize, their median): joins every timing key, so that timings of
/// another protocol never mix with these.
inline constexpr std::string_view kTrialProtocol = "kjit-trials/host-rounds/1";

/// What describes a device's kind (not its identity: two GPUs of one kind
/// share records).
struct DeviceClassInputs {
  std::string_view target, arch;
  absl::Span<const std::string> formats;
  absl::Span<const std::pair<std::string, std::string>> compileOptions;
  uint32_t maxThreadsPerBlock = 0;
  /// The backend's fingerprint (toolchain, arch, CPU features).
  std::string_view fingerprint;
};
/// 64 hex digits.
std::string deviceClass(const DeviceClassInputs &inputs);

/// Everything a configuration's code and timing depend on, but the
/// configuration.
struct TimingKeyInputs {
  std::string_view protocol, clock;
  /// The kjit build, the codegen environment, the compiler extensions
  /// (as an artifact key has them).
  std::string_view buildIdentity, environment, compilerExtensions;
  std::string_view deviceClass;
  /// The kernel's dependency key (its source digest).
  std::string_view source;
  /// What the call fixes besides the tuning key: constexprs and launch
  /// options no configuration sets ("W=1; num_stages=2").
  std::string_view callSpecialization;
  std::string_view tuningKey;
};
/// The timing key of configuration `config` ("C=1, num_warps=2").
std::string timingKey(const TimingKeyInputs &inputs, std::string_view config);
/// The choice key of a set: `sortedKeys` are its timing keys, sorted and
/// without duplicates.
std::string choiceKey(std::string_view protocol, std::string_view deviceClass,
                      std::string_view tuningKey,
                      absl::Span<const std::string> sortedKeys);

/// One tuning's records: what they must echo, and their keys.
struct TuningPlan {
  std::string kernel, source, tuningKey, protocol, clock;
  cache::TuningDevice device;
  /// Per configuration, in the list's order.
  std::vector<std::string> configs, timingKeys;
  /// The set's timing keys, sorted, no duplicates.
  std::vector<std::string> set;
  std::string choiceKey;
};

/// "host:pid".
std::string tuningWriter();

/// The records of one disk cache (null: none, and every call finds and
/// stores nothing).
class TuningStore {
public:
  explicit TuningStore(cache::DiskCache *disk) : disk_(disk) {}
  bool enabled() const { return disk_ != nullptr; }

  /// The choice for the plan's set, if one on disk passes every check.
  std::optional<cache::ChoiceRecord> findChoice(const TuningPlan &plan);
  /// Configuration `index`'s timing record, if one passes every check.
  std::optional<cache::TimingRecord> findTiming(const TuningPlan &plan,
                                                size_t index);
  /// Stores a timing record unless one is there already.
  void storeTiming(const TuningPlan &plan, size_t index,
                   const cache::TimingRecord &record);
  /// Publishes `mine` unless a choice is there: the stored one, valid for
  /// the plan, is returned with whether it is ours (`won`). An invalid
  /// stored choice is rejected and the publication tried once more; if
  /// that cannot store, `mine` is returned with `won` false and `stored`
  /// false.
  struct Published {
    cache::ChoiceRecord choice;
    bool won = false;
    bool stored = false;
  };
  Published publishChoice(const TuningPlan &plan,
                          const cache::ChoiceRecord &mine);
  /// One process per machine tunes a set: the others wait here (the disk
  /// cache's lock timeout) and then find its choice.
  cache::DiskCache::KeyLock lockChoice(const TuningPlan &plan);

  /// Why `record` does not fit configuration `index` of `plan`, or empty.
  static std::string misfit(const TuningPlan &plan, size_t index,
                            const cache::TimingRecord &record);
  /// Why `choice` does not fit `plan`'s set, or empty.
  static std::string misfit(const TuningPlan &plan,
                            const cache::ChoiceRecord &choice);

private:
  cache::DiskCache *disk_;
};

} // namespace kjit::rt

#endif // KJIT_LIB_RUNTIME_TUNINGSTORE_H
