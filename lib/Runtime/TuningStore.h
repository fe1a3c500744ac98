//===- TuningStore.h - the autotuner's records on disk ----------*- C++ -*-===//
//
// The keys of the autotuner's records (pure functions of their inputs, like
// CacheKey.h) and their trip through the disk cache and the fleet cache: a
// timing record per configuration, a choice record per set, each checked
// against what this process expects before it is used (its metadata echoes
// the kernel, its source, the device class, the tuning key, the
// configuration or the set), written if absent so that the first writer of
// a key wins (docs/Autotuning.md "The records", "First published wins",
// "Trust rules"). A record that fails a check is rejected through the cache
// it came from (counted, said; removed from disk) and its configuration
// timed again.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_RUNTIME_TUNINGSTORE_H
#define KJIT_LIB_RUNTIME_TUNINGSTORE_H

#include "kjit/Cache/DiskCache.h"
#include "kjit/Cache/TuningRecord.h"

#include "absl/types/span.h"

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kjit::rt {

/// How the autotuner times (docs/Autotuning.md "How many samples": warm-up,
/// interleaved rounds, the stopping rule, the median): joins every timing
/// key, so that timings of another protocol never mix with these.
inline constexpr std::string_view kTrialProtocol = "kjit-trials/1";

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

  /// Puts into `record` what a timing record of configuration `index`
  /// echoes of the plan (what TuningStore::misfit checks).
  void echoInto(size_t index, cache::TimingRecord &record) const {
    record.kernel = kernel;
    record.source = source;
    record.device = device;
    record.tuningKey = tuningKey;
    record.config = configs[index];
    record.protocol = protocol;
    record.clock = clock;
  }
};

/// "host:pid".
std::string tuningWriter();

class RemoteCache;

/// A record found, and where: "disk" or "remote".
template <typename Record> struct Found {
  Record record;
  std::string from;
};

/// The records of one disk cache and one fleet cache (either may be null:
/// then nothing is found or stored there).
class TuningStore {
public:
  TuningStore(cache::DiskCache *disk, RemoteCache *remote)
      : disk_(disk), remote_(remote) {}
  bool enabled() const { return disk_ || remote_; }

  /// The choice for the plan's set, if one passes every check: on disk,
  /// else in the fleet (then written to disk).
  std::optional<Found<cache::ChoiceRecord>> findChoice(const TuningPlan &plan);
  /// Configuration `index`'s timing record, if one passes every check: on
  /// disk, else in the fleet (then written to disk).
  std::optional<Found<cache::TimingRecord>> findTiming(const TuningPlan &plan,
                                                       size_t index);
  /// Stores a timing record unless one is there already: on disk now, in
  /// the fleet through its queue.
  void storeTiming(const TuningPlan &plan, size_t index,
                   const cache::TimingRecord &record);

  /// What became of a choice published.
  struct Published {
    /// The choice in force: this process's, or the one stored first.
    cache::ChoiceRecord choice;
    /// This process's choice is the one stored (on disk, or with a store,
    /// the fleet's).
    bool won = false;
    /// It is stored somewhere (else `choice` is this process's, kept in
    /// the process only).
    bool stored = false;
    /// Where the choice in force came from when it is not ours: "disk",
    /// "remote".
    std::string from;
    /// Why the fleet could not be asked (the choice is then marked
    /// unconfirmed on disk), or empty.
    std::string unconfirmed;
  };
  /// Publishes `mine` unless a choice is there first. With a store, the
  /// fleet decides: the choice is put if absent and read back, and the one
  /// read (valid for the plan) is adopted and written to disk; when the
  /// store cannot answer, the disk decides among this machine's processes
  /// and the choice is stored with `confirmed: false`. Without one, the
  /// disk decides (putIfAbsent; an invalid stored choice is rejected and
  /// the publication tried once more).
  Published publishChoice(const TuningPlan &plan, cache::ChoiceRecord mine);
  /// A choice found on disk that is not confirmed, with a store that may
  /// now answer: the put and the read again. The fleet's choice (ours or
  /// another) with `confirmed` set; nullopt when the store still cannot
  /// answer (`why`).
  std::optional<Found<cache::ChoiceRecord>>
  confirm(const TuningPlan &plan, const cache::ChoiceRecord &unconfirmed,
          std::string *why);
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
  /// The choice the store holds for the plan, checked; nullopt on a miss
  /// or a rejected value (`*replaceable`: a bad value of ours the next put
  /// should replace).
  std::optional<cache::ChoiceRecord> remoteChoice(const TuningPlan &plan,
                                                  bool *replaceable);
  /// Puts `choice` to the store if absent and reads back what it holds:
  /// the fleet's choice, or the store's error in `why`.
  std::optional<cache::ChoiceRecord>
  settle(const TuningPlan &plan, cache::ChoiceRecord choice, std::string *why);
  void writeChoice(const TuningPlan &plan, const cache::ChoiceRecord &choice);

  cache::DiskCache *disk_;
  RemoteCache *remote_;
  /// Store keys whose value was bad but signed with our secret: the next
  /// publication replaces it instead of keeping it.
  std::set<std::string> replaceTimings_;
  bool replaceChoice_ = false;
};

} // namespace kjit::rt

#endif // KJIT_LIB_RUNTIME_TUNINGSTORE_H
