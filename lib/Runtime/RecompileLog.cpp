//===- RecompileLog.cpp - why did a kernel compile again? -----------------===//

#include "RecompileLog.h"

#include "Digest.h"
#include "kjit/Model/LaunchOptions.h"
#include "kjit/Support/StrCat.h"

#include "absl/container/flat_hash_set.h"

namespace kjit::rt {

namespace {
/// Enough of a digest to tell two apart in a log line.
constexpr size_t kShortDigest = 12;
} // namespace

SpecializationFacts specializationFacts(const CompileFacts &in) {
  const SpecializationRecord &record = *in.record;
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
      for (size_t bit = 0; bit < record.backendAttributes.size(); ++bit)
        if (p.backendAttrs & (1u << bit))
          kjit::strAppend(&value, " +", record.backendAttributes[bit]);
    }
    facts.emplace_back(kjit::strCat(p.name, ":"), std::move(value));
  }
  if (in.globals)
    for (const auto &[name, bits] : *in.globals)
      facts.emplace_back(kjit::strCat("global ", name),
                         kjit::strCat("bits 0x", absl::Hex(bits)));
  facts.emplace_back("device", kjit::strCat(in.device));
  KeyDigest fingerprint;
  fingerprint.add("fingerprint", in.fingerprint);
  facts.emplace_back("backend fingerprint",
                     fingerprint.finishHex().substr(0, kShortDigest));
  if (in.sourceDigests)
    for (const auto &[function, digest] : *in.sourceDigests)
      facts.emplace_back(kjit::strCat("source of @", function),
                         digest.substr(0, kShortDigest));
  return facts;
}

std::string explainRecompile(std::string_view kernel,
                             const SpecializationFacts &now,
                             const std::vector<SpecializationFacts> &previous) {
  if (previous.empty())
    return std::string();
  // Parts by name: a kernel of a reloaded file may use other functions.
  auto differences = [&](const SpecializationFacts &then) {
    absl::flat_hash_map<std::string_view, std::string_view> old;
    for (const auto &[part, value] : then)
      old.emplace(part, value);
    std::vector<std::string> out;
    for (const auto &[part, value] : now) {
      auto it = old.find(part);
      std::string_view before = it == old.end() ? "none" : it->second;
      if (before != value)
        out.push_back(kjit::strCat(part, " ", before, " -> ", value));
      if (it != old.end())
        old.erase(it);
    }
    for (const auto &[part, value] : then)
      if (old.contains(part))
        out.push_back(kjit::strCat(part, " ", value, " -> none"));
    return out;
  };
  // The nearest: fewest differing parts.
  std::vector<std::string> best;
  bool first = true;
  for (const SpecializationFacts &then : previous) {
    std::vector<std::string> diffs = differences(then);
    if (first || diffs.size() < best.size())
      best = std::move(diffs);
    first = false;
  }
  std::string out = kjit::strCat("recompiling ", kernel, ": ");
  if (best.empty())
    out += "nothing differs from a compiled specialization (its entry was "
           "dropped, e.g. by a changed global)";
  for (size_t i = 0; i < best.size(); ++i)
    kjit::strAppend(&out, i ? ", " : "", best[i]);
  kjit::strAppend(&out, " (nearest of ", previous.size(), " compiled ",
                  previous.size() == 1 ? "specialization" : "specializations",
                  ")");
  return out;
}

std::string RecompileHistory::add(std::string_view file,
                                  std::string_view kernel,
                                  SpecializationFacts facts) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<SpecializationFacts> &compiled =
      byKernel_[kjit::strCat(file, "\n", kernel)];
  std::string why = explainRecompile(kernel, facts, compiled);
  compiled.push_back(std::move(facts));
  return why;
}

} // namespace kjit::rt
