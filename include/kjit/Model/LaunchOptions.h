//===- LaunchOptions.h - launch options accepted as keywords ----*- C++ -*-===//
//
// The launch options a kernel launch accepts as keyword arguments
// (num_warps=8, debug=true, ...) and that join the specialization key. The
// table follows the scalar fields of Triton's CUDA backend options;
// docs/Specialization.md lists the fields left out and why. Part of the
// model library: no LLVM or MLIR header may be included here.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_MODEL_LAUNCHOPTIONS_H
#define KJIT_MODEL_LAUNCHOPTIONS_H

#include "kjit/Model/Argument.h"

#include "absl/status/status.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kjit::rt {

/// One launch option. The enumerator order is the table order; persisted
/// records name options, so reordering is not a format change.
enum class LaunchOption : uint8_t {
  NumWarps,
  NumCtas,
  NumStages,
  MaxNReg,
  PtxVersion,
  EnableFpFusion,
  EnableReflectFtz,
  LaunchCooperativeGrid,
  LaunchPdl,
  Debug,
  SanitizeOverflow,
};

/// Number of launch options.
inline constexpr int kNumLaunchOptions = 11;

/// How an option's value is typed.
enum class LaunchOptionKind : uint8_t {
  /// An integer.
  Int,
  /// An integer or None (unset: the backend decides).
  OptionalInt,
  /// A bool.
  Bool,
};

/// One row of the option table.
struct LaunchOptionInfo {
  LaunchOption option;
  /// The keyword spelling, e.g. "num_warps".
  std::string_view name;
  LaunchOptionKind kind;
  /// Default value (0/1 for bools; ignored for an OptionalInt, whose default
  /// is None).
  int64_t defaultValue;
  /// Smallest accepted integer value.
  int64_t minValue;
  /// Whether an integer value must be a power of two.
  bool powerOfTwo;
};

/// The option table, in LaunchOption order.
const std::array<LaunchOptionInfo, kNumLaunchOptions> &launchOptionTable();

/// The table row of `option`.
const LaunchOptionInfo &launchOptionInfo(LaunchOption option);

/// Looks an option up by its keyword spelling.
std::optional<LaunchOption> findLaunchOption(std::string_view name);

/// Values for every launch option. Every option always has a value (its
/// default until set), which is what makes the key cover every option and
/// not depend on the order in which options were given.
class LaunchOptions {
public:
  /// The stored value of an unset OptionalInt.
  static constexpr int64_t kUnset = INT64_MIN;

  /// The table defaults.
  LaunchOptions();

  /// The table defaults adjusted by the environment: `KJIT_DEBUG=1` turns
  /// debug on (a launch's debug=false cannot turn it off again, as in the
  /// reference, where the environment is or-ed in).
  static LaunchOptions fromEnvironment();

  /// Checks `value` against the option's type and range and stores it.
  /// Errors name the option: "launch option 'num_warps' must be a power of
  /// two, got 3".
  absl::Status set(LaunchOption option, const Argument &value);

  /// Integer value; kUnset for an unset OptionalInt.
  int64_t raw(LaunchOption option) const {
    return values_[static_cast<int>(option)];
  }
  /// Value of a Bool option.
  bool flag(LaunchOption option) const { return raw(option) != 0; }
  /// Value of an OptionalInt option.
  std::optional<int64_t> optional(LaunchOption option) const {
    int64_t value = raw(option);
    if (value == kUnset)
      return std::nullopt;
    return value;
  }
  /// Stores a raw value without checks (record readers validate first).
  void setRaw(LaunchOption option, int64_t value) {
    values_[static_cast<int>(option)] = value;
  }

  int numWarps() const { return static_cast<int>(raw(LaunchOption::NumWarps)); }
  int numCtas() const { return static_cast<int>(raw(LaunchOption::NumCtas)); }
  int numStages() const {
    return static_cast<int>(raw(LaunchOption::NumStages));
  }
  bool enableFpFusion() const { return flag(LaunchOption::EnableFpFusion); }
  bool debug() const { return flag(LaunchOption::Debug); }

  /// All values, in table order.
  const std::array<int64_t, kNumLaunchOptions> &values() const {
    return values_;
  }

  friend bool operator==(const LaunchOptions &a, const LaunchOptions &b) {
    return a.values_ == b.values_;
  }
  friend bool operator!=(const LaunchOptions &a, const LaunchOptions &b) {
    return !(a == b);
  }

private:
  std::array<int64_t, kNumLaunchOptions> values_;
};

/// Checks a value for an option without storing it; the value to store is
/// written to `*stored`. Shared by LaunchOptions::set and the binder.
absl::Status checkLaunchOption(LaunchOption option, const Argument &value,
                               int64_t *stored);

/// Renders an option value as records and reprs print it: "4", "true",
/// "none".
std::string formatLaunchOption(LaunchOption option, int64_t value);

} // namespace kjit::rt

#endif // KJIT_MODEL_LAUNCHOPTIONS_H
