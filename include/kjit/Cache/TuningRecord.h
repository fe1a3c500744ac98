//===- TuningRecord.h - the autotuner's records, as JSON --------*- C++ -*-===//
//
// The metadata of the disk cache's tuning entries (EntryFormat.h kinds
// Tuning and Choice, no payload), which the fleet cache carries in its
// signed envelopes like any entry (docs/Autotuning.md "The records"):
//
//   timing record  one configuration's timing (or why it cannot run) for
//                  one kernel source, device class and tuning key
//   choice record  the configuration chosen among a set of timing records;
//                  the first one published for a key is everyone's
//
// The reader is strict: every field present, of its type and within its
// bounds, no unknown field, so that a record no kjit could have written is
// refused with what is wrong. Whether a record fits the caller (its kernel,
// device class, key, set) is the caller's check (lib/Runtime/TuningStore).
// No LLVM, no process state: the runtime and kjit-cache both link it.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_CACHE_TUNINGRECORD_H
#define KJIT_CACHE_TUNINGRECORD_H

#include "absl/status/statusor.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kjit::cache {

inline constexpr std::string_view kTimingSchema = "kjit.tuning/1";
inline constexpr std::string_view kChoiceSchema = "kjit.tuning-choice/1";
/// Bounds of what a record may claim.
inline constexpr size_t kMaxRecordString = 4096;
inline constexpr double kMaxMedianNanos = 60e9;
inline constexpr int64_t kMaxRounds = 1000000;
inline constexpr int64_t kMaxLaunchesPerRound = 1000000;
inline constexpr size_t kMaxChoiceSet = 4096;

/// The device a record was measured on: the backend's target and arch,
/// and the device class (a digest of everything that describes the
/// device's kind, not its identity: TuningStore's deviceClass).
struct TuningDevice {
  std::string target, arch, deviceClass;
};

struct TimingRecord {
  std::string kernel;
  /// The kernel's dependency key: its source digest (text, callees,
  /// globals).
  std::string source;
  TuningDevice device;
  std::string tuningKey;
  /// The configuration as the autotuner writes it: "C=1, num_warps=2".
  std::string config;
  /// How it was timed ("kjit-trials/host-rounds/1") and on which clock
  /// ("host", "fake", "custom").
  std::string protocol, clock;
  /// True: it ran, `medianNanos` and the counts say how fast. False: it
  /// cannot run on this device, `reason` says why.
  bool ran = true;
  std::string reason;
  double medianNanos = 0;
  int64_t rounds = 0, launchesPerRound = 0;
  int64_t measuredUnixNanos = 0;
  /// "host:pid" of the process that measured it, and its kjit version.
  std::string writer, kjit;
};

struct ChoiceRecord {
  std::string kernel;
  TuningDevice device;
  std::string tuningKey;
  /// The set chosen from: its timing keys, sorted, no duplicates.
  std::vector<std::string> timingKeys;
  /// The winner: one of `timingKeys`, its configuration and median.
  std::string winner, winnerConfig;
  double winnerMedianNanos = 0;
  /// False: the fleet's store could not be asked whether another choice
  /// was published first (docs/Autotuning.md "First published wins").
  bool confirmed = true;
  int64_t chosenUnixNanos = 0;
  std::string writer, kjit;
};

/// The records as their entries' metadata (compact JSON, fields in a fixed
/// order; a median in shortest round-trip form).
std::string toJson(const TimingRecord &record);
std::string toJson(const ChoiceRecord &record);

/// Reads a record back; DataLoss errors name the field and what is wrong
/// ("timing record: median_ns is -1; a median is positive and at most
/// 60 s").
absl::StatusOr<TimingRecord> timingRecordFromJson(std::string_view json);
absl::StatusOr<ChoiceRecord> choiceRecordFromJson(std::string_view json);

} // namespace kjit::cache

#endif // KJIT_CACHE_TUNINGRECORD_H
