//===- LaunchOptions.cpp - launch options accepted as keywords ------------===//

#include "kjit/Model/LaunchOptions.h"

#include "kjit/Support/StrCat.h"

#include "absl/strings/str_cat.h"

#include <cstdlib>
#include <string>

namespace kjit::rt {
namespace {

// Defaults are Triton's CUDAOptions defaults. Ranges are what a launch can
// honour: a warp count is a power of two (the reference asserts it), a CTA
// count and register limit are positive, zero pipeline stages means none.
constexpr std::array<LaunchOptionInfo, kNumLaunchOptions> kTable = {{
    {LaunchOption::NumWarps, "num_warps", LaunchOptionKind::Int, 4, 1, true},
    {LaunchOption::NumCtas, "num_ctas", LaunchOptionKind::Int, 1, 1, false},
    {LaunchOption::NumStages, "num_stages", LaunchOptionKind::Int, 3, 0, false},
    {LaunchOption::MaxNReg, "maxnreg", LaunchOptionKind::OptionalInt, 0, 1,
     false},
    {LaunchOption::PtxVersion, "ptx_version", LaunchOptionKind::OptionalInt, 0,
     1, false},
    {LaunchOption::EnableFpFusion, "enable_fp_fusion", LaunchOptionKind::Bool,
     1, 0, false},
    {LaunchOption::EnableReflectFtz, "enable_reflect_ftz",
     LaunchOptionKind::Bool, 1, 0, false},
    {LaunchOption::LaunchCooperativeGrid, "launch_cooperative_grid",
     LaunchOptionKind::Bool, 0, 0, false},
    {LaunchOption::LaunchPdl, "launch_pdl", LaunchOptionKind::Bool, 0, 0,
     false},
    {LaunchOption::Debug, "debug", LaunchOptionKind::Bool, 0, 0, false},
    {LaunchOption::SanitizeOverflow, "sanitize_overflow",
     LaunchOptionKind::Bool, 0, 0, false},
}};

const char *kindNoun(LaunchOptionKind kind) {
  switch (kind) {
  case LaunchOptionKind::Int:
    return "an integer";
  case LaunchOptionKind::OptionalInt:
    return "an integer or None";
  case LaunchOptionKind::Bool:
    return "a bool";
  }
  return "";
}

} // namespace

const std::array<LaunchOptionInfo, kNumLaunchOptions> &launchOptionTable() {
  return kTable;
}

const LaunchOptionInfo &launchOptionInfo(LaunchOption option) {
  return kTable[static_cast<int>(option)];
}

std::optional<LaunchOption> findLaunchOption(std::string_view name) {
  for (const LaunchOptionInfo &info : kTable)
    if (info.name == name)
      return info.option;
  return std::nullopt;
}

LaunchOptions::LaunchOptions() {
  for (const LaunchOptionInfo &info : kTable)
    values_[static_cast<int>(info.option)] =
        info.kind == LaunchOptionKind::OptionalInt ? kUnset : info.defaultValue;
}

LaunchOptions LaunchOptions::fromEnvironment() {
  LaunchOptions options;
  const char *debug = std::getenv("KJIT_DEBUG");
  if (debug && std::string_view(debug) == "1")
    options.setRaw(LaunchOption::Debug, 1);
  // As Triton's TRITON_DEFAULT_FP_FUSION: unset or "1" keeps fusion on,
  // anything else turns it off. A launch's enable_fp_fusion overrides it.
  const char *fusion = std::getenv("KJIT_DEFAULT_FP_FUSION");
  if (fusion && std::string_view(fusion) != "1")
    options.setRaw(LaunchOption::EnableFpFusion, 0);
  return options;
}

absl::Status checkLaunchOption(LaunchOption option, const Argument &value,
                               int64_t *stored) {
  const LaunchOptionInfo &info = launchOptionInfo(option);
  auto wrongKind = [&] {
    return absl::InvalidArgumentError(
        kjit::strCat("launch option '", info.name, "' expects ",
                     kindNoun(info.kind), ", got ", describeArgument(value)));
  };
  if (info.kind == LaunchOptionKind::Bool) {
    if (value.kind() != ArgKind::Bool)
      return wrongKind();
    *stored = value.asBool() ? 1 : 0;
    return absl::OkStatus();
  }
  if (value.isNone() && info.kind == LaunchOptionKind::OptionalInt) {
    *stored = LaunchOptions::kUnset;
    return absl::OkStatus();
  }
  // A bool is not accepted as an integer here although Python would: num_warps
  // =True is far likelier a slip than a request for one warp.
  if (value.kind() != ArgKind::Int)
    return wrongKind();
  Int128 v = value.asInt();
  if (v < info.minValue)
    return absl::InvalidArgumentError(
        kjit::strCat("launch option '", info.name, "' must be at least ",
                     info.minValue, ", got ", int128ToString(v)));
  if (v > INT32_MAX)
    return absl::InvalidArgumentError(
        kjit::strCat("launch option '", info.name, "' must be at most ",
                     INT32_MAX, ", got ", int128ToString(v)));
  if (info.powerOfTwo && (v & (v - 1)) != 0)
    return absl::InvalidArgumentError(
        kjit::strCat("launch option '", info.name,
                     "' must be a power of two, got ", int128ToString(v)));
  *stored = static_cast<int64_t>(v);
  return absl::OkStatus();
}

absl::Status LaunchOptions::set(LaunchOption option, const Argument &value) {
  int64_t stored;
  if (absl::Status status = checkLaunchOption(option, value, &stored);
      !status.ok())
    return status;
  setRaw(option, stored);
  return absl::OkStatus();
}

std::string formatLaunchOption(LaunchOption option, int64_t value) {
  const LaunchOptionInfo &info = launchOptionInfo(option);
  if (info.kind == LaunchOptionKind::Bool)
    return value ? "true" : "false";
  if (value == LaunchOptions::kUnset)
    return "none";
  return std::to_string(value);
}

} // namespace kjit::rt
