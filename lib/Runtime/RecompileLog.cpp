//===- RecompileLog.cpp - why did a kernel compile again? -----------------===//

#include "RecompileLog.h"

#include "kjit/Model/LaunchOptions.h"
#include "kjit/Support/StrCat.h"

namespace kjit::rt {

SpecializationFacts specializationFacts(
    const SpecializationRecord &record,
    const std::vector<std::pair<std::string, uint64_t>> &globals,
    int32_t device) {
  SpecializationFacts facts;
  for (const LaunchOptionInfo &info : launchOptionTable()) {
    int64_t raw = record.options.raw(info.option);
    facts.emplace_back(std::string(info.name), raw == LaunchOptions::kUnset
                                                   ? "None"
                                                   : kjit::strCat(raw));
  }
  for (const SpecializedParam &p : record.params) {
    std::string value;
    if (p.isConstexpr) {
      value = kjit::strCat("constexpr = ", formatConstant(p.value));
    } else {
      value = toString(p.type);
      if (p.specKey != SpecKey::None)
        kjit::strAppend(&value, " (", toString(p.specKey), ")");
    }
    facts.emplace_back(kjit::strCat(p.name, ":"), std::move(value));
  }
  for (const auto &[name, bits] : globals)
    facts.emplace_back(kjit::strCat("global ", name),
                       kjit::strCat("bits 0x", absl::Hex(bits)));
  facts.emplace_back("device", kjit::strCat(device));
  return facts;
}

std::string explainRecompile(std::string_view kernel,
                             const SpecializationFacts &now,
                             const std::vector<SpecializationFacts> &previous) {
  if (previous.empty())
    return std::string();
  // The nearest: fewest differing parts (all facts of one kernel have the
  // same parts in the same order).
  size_t best = 0, bestDiffs = SIZE_MAX;
  for (size_t i = 0; i < previous.size(); ++i) {
    size_t diffs = 0;
    for (size_t k = 0; k < now.size() && k < previous[i].size(); ++k)
      diffs += now[k].second != previous[i][k].second;
    if (diffs < bestDiffs) {
      bestDiffs = diffs;
      best = i;
    }
  }
  std::string out = kjit::strCat("recompiling ", kernel, ": ");
  bool first = true;
  const SpecializationFacts &near = previous[best];
  for (size_t k = 0; k < now.size() && k < near.size(); ++k) {
    if (now[k].second == near[k].second)
      continue;
    kjit::strAppend(&out, first ? "" : ", ", now[k].first, " ", near[k].second,
                    " -> ", now[k].second);
    first = false;
  }
  if (first)
    out += "nothing differs from a compiled specialization (its entry was "
           "dropped, e.g. by a changed global)";
  kjit::strAppend(&out, " (nearest of ", previous.size(), " compiled ",
                  previous.size() == 1 ? "specialization" : "specializations",
                  ")");
  return out;
}

} // namespace kjit::rt
