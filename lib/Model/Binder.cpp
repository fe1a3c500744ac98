//===- Binder.cpp - binds launch arguments and computes the key ----------===//
//
// Key layout (per kernel, fixed by the plan): one word per launch option in
// table order, then per parameter one word (non-constexpr: type and spec
// key) or three words (constexpr: tag and 128-bit payload). Because every
// option has a slot, the key covers every option and cannot depend on the
// order options were given.
//
//===----------------------------------------------------------------------===//

#include "kjit/Model/Binder.h"

#include "ValueRules.h"

#include "absl/base/optimization.h"
#include "absl/container/flat_hash_map.h"
#include "kjit/Support/StrCat.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <algorithm>
#include <cstring>

namespace kjit::rt {

using detail::ParamRules;
using detail::ValueError;

std::string detail::describeValueError(ValueError error,
                                       const ParamRules &rules,
                                       const Argument &original) {
  switch (error) {
  case ValueError::Ok:
    return "";
  case ValueError::BigInt:
    return kjit::strCat("integer ", int128ToString(original.asInt()),
                        " does not fit in 64 bits (kjit accepts -2^63 to "
                        "2^64-1)");
  case ValueError::IntRange:
    return kjit::strCat("integer ", int128ToString(original.asInt()),
                        " does not fit parameter type ", toString(rules.type));
  case ValueError::DTypeMismatch:
    return kjit::strCat("expected a tensor of ",
                        canonicalName(rules.type.dtype), " (parameter type ",
                        toString(rules.type), "), got ",
                        describeArgument(original));
  case ValueError::KindMismatch:
    return kjit::strCat("expected ", expectedValue(rules), " (parameter type ",
                        toString(rules.type),
                        rules.isConstexpr ? ", constexpr" : "", "), got ",
                        describeArgument(original));
  case ValueError::CallableConstexpr:
    return "a callable cannot be a constexpr value (kernel IR cannot call "
           "host code)";
  case ValueError::TensorConstexpr:
    return "a tensor cannot be a constexpr value";
  case ValueError::NoKernelType:
    return kjit::strCat("a tensor of ", canonicalName(original.dtype()),
                        " cannot be passed to a kernel: kernel IR has no "
                        "type for ",
                        canonicalName(original.dtype()),
                        " (MLIR has no such float format)");
  }
  return "";
}

namespace {

/// Keyword table codes: a parameter index, a launch option, or one of the
/// deprecated keywords.
constexpr int32_t kOptionCode = 1 << 20;
constexpr int32_t kDeprecatedCode = 1 << 21;

struct DeprecatedKeyword {
  std::string_view name;
  std::string_view why;
};

constexpr DeprecatedKeyword kDeprecated[] = {
    {"device", "launches run on the current device"},
    {"device_type", "launches use the current target"},
    {"stream", "launches go to the current stream"},
};

} // namespace

struct BindPlan::Impl {
  /// What every bind reads of a parameter: 12 bytes, so that a launch's
  /// walk over the parameters touches few cache lines.
  struct Param {
    ParamRules rules;
    bool hasDefault = false;
    /// First key word of this parameter.
    uint32_t word = 0;
  };

  KernelManifest manifest;
  LaunchOptions defaults;
  std::vector<Param> params;
  /// Each parameter's default value (None where it has none), read only
  /// when a launch leaves the parameter out.
  std::vector<Argument> defaultValues;
  /// Parameters before the first one with a default (defaults are trailing).
  size_t numRequired = 0;
  size_t numWords = 0;
  absl::flat_hash_map<std::string, int32_t> keywords;

