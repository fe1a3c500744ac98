//===- Autotune.cpp - kjit-run's --autotune file --------------------------===//

#include "Autotune.h"

#include "kjit/Model/InputFile.h"
#include "kjit/Model/Json.h"
#include "kjit/Support/StrCat.h"

#include <cstdio>

namespace kjit::run {

namespace {

absl::Status fileError(const std::string &path, const std::string &what) {
  return absl::InvalidArgumentError(strCat("--autotune ", path, ": ", what));
}

} // namespace

absl::StatusOr<rt::AutotuneSpec> readAutotuneFile(const std::string &path) {
  absl::StatusOr<std::string> text =
      rt::readInputFile(path, rt::kMaxRecordFileBytes, "autotune file");
  if (!text.ok())
    return text.status();
  absl::StatusOr<rt::JsonValue> doc = rt::parseJson(*text);
  if (!doc.ok())
    return fileError(path, std::string(doc.status().message()));
  if (!doc->isObject())
    return fileError(path, "the file holds an object with \"configs\" and "
                           "\"key\"");
  rt::AutotuneSpec spec;
  for (const rt::JsonMember &member : doc->members()) {
    if (member.key == "configs") {
      if (!member.value.isArray() || member.value.elements().empty())
        return fileError(path, "configs: a non-empty array of objects");
      size_t index = 0;
      for (const rt::JsonValue &config : member.value.elements()) {
        std::string where = strCat("configs[", index++, "]");
        if (!config.isObject() || config.members().empty())
          return fileError(path,
                           strCat(where, ": an object of NAME: value, not "
                                         "empty"));
        rt::TuningConfig tuning;
        for (const rt::JsonMember &value : config.members()) {
          rt::Argument argument;
          if (value.value.isBool()) {
            argument = rt::Argument::boolean(value.value.asBool());
          } else if (std::optional<rt::Int128> integer =
                         value.value.asInteger()) {
            argument = rt::Argument::integer(*integer);
          } else if (std::optional<double> number = value.value.asDouble();
                     number && value.value.isNumber()) {
            argument = rt::Argument::fp(*number);
          } else {
            return fileError(path, strCat(where, ".", value.key,
                                          ": a value is an integer, a float "
                                          "or a boolean"));
          }
          tuning.values.emplace_back(value.key, argument);
        }
        spec.configs.push_back(std::move(tuning));
      }
    } else if (member.key == "key") {
      if (!member.value.isArray())
        return fileError(path, "key: an array of parameter names");
      for (const rt::JsonValue &name : member.value.elements()) {
        if (!name.isString())
          return fileError(path, "key: an array of parameter names");
        spec.key.push_back(name.text());
      }
    } else if (member.key == "fake_launch_ns") {
      // Tests: a fake clock on which each configuration's launches cost
      // what this says (AutotuneSpec::fakeLaunchNanos).
      const char *what = "fake_launch_ns: an array of positive integers, "
                         "one per configuration";
      if (!member.value.isArray())
        return fileError(path, what);
      for (const rt::JsonValue &cost : member.value.elements()) {
        std::optional<rt::Int128> nanos =
            cost.isNumber() ? cost.asInteger() : std::nullopt;
        if (!nanos || *nanos <= 0 || *nanos > rt::Int128(1) << 40)
          return fileError(path, what);
        spec.fakeLaunchNanos.push_back(uint64_t(*nanos));
      }
    } else {
      return fileError(path,
                       strCat("unknown member '", member.key,
                              "' (it takes configs, key and fake_launch_ns)"));
    }
  }
  if (spec.configs.empty())
    return fileError(path, "no \"configs\"");
  if (!spec.fakeLaunchNanos.empty() &&
      spec.fakeLaunchNanos.size() != spec.configs.size())
    return fileError(path, strCat("fake_launch_ns has ",
                                  spec.fakeLaunchNanos.size(), " costs for ",
                                  spec.configs.size(), " configurations"));
  return spec;
}

std::string describeOutcome(const rt::AutotuneSpec &spec,
                            const rt::TuningOutcome &outcome) {
  size_t skipped = 0, found = 0, timed = 0;
  for (const rt::TuningOutcome::Result &result : outcome.results) {
    skipped += !result.skipped.empty();
    found += result.from == "disk" || result.from == "remote";
    timed += result.from == "timed";
  }
  char time[32];
  std::snprintf(time, sizeof time, "%.1f",
                outcome.results[outcome.winner].medianNanos / 1000.0);
  return strCat("autotune: key [", outcome.key, "]: ", spec.configs.size(),
                " configurations, ", timed, " timed, ", found, " found, ",
                skipped, " skipped, ", outcome.trialLaunches,
                " trial launches; chose config ", outcome.winner, " (",
                spec.configs[outcome.winner].text(), "): ", time, " us (",
                outcome.clock, ")", outcome.choice.empty() ? "" : "; choice ",
                outcome.choice);
}

} // namespace kjit::run