  absl::Status argumentError(size_t index, const Argument &original,
                             ValueError error) const;
  /// The keyword a keyword-table code stands for (not a deprecated one).
  std::string_view nameOf(int32_t code) const {
    if (code < kOptionCode)
      return manifest.params[code].name;
    return launchOptionInfo(static_cast<LaunchOption>(code - kOptionCode)).name;
  }
  absl::Status bindKeywords(absl::Span<const Argument> positional,
                            absl::Span<const KeywordArgument> keywords,
                            Binding &binding) const;
};

absl::Status BindPlan::Impl::argumentError(size_t index,
                                           const Argument &original,
                                           ValueError error) const {
  const Param &param = params[index];
  return absl::InvalidArgumentError(kjit::strCat(
      "argument '", manifest.params[index].name, "' of kernel '", manifest.name,
      "': ", detail::describeValueError(error, param.rules, original)));
}

absl::StatusOr<BindPlan> BindPlan::create(KernelManifest manifest,
                                          LaunchOptions defaults) {
  if (absl::Status status = verifyManifest(manifest); !status.ok())
    return status;
  auto impl = std::make_shared<Impl>();
  impl->defaults = defaults;
  size_t word = kNumLaunchOptions;
  impl->numRequired = manifest.params.size();
  for (size_t i = 0; i < manifest.params.size(); ++i) {
    const KernelParam &kp = manifest.params[i];
    Impl::Param param;
    param.rules = detail::rulesOf(kp);
    param.word = static_cast<uint32_t>(word);
    word += kp.isConstexpr ? 3 : 1;
    if (kp.defaultValue) {
      param.hasDefault = true;
      impl->numRequired = std::min(impl->numRequired, i);
    }
    impl->params.push_back(param);
    impl->defaultValues.push_back(kp.defaultValue.value_or(Argument::none()));
    impl->keywords.emplace(kp.name, static_cast<int32_t>(i));
  }
  impl->numWords = word;
  for (const LaunchOptionInfo &info : launchOptionTable()) {
    int index = static_cast<int>(info.option);
    // A parameter of the same name would shadow the option; verifyManifest
    // rejects that, so emplace never collides here.
    impl->keywords.emplace(info.name, kOptionCode + index);
  }
  for (size_t i = 0; i < std::size(kDeprecated); ++i)
    // A parameter called `device` binds as a parameter: emplace keeps it.
    impl->keywords.emplace(kDeprecated[i].name,
                           kDeprecatedCode + static_cast<int32_t>(i));
  impl->manifest = std::move(manifest);
  return BindPlan(std::move(impl));
}

uint64_t Binding::hashWords(absl::Span<const uint64_t> words) {
  uint64_t sum = 0;
  for (size_t i = 0; i < words.size(); ++i)
    sum += detail::mixWord(words[i], i);
  return detail::finishHash(sum, words.size());
}

const KernelManifest &BindPlan::manifest() const { return impl_->manifest; }

const LaunchOptions &BindPlan::defaultOptions() const {
  return impl_->defaults;
}

Binding BindPlan::makeBinding() const {
  Binding binding;
  binding.args_.resize(impl_->params.size());
  binding.states_.resize(impl_->params.size());
  binding.words_.resize(impl_->numWords);
  binding.options_ = impl_->defaults;
  return binding;
}

// The slow path: keywords, or fewer positional arguments than parameters.
absl::Status
BindPlan::Impl::bindKeywords(absl::Span<const Argument> positional,
                             absl::Span<const KeywordArgument> keywordArgs,
                             Binding &binding) const {
  size_t n = params.size();
  for (size_t i = 0; i < n; ++i)
    binding.states_[i].given = i < positional.size();
  bool optionGiven[kNumLaunchOptions] = {};
  for (size_t k = 0; k < keywordArgs.size(); ++k) {
    const KeywordArgument &kw = keywordArgs[k];
    // A launch loop names the same keywords in the same places: what the
    // k-th keyword was last time is tried first, by its name.
    int32_t *remembered =
        k < Binding::kRememberedKeywords ? &binding.keywordCodes_[k] : nullptr;
    int32_t code;
    if (remembered && *remembered >= 0 && nameOf(*remembered) == kw.name) {
      code = *remembered;
    } else {
      // Debian's absl::string_view is not std::string_view.
      auto it =
          keywords.find(absl::string_view(kw.name.data(), kw.name.size()));
      if (it == keywords.end())
        return absl::InvalidArgumentError(kjit::strCat(
            "kernel '", manifest.name, "': unknown keyword argument '", kw.name,
            "' (neither a parameter nor a launch option)"));
      code = it->second;
      if (remembered && code < kDeprecatedCode)
        *remembered = code;
    }
    if (code >= kDeprecatedCode) {
      const DeprecatedKeyword &dep = kDeprecated[code - kDeprecatedCode];
      return absl::InvalidArgumentError(
          kjit::strCat("kernel '", manifest.name, "': the '", dep.name,
                       "' keyword is no longer accepted: ", dep.why));
    }
    if (code >= kOptionCode) {
      int index = code - kOptionCode;
      auto option = static_cast<LaunchOption>(index);
      if (optionGiven[index])
        return absl::InvalidArgumentError(
            kjit::strCat("kernel '", manifest.name, "': launch option '",
                         kw.name, "' given more than once"));
      optionGiven[index] = true;
      int64_t value;
      if (absl::Status status = checkLaunchOption(option, kw.value, &value);
          !status.ok())
        return absl::InvalidArgumentError(
            kjit::strCat("kernel '", manifest.name, "': ", status.message()));
      // Debug is or-ed with the default, as the reference or-s in the
      // environment: KJIT_DEBUG=1 cannot be switched off per launch.
      if (option == LaunchOption::Debug)
        value = value || defaults.debug();
      binding.words_[index] = static_cast<uint64_t>(value);
      binding.options_.setRaw(option, value);
      continue;
    }
    auto &state = binding.states_[code];
    if (state.given)
      return absl::InvalidArgumentError(
          kjit::strCat("kernel '", manifest.name,
                       "': got multiple values for argument '", kw.name, "'"));
    state.given = true;
    binding.args_[code] = kw.value;
  }
  std::vector<std::string_view> missing;
  for (size_t i = positional.size(); i < n; ++i) {
    if (binding.states_[i].given)
      continue;
    if (params[i].hasDefault) {
      binding.args_[i] = defaultValues[i];
      continue;
    }
    // Only an error allocates.
    missing.push_back(manifest.params[i].name);
  }
  if (!missing.empty()) {
    std::string names;
    for (std::string_view name : missing)
      kjit::strAppend(&names, names.empty() ? "'" : ", '", name, "'");
    return absl::InvalidArgumentError(
        kjit::strCat("kernel '", manifest.name, "': missing argument",
                     missing.size() > 1 ? "s " : " ", names));
  }
  return absl::OkStatus();
}

absl::Status BindPlan::bind(absl::Span<const Argument> positional,
                            absl::Span<const KeywordArgument> keywords,
                            Binding &binding,
                            const BackendAttributes *attributes) const {
  const Impl &plan = *impl_;
  const size_t n = plan.params.size();
  if (ABSL_PREDICT_FALSE(positional.size() > n))
    return absl::InvalidArgumentError(kjit::strCat(
        "kernel '", plan.manifest.name, "' takes ", n, " argument",
        n == 1 ? "" : "s", " but ", positional.size(), " were given"));
  // A Binding from makeBinding has the right sizes; another one is sized
  // here once (the only allocation it ever sees).
  if (ABSL_PREDICT_FALSE(binding.args_.size() != n ||
                         binding.words_.size() != plan.numWords)) {
    binding.args_.resize(n);
    binding.states_.resize(n);
    binding.words_.resize(plan.numWords);
    binding.wordsValid_ = false; // a key of another kernel, if any
    // Keyword codes of another plan index its parameters, not these.
    std::fill(std::begin(binding.keywordCodes_),
              std::end(binding.keywordCodes_), -1);
  }
  Argument *args = binding.args_.data();
  uint64_t *words = binding.words_.data();
  // Each key word is compared with the one it replaces, so that the caller
  // learns whether the key changed without comparing keys (keyUnchanged).
  // Until this bind succeeds the words are not a key.
  const bool hadKey = binding.wordsValid_;
  binding.wordsValid_ = false;
  binding.keyUnchanged_ = false;
  binding.hashed_ = false;
  uint64_t changed = 0;
  uint64_t oldOptions[kNumLaunchOptions];
  std::memcpy(oldOptions, words, sizeof(oldOptions));
  std::copy(positional.begin(), positional.end(), args);
  std::memcpy(words, plan.defaults.values().data(),
              sizeof(uint64_t) * kNumLaunchOptions);
  binding.options_ = plan.defaults;

  if (!keywords.empty() || positional.size() < plan.numRequired) {
    if (absl::Status status = plan.bindKeywords(positional, keywords, binding);
        ABSL_PREDICT_FALSE(!status.ok()))
      return status;
  } else {
    // Positional only, every required parameter given: the rest are
    // defaults.
    for (size_t i = positional.size(); i < n; ++i)
      args[i] = plan.defaultValues[i];
  }

  for (int i = 0; i < kNumLaunchOptions; ++i)
    changed |= oldOptions[i] ^ words[i];
  Binding::ParamState *states = binding.states_.data();
  for (size_t i = 0; i < n; ++i) {
    const Impl::Param &param = plan.params[i];
    Argument &arg = args[i];
    uint64_t *w = words + param.word;
    // The rules leave `arg` as given when they fail, so the message can
    // show it without a copy on the hot path.
    if (param.rules.isConstexpr) {
      ValueError error = detail::normalizeConstexpr(param.rules, arg);
      if (ABSL_PREDICT_FALSE(error != ValueError::Ok))
        return plan.argumentError(i, arg, error);
      states[i].specKey = SpecKey::None;
      uint64_t old[3] = {w[0], w[1], w[2]};
      detail::constexprWords(arg, w);
      changed |= (old[0] ^ w[0]) | (old[1] ^ w[1]) | (old[2] ^ w[2]);
      continue;
    }
    SigType type;
    SpecKey spec;
    ValueError error = detail::specializeValue(param.rules, arg, type, spec);
    if (ABSL_PREDICT_FALSE(error != ValueError::Ok))
      return plan.argumentError(i, arg, error);
    states[i].type = type;
    states[i].specKey = spec;
    uint64_t word = detail::paramWord(type, spec);
    states[i].backendAttrs = 0;
    if (attributes && attributes->asks(type)) {
      absl::StatusOr<uint32_t> bits = attributes->of(i, type, arg);
      if (ABSL_PREDICT_FALSE(!bits.ok()))
        return absl::Status(bits.status().code(),
                            kjit::strCat("parameter '",
                                         plan.manifest.params[i].name,
                                         "' of kernel '", plan.manifest.name,
                                         "': ", bits.status().message()));
      states[i].backendAttrs = uint8_t(*bits);
      word |= detail::backendAttributeBits(*bits);
    }
    changed |= *w ^ word;
    *w = word;
  }
  binding.wordsValid_ = true;
  binding.keyUnchanged_ = hadKey && changed == 0;
  return absl::OkStatus();
}

SpecializationRecord
BindPlan::makeRecord(const Binding &binding,
                     const BackendAttributes *attributes) const {
  const Impl &plan = *impl_;
  SpecializationRecord record;
  record.name = plan.manifest.name;
  record.options = binding.options();
  if (attributes)
    record.backendAttributes = attributes->names();
  for (size_t i = 0; i < plan.params.size(); ++i) {
    SpecializedParam param;
    param.name = plan.manifest.params[i].name;
    param.isConstexpr = plan.params[i].rules.isConstexpr;
    if (param.isConstexpr) {
      param.value = binding.arguments()[i];
    } else {
      param.type = binding.type(i);
      param.specKey = binding.specKey(i);
      param.backendAttrs = binding.backendAttributes(i);
    }
    record.params.push_back(std::move(param));
  }
  record.key = canonicalKey(record);
  return record;
}

absl::StatusOr<SpecializationKey>
BindPlan::keyForRecord(const SpecializationRecord &record,
                       const BackendAttributes *attributes) const {
  const Impl &plan = *impl_;
  const KernelManifest &m = plan.manifest;
  auto mismatch = [&](const auto &...parts) {
    return absl::InvalidArgumentError(
        kjit::strCat("specialization record for kernel '", record.name,
                     "' does not fit kernel '", m.name, "': ", parts...));
  };
  if (record.name != m.name)
    return mismatch("the names differ");
  if (record.params.size() != m.params.size())
    return mismatch("it has ", record.params.size(), " parameters, the kernel ",
                    m.params.size());
  // The record's backend attributes in the backend's bit order: the same
  // set (a record of another backend, or of an older one, says nothing of
  // an attribute this one keys on).
  static const std::vector<std::string> kNone;
  const std::vector<std::string> &described =
      attributes ? attributes->names() : kNone;
  std::vector<uint32_t> toBackendBit;
  for (const std::string &name : record.backendAttributes) {
    auto it = std::find(described.begin(), described.end(), name);
    if (it == described.end())
      return mismatch("it has backend attribute '", name,
                      "', which the backend does not describe",
                      described.empty()
                          ? std::string(" (it describes none)")
                          : kjit::strCat(" (it describes ",
                                         absl::StrJoin(described, ", "), ")"));
    toBackendBit.push_back(1u << (it - described.begin()));
  }
  for (const std::string &name : described)
    if (std::find(record.backendAttributes.begin(),
                  record.backendAttributes.end(),
                  name) == record.backendAttributes.end())
      return mismatch("it does not say where backend attribute '", name,
                      "' holds (a record made for another backend?)");
  std::vector<uint64_t> words(plan.numWords);
  for (int i = 0; i < kNumLaunchOptions; ++i)
    words[i] = static_cast<uint64_t>(record.options.values()[i]);
  for (size_t i = 0; i < m.params.size(); ++i) {
    const SpecializedParam &rp = record.params[i];
    const KernelParam &kp = m.params[i];
    const Impl::Param &param = plan.params[i];
    if (rp.name != kp.name)
      return mismatch("parameter ", i, " is '", rp.name, "', the kernel's is '",
                      kp.name, "'");
    if (rp.isConstexpr != kp.isConstexpr)
      return mismatch("parameter '", kp.name, "' is ",
                      rp.isConstexpr ? "" : "not ",
                      "constexpr in the record but ",
                      kp.isConstexpr ? "" : "not ", "in the kernel");
    uint64_t *w = words.data() + param.word;
    if (kp.isConstexpr) {
      Argument value = rp.value;
      if (ValueError error = detail::normalizeConstexpr(param.rules, value);
          error != ValueError::Ok)
        return mismatch(
            "parameter '", kp.name,
            "': ", detail::describeValueError(error, param.rules, rp.value));
      detail::constexprWords(value, w);
      continue;
    }
    // The record's type must be one a launch could have produced.
    bool typeFits = true;
    switch (kp.type.kind) {
    case ParamType::Kind::Any:
      break;
    case ParamType::Kind::Scalar:
      typeFits = rp.type == SigType{SigType::Kind::Scalar, kp.type.dtype};
      break;
    case ParamType::Kind::Pointer:
      typeFits = rp.type.kind == SigType::Kind::NullPointer ||
                 (rp.type.isPointer() && rp.type.dtype == kp.type.dtype &&
                  (!kp.isConst || rp.type.kind == SigType::Kind::ConstPointer));
      break;
    }
    if (!typeFits)
      return mismatch("parameter '", kp.name, "' has type ", toString(rp.type),
                      ", the kernel declares ", toString(kp.type));
    if ((rp.specKey == SpecKey::None) != kp.doNotSpecialize)
      return mismatch("parameter '", kp.name, "' ",
                      kp.doNotSpecialize ? "is do_not_specialize but has "
                                           "a spec key"
                                         : "has no spec key");
    if (rp.specKey == SpecKey::Divisible16 && kp.doNotSpecializeOnAlignment)
      return mismatch("parameter '", kp.name,
                      "' is do_not_specialize_on_alignment but has the D "
                      "spec key");
    *w = detail::paramWord(rp.type, rp.specKey);
    uint32_t bits = 0;
    for (size_t bit = 0; bit < toBackendBit.size(); ++bit)
      if (rp.backendAttrs & (1u << bit))
        bits |= toBackendBit[bit];
    *w |= detail::backendAttributeBits(bits);
  }
  return SpecializationKey(KeyView{Binding::hashWords(words), words});
}

} // namespace kjit::rt
