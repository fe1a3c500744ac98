//===- Binder.cpp - binds launch arguments and computes the key -----------===//
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
#include <atomic>
#include <cmath>
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
  case ValueError::FloatRange:
    return kjit::strCat(describeArgument(original),
                        " is past the largest finite ",
                        canonicalName(rules.type.dtype),
                        " and would become infinity (parameter type ",
                        toString(rules.type), ")");
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

/// The value kinds a parameter's plan decides with a few compares, before
/// (and instead of) the general rules of specializeValue.
enum class FastRule : uint8_t {
  /// None: every value goes through the general rules.
  None,
  /// A typed pointer: a tensor of its dtype.
  Pointer,
  /// An integer scalar (not i1): an int in its range and in int64.
  Int,
  /// A float scalar: a float.
  Float,
  /// Unannotated: a tensor of a dtype kernel IR has, an int in int64, a
  /// float.
  Any,
};

/// Whether two byte strings of length `n` are equal. Keyword names are
/// short: two overlapping word loads each cost less than a call to memcmp
/// (num_warps, 9 bytes, took memcmp about 60 instructions).
inline bool sameBytes(const char *a, const char *b, size_t n) {
  auto load8 = [](const char *p) {
    uint64_t v;
    std::memcpy(&v, p, sizeof(v));
    return v;
  };
  auto load4 = [](const char *p) {
    uint32_t v;
    std::memcpy(&v, p, sizeof(v));
    return v;
  };
  if (n >= 8 && n <= 16)
    return load8(a) == load8(b) && load8(a + n - 8) == load8(b + n - 8);
  if (n >= 4 && n < 8)
    return load4(a) == load4(b) && load4(a + n - 4) == load4(b + n - 4);
  return std::memcmp(a, b, n) == 0;
}

inline bool sameName(std::string_view a, std::string_view b) {
  return a.size() == b.size() && sameBytes(a.data(), b.data(), a.size());
}

} // namespace

// Aligned, so that the fields every bind reads are one cache line.
struct alignas(64) BindPlan::Impl {
  /// What every bind reads of a parameter: 24 bytes, so that a launch's
  /// walk over the parameters touches few cache lines.
  struct Param {
    ParamRules rules;
    /// FastRule::Int: the declared type's range within int64 (a u64 value
    /// beyond it takes the general rules), as fitsRange reads it: the shift
    /// past which a value's bits are all its sign's (bit 7 set: a signed
    /// type) or all zero. FastRule::Float: 1 for fp16 and bf16, whose
    /// values past their largest finite one take the general rules.
    uint8_t intRange = 0;
    FastRule fast = FastRule::None;
    /// First key word of this parameter.
    uint32_t word = 0;
    /// The fast rule's key words (paramWord), with the parameter's flags
    /// applied (None for do_not_specialize, no D without alignment): for a
    /// value divisible by 16 (an aligned or mock tensor), for the integer 1,
    /// for any other. A pointer's are a const pointer's if it is declared
    /// const, else a plain pointer's (a read-only tensor adds the const).
    uint32_t wordAligned = 0;
    uint32_t wordOne = 0;
    uint32_t wordPlain = 0;
  };
  static_assert(sizeof(Param) == 24);

  // What every bind reads comes first, together.
  /// Unique per plan (never reused, unlike an address): a Binding knows
  /// whether its option words and keyword codes are this plan's.
  uint64_t id = 0;
  std::vector<Param> params;
  /// Parameters before the first one with a default (defaults are trailing).
  size_t numRequired = 0;
  size_t numWords = 0;
  const std::array<LaunchOptionInfo, kNumLaunchOptions> *optionTable =
      &launchOptionTable();
  /// Each parameter's default value (None where it has none), read only
  /// when a launch leaves the parameter out.
  std::vector<Argument> defaultValues;
  LaunchOptions defaults;
  KernelManifest manifest;
  absl::flat_hash_map<std::string, int32_t> keywords;

  // bind's rare cases, out of its code: a launch runs through few cache
  // lines of it.
  ABSL_ATTRIBUTE_COLD ABSL_ATTRIBUTE_NOINLINE absl::Status
  argumentError(size_t index, const Argument &original, ValueError error) const;
  ABSL_ATTRIBUTE_COLD ABSL_ATTRIBUTE_NOINLINE absl::Status
  tooManyArguments(size_t given) const;
  /// Sets the options in `stale` back to their defaults.
  ABSL_ATTRIBUTE_COLD ABSL_ATTRIBUTE_NOINLINE void
  resetOptions(uint32_t stale, Binding &binding, uint64_t &changed) const;
  /// A constexpr value checked and normalized in place, into its three key
  /// words at `w`.
  ABSL_ATTRIBUTE_NOINLINE ValueError bindConstexpr(const Param &param,
                                                   Argument &arg, uint64_t *w,
                                                   uint64_t &changed) const;
  /// The backend's attribute bits of parameter `index` added to `word`.
  ABSL_ATTRIBUTE_NOINLINE absl::Status
  addAttributes(size_t index, const BackendAttributes &attributes,
                const Argument &arg, uint32_t &word) const;
  /// The keyword a keyword-table code stands for (not a deprecated one).
  std::string_view nameOf(int32_t code) const {
    if (code < kOptionCode)
      return manifest.params[code].name;
    return (*optionTable)[code - kOptionCode].name;
  }
  /// Makes `binding` this plan's: sized for it, every option to be reset.
  void adopt(Binding &binding) const;
  /// Stores a checked value of option `index`; `changed` gains the key
  /// word's difference.
  void storeOption(int index, int64_t value, Binding &binding,
                   uint64_t &changed) const;
  /// The launch loop's keywords, inline: each a launch option, where the
  /// same keyword place named it last time, with a value the common checks
  /// accept. False at the first keyword that is not; bindKeywords then
  /// binds all of them again (storing an option twice changes nothing).
  bool bindRememberedOptions(absl::Span<const KeywordArgument> keywords,
                             Binding &binding, uint32_t &given,
                             uint64_t &changed) const;
  /// checkLaunchOption, with the kernel's name in its message.
  absl::Status checkOption(int index, const Argument &value,
                           int64_t &stored) const;
  /// After keywords: the omitted parameters' defaults, or the error naming
  /// those without one. `tracking`: whether states_[i].given is set.
  absl::Status fillOmitted(absl::Span<const Argument> positional,
                           Binding &binding, bool tracking) const;
  absl::Status bindKeywords(absl::Span<const Argument> positional,
                            absl::Span<const KeywordArgument> keywords,
                            Binding &binding, uint32_t &given,
                            uint64_t &changed) const;
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
  static std::atomic<uint64_t> nextId{1};
  impl->id = nextId.fetch_add(1, std::memory_order_relaxed);
  impl->defaults = defaults;
  size_t word = kNumLaunchOptions;
  impl->numRequired = manifest.params.size();
  for (size_t i = 0; i < manifest.params.size(); ++i) {
    const KernelParam &kp = manifest.params[i];
    Impl::Param param;
    param.rules = detail::rulesOf(kp);
    param.word = static_cast<uint32_t>(word);
    word += kp.isConstexpr ? 3 : 1;
    if (kp.defaultValue)
      impl->numRequired = std::min(impl->numRequired, i);
    if (!kp.isConstexpr && kp.type.kind == ParamType::Kind::Pointer) {
      param.fast = FastRule::Pointer;
    } else if (!kp.isConstexpr && kp.type.kind == ParamType::Kind::Scalar) {
      DType dtype = kp.type.dtype;
      if (isInteger(dtype)) {
        param.fast = FastRule::Int;
        bool isSigned = integerMin(dtype) < 0;
        unsigned bits = bitWidth(dtype);
        unsigned shift = isSigned ? bits - 1 : std::min(bits, 63u);
        param.intRange = static_cast<uint8_t>(shift | (isSigned ? 0x80 : 0));
      } else if (isFloat(dtype)) {
        param.fast = FastRule::Float;
        param.intRange = dtype == DType::FP16 || dtype == DType::BF16;
      }
    } else if (!kp.isConstexpr) {
      param.fast = FastRule::Any;
    }
    if (param.fast == FastRule::Any) {
      // The type comes from the value: the words hold the spec key alone.
      auto word = [&](SpecKey spec) {
        return static_cast<uint32_t>(
            detail::specKeyBits(kp.doNotSpecialize ? SpecKey::None : spec));
      };
      param.wordAligned =
          word(param.rules.align ? SpecKey::Divisible16 : SpecKey::Plain);
      param.wordOne = word(SpecKey::EqualTo1);
      param.wordPlain = word(SpecKey::Plain);
    } else if (param.fast != FastRule::None) {
      SigType type = {SigType::Kind::Scalar, kp.type.dtype};
      if (param.fast == FastRule::Pointer)
        type.kind =
            kp.isConst ? SigType::Kind::ConstPointer : SigType::Kind::Pointer;
      auto word = [&](SpecKey spec) {
        return static_cast<uint32_t>(
            detail::paramWord(type, kp.doNotSpecialize ? SpecKey::None : spec));
      };
      param.wordAligned =
          word(param.rules.align ? SpecKey::Divisible16 : SpecKey::Plain);
      param.wordOne = word(SpecKey::EqualTo1);
      param.wordPlain = word(SpecKey::Plain);
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
  impl_->adopt(binding);
  return binding;
}

void BindPlan::Impl::adopt(Binding &binding) const {
  size_t n = params.size();
  if (binding.args_.size() != n || binding.words_.size() != numWords) {
    binding.args_.resize(n);
    binding.states_.resize(n);
    binding.words_.resize(numWords);
    binding.wordsValid_ = false; // a key of another kernel, if any
    // Room for a launch's inputs: every parameter, by position or keyword,
    // and a few launch options.
    binding.inputs_.reserve(n + kNumLaunchOptions);
    binding.inputNames_.reserve(n + kNumLaunchOptions);
  }
  // Another plan of the same sizes may place its constexprs' words apart.
  for (size_t i = 0; i < n; ++i)
    binding.states_[i].word = params[i].word;
  // Keyword codes of another plan index its parameters, not these.
  std::fill(std::begin(binding.keywordCodes_), std::end(binding.keywordCodes_),
            -1);
  binding.options_ = defaults;
  // The option words are another plan's (or none): the next bind resets
  // and compares them all.
  binding.optionsSet_ = (1u << kNumLaunchOptions) - 1;
  binding.planId_ = id;
  binding.numPositionalInputs_ = Binding::kNoInputs;
}

namespace {

/// checkLaunchOption's common accepting cases, inline: a bool for a Bool
/// option, an int in range for an integer one. False leaves the value to
/// checkLaunchOption (None for an OptionalInt, and every error).
ABSL_ATTRIBUTE_ALWAYS_INLINE inline bool
launchOptionFast(const LaunchOptionInfo &info, const Argument &value,
                 int64_t &stored) {
  if (info.kind == LaunchOptionKind::Bool) {
    if (value.kind() != ArgKind::Bool)
      return false;
    stored = value.asBool() ? 1 : 0;
    return true;
  }
  if (value.kind() != ArgKind::Int)
    return false;
  Int128 v = value.asInt();
  int64_t i = static_cast<int64_t>(v);
  if (static_cast<Int128>(i) != v || i < info.minValue || i > INT32_MAX ||
      (info.powerOfTwo && (i & (i - 1)) != 0))
    return false;
  stored = i;
  return true;
}

} // namespace

ABSL_ATTRIBUTE_NOINLINE absl::Status
BindPlan::Impl::checkOption(int index, const Argument &value,
                            int64_t &stored) const {
  if (absl::Status status =
          checkLaunchOption(static_cast<LaunchOption>(index), value, &stored);
      !status.ok())
    return absl::InvalidArgumentError(
        kjit::strCat("kernel '", manifest.name, "': ", status.message()));
  return absl::OkStatus();
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline void
BindPlan::Impl::storeOption(int index, int64_t value, Binding &binding,
                            uint64_t &changed) const {
  auto option = static_cast<LaunchOption>(index);
  // Debug is or-ed with the default, as the reference or-s in the
  // environment: KJIT_DEBUG=1 cannot be switched off per launch.
  if (option == LaunchOption::Debug)
    value = value || defaults.debug();
  uint64_t &word = binding.words_[index];
  changed |= word ^ static_cast<uint64_t>(value);
  word = static_cast<uint64_t>(value);
  binding.options_.setRaw(option, value);
  binding.optionsSet_ |= 1u << index;
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline bool BindPlan::Impl::bindRememberedOptions(
    absl::Span<const KeywordArgument> keywords, Binding &binding,
    uint32_t &given, uint64_t &changed) const {
  if (keywords.size() > Binding::kRememberedKeywords)
    return false;
  for (size_t k = 0; k < keywords.size(); ++k) {
    int32_t code = binding.keywordCodes_[k];
    if (code < kOptionCode || code >= kDeprecatedCode)
      return false;
    int index = code - kOptionCode;
    const LaunchOptionInfo &info = (*optionTable)[index];
    int64_t value;
    // A repeated option is bindKeywords' to refuse.
    if (!sameName(info.name, keywords[k].name) || (given & (1u << index)) ||
        !launchOptionFast(info, keywords[k].value, value))
      return false;
    given |= 1u << index;
    storeOption(index, value, binding, changed);
  }
  return true;
}

// The slow path: keywords, or fewer positional arguments than parameters.
absl::Status
BindPlan::Impl::bindKeywords(absl::Span<const Argument> positional,
                             absl::Span<const KeywordArgument> keywordArgs,
                             Binding &binding, uint32_t &given,
                             uint64_t &changed) const {
  size_t n = params.size();
  // Which parameters have a value, set up at the first keyword that names
  // a parameter (launch options alone do not need it).
  bool tracking = false;
  // Parameters named by keyword: each one after the positional ones, and
  // none twice (else an error).
  size_t named = 0;
  for (size_t k = 0; k < keywordArgs.size(); ++k) {
    const KeywordArgument &kw = keywordArgs[k];
    // A launch loop names the same keywords in the same places: what the
    // k-th keyword was last time is tried first, by its name.
    int32_t *remembered =
        k < Binding::kRememberedKeywords ? &binding.keywordCodes_[k] : nullptr;
    int32_t code;
    if (remembered && *remembered >= 0 &&
        sameName(nameOf(*remembered), kw.name)) {
      code = *remembered;
    } else {
      // Debian's absl::string_view is not std::string_view.
      auto it =
          keywords.find(absl::string_view(kw.name.data(), kw.name.size()));
      if (it == keywords.end())
        return absl::InvalidArgumentError(kjit::strCat(
            "kernel '", manifest.name, "': keyword argument '", kw.name,
            "' was specified but unrecognised (neither a parameter nor a "
            "launch option)"));
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
      if (given & (1u << index))
        return absl::InvalidArgumentError(
            kjit::strCat("kernel '", manifest.name, "': launch option '",
                         kw.name, "' given more than once"));
      given |= 1u << index;
      int64_t value;
      if (!launchOptionFast((*optionTable)[index], kw.value, value)) {
        if (absl::Status status = checkOption(index, kw.value, value);
            !status.ok())
          return status;
      }
      storeOption(index, value, binding, changed);
      continue;
    }
    if (!tracking) {
      for (size_t i = 0; i < n; ++i)
        binding.states_[i].given = i < positional.size();
      tracking = true;
    }
    auto &state = binding.states_[code];
    if (state.given)
      return absl::InvalidArgumentError(
          kjit::strCat("kernel '", manifest.name,
                       "': got multiple values for argument '", kw.name, "'"));
    state.given = true;
    ++named;
    binding.args_[code] = kw.value;
  }
  if (positional.size() + named < n)
    return fillOmitted(positional, binding, tracking);
  return absl::OkStatus();
}

absl::Status BindPlan::Impl::fillOmitted(absl::Span<const Argument> positional,
                                         Binding &binding,
                                         bool tracking) const {
  std::vector<std::string_view> missing;
  for (size_t i = positional.size(); i < params.size(); ++i) {
    if (tracking && binding.states_[i].given)
      continue;
    if (manifest.params[i].defaultValue) {
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

namespace {

/// A read-only tensor for a pointer parameter: the key word's kind becomes
/// ConstPointer by one bit, whether it was Pointer or already ConstPointer.
constexpr uint32_t kConstPointerBit = 1;
static_assert(
    (static_cast<uint32_t>(SigType::Kind::Pointer) | kConstPointerBit) ==
        static_cast<uint32_t>(SigType::Kind::ConstPointer) &&
    (static_cast<uint32_t>(SigType::Kind::ConstPointer) | kConstPointerBit) ==
        static_cast<uint32_t>(SigType::Kind::ConstPointer));

/// Whether `i` is in the range Param::intRange describes: its bits from
/// the shift up are all its sign's (a signed type) or all zero.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline bool fitsRange(uint8_t range, int64_t i) {
  int64_t high = i >> (range & 63);
  int64_t sign = (i >> 63) & -static_cast<int64_t>(range >> 7);
  return high == sign;
}

/// The plan's word for an integer value `i`: divisible by 16, 1, other.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline uint32_t
integerWord(const BindPlan::Impl::Param &param, int64_t i) {
  return i % 16 == 0 ? param.wordAligned
         : i == 1    ? param.wordOne
                     : param.wordPlain;
}

/// The plan's word for a tensor: an aligned (or mock) one, or another.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline uint32_t
tensorWord(const BindPlan::Impl::Param &param, const Argument &arg) {
  return arg.isMock() || arg.address() % 16 == 0 ? param.wordAligned
                                                 : param.wordPlain;
}

/// specializeValue's common cases, decided with a few compares from the
/// plan's FastRule: a tensor of a typed pointer's dtype, an int that fits
/// both int64 and an integer type, a float for a float type; for an
/// unannotated parameter a tensor, an int within int64 or a float. Gives the
/// key word (paramWord) of the type and spec key specializeValue gives;
/// false for any other value, which the general rules then decide (with
/// their messages).
ABSL_ATTRIBUTE_ALWAYS_INLINE inline bool
fastSpecialize(const BindPlan::Impl::Param &param, const Argument &arg,
               uint32_t &word) {
  // The low half of an int alone, when the value fits in int64 (nearly
  // always): 64-bit compares instead of 128-bit ones.
  auto int64Of = [](const Argument &arg, int64_t &i) {
    Int128 v = arg.asInt();
    i = static_cast<int64_t>(v);
    return static_cast<Int128>(i) == v;
  };
  switch (param.fast) {
  case FastRule::None:
    return false;
  case FastRule::Pointer:
    if (arg.kind() != ArgKind::Tensor || arg.dtype() != param.rules.type.dtype)
      return false;
    word = tensorWord(param, arg);
    if (arg.isReadOnly())
      word |= kConstPointerBit;
    return true;
  case FastRule::Int: {
    int64_t i;
    if (arg.kind() != ArgKind::Int || !int64Of(arg, i) ||
        !fitsRange(param.intRange, i))
      return false;
    word = integerWord(param, i);
    return true;
  }
  case FastRule::Float:
    if (arg.kind() != ArgKind::Float)
      return false;
    // Past the type's largest finite value (or a NaN): the general rules
    // refuse what would round to infinity.
    if (ABSL_PREDICT_FALSE(param.intRange != 0 &&
                           !(std::fabs(arg.asFloat()) <=
                             detail::largestFinite(param.rules.type.dtype))))
      return false;
    word = param.wordPlain;
    return true;
  case FastRule::Any:
    // mangle_type: the type from the value (an int beyond int64 is u64 or
    // too big, None a null pointer, a bool i1: the general rules).
    switch (arg.kind()) {
    case ArgKind::Tensor: {
      if (kernelIRTypeName(arg.dtype()).empty())
        return false;
      SigType type = {param.rules.isConst || arg.isReadOnly()
                          ? SigType::Kind::ConstPointer
                          : SigType::Kind::Pointer,
                      arg.dtype()};
      word = tensorWord(param, arg) |
             static_cast<uint32_t>(detail::typeBits(type));
      return true;
    }
    case ArgKind::Int: {
      int64_t i;
      if (!int64Of(arg, i))
        return false;
      DType dtype = i == static_cast<int32_t>(i) ? DType::I32 : DType::I64;
      word = integerWord(param, i) | static_cast<uint32_t>(detail::typeBits(
                                         {SigType::Kind::Scalar, dtype}));
      return true;
    }
    case ArgKind::Float:
      word = param.wordPlain | static_cast<uint32_t>(detail::typeBits(
                                   {SigType::Kind::Scalar, DType::FP32}));
      return true;
    default:
      return false;
    }
  }
  return false;
}

/// What the general rules make of a non-constexpr value.
struct Specialized {
  SigType type;
  SpecKey spec = SpecKey::None;
  ValueError error = ValueError::Ok;
};

/// specializeValue out of line, returning by value: the bind loop's type
/// and spec key then stay in registers.
ABSL_ATTRIBUTE_NOINLINE Specialized specializeSlow(const ParamRules &rules,
                                                   Argument &arg) {
  Specialized result;
  result.error = detail::specializeValue(rules, arg, result.type, result.spec);
  return result;
}

} // namespace

absl::Status BindPlan::Impl::tooManyArguments(size_t given) const {
  size_t n = params.size();
  return absl::InvalidArgumentError(
      kjit::strCat("kernel '", manifest.name, "' takes ", n, " argument",
                   n == 1 ? "" : "s", " but ", given, " were given"));
}

void BindPlan::Impl::resetOptions(uint32_t stale, Binding &binding,
                                  uint64_t &changed) const {
  uint64_t *words = binding.words_.data();
  for (int i = 0; i < kNumLaunchOptions; ++i) {
    if (!(stale & (1u << i)))
      continue;
    auto option = static_cast<LaunchOption>(i);
    uint64_t value = static_cast<uint64_t>(defaults.raw(option));
    changed |= words[i] ^ value;
    words[i] = value;
    binding.options_.setRaw(option, defaults.raw(option));
  }
  binding.optionsSet_ &= ~stale;
}

ValueError BindPlan::Impl::bindConstexpr(const Param &param, Argument &arg,
                                         uint64_t *w, uint64_t &changed) const {
  ValueError error = detail::normalizeConstexpr(param.rules, arg);
  if (error != ValueError::Ok)
    return error;
  uint64_t old[3] = {w[0], w[1], w[2]};
  detail::constexprWords(arg, w);
  changed |= (old[0] ^ w[0]) | (old[1] ^ w[1]) | (old[2] ^ w[2]);
  return ValueError::Ok;
}

absl::Status BindPlan::Impl::addAttributes(size_t index,
                                           const BackendAttributes &attributes,
                                           const Argument &arg,
                                           uint32_t &word) const {
  SigType type = {static_cast<SigType::Kind>(word & 0xff),
                  static_cast<DType>((word >> 8) & 0xff)};
  if (!attributes.asks(type))
    return absl::OkStatus();
  absl::StatusOr<uint32_t> bits = attributes.of(index, type, arg);
  if (!bits.ok())
    return absl::Status(bits.status().code(),
                        kjit::strCat("parameter '", manifest.params[index].name,
                                     "' of kernel '", manifest.name,
                                     "': ", bits.status().message()));
  word |= static_cast<uint32_t>(detail::backendAttributeBits(*bits));
  return absl::OkStatus();
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline bool
Binding::sameInputs(absl::Span<const Argument> positional,
                    absl::Span<const KeywordArgument> keywords) const {
  if (positional.size() != numPositionalInputs_ ||
      keywords.size() != inputNames_.size())
    return false;
  // The bound arguments when they are the positional values as given (the
  // launch reads those lines next anyway), else the copy of the inputs.
  const Argument *given = positionalAsGiven_ ? args_.data() : inputs_.data();
  for (size_t i = 0; i < positional.size(); ++i)
    if (!positional[i].identical(given[i]))
      return false;
  const Argument *keywordValues =
      inputs_.data() + (positionalAsGiven_ ? 0 : positional.size());
  for (size_t i = 0; i < keywords.size(); ++i)
    if (!keywords[i].value.identical(keywordValues[i]) ||
        keywords[i].name != inputNames_[i])
      return false;
  return true;
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline void
Binding::rememberInputs(absl::Span<const Argument> positional,
                        absl::Span<const KeywordArgument> keywords,
                        bool positionalAsGiven) {
  // Usually args_ begins with the positional values as given; only values
  // the general rules bound (and may have converted) need a copy.
  positionalAsGiven_ = positionalAsGiven;
  inputs_.clear();
  if (!positionalAsGiven)
    inputs_.assign(positional.begin(), positional.end());
  inputNames_.resize(keywords.size());
  for (size_t i = 0; i < keywords.size(); ++i) {
    inputs_.push_back(keywords[i].value);
    // A loop's names are the last launch's: compared, not copied again.
    if (inputNames_[i] != keywords[i].name)
      inputNames_[i].assign(keywords[i].name);
  }
  numPositionalInputs_ = positional.size();
}

absl::Status BindPlan::bind(absl::Span<const Argument> positional,
                            absl::Span<const KeywordArgument> keywords,
                            Binding &binding,
                            const BackendAttributes *attributes) const {
  const Impl &plan = *impl_;
  const size_t n = plan.params.size();
  const size_t numPositional = positional.size();
  if (ABSL_PREDICT_FALSE(numPositional > n))
    return plan.tooManyArguments(numPositional);
  // A Binding of another plan (or none) is sized here once (the only
  // allocation it ever sees); so is one moved from, whose vectors are
  // empty.
  if (ABSL_PREDICT_FALSE(binding.planId_ != plan.id ||
                         binding.words_.size() != plan.numWords))
    plan.adopt(binding);
  // The inputs of the last successful bind into this binding (adopt forgets
  // them) again, as a launch loop gives them: the result is the same, field
  // for field, so only the key is marked unchanged. Backend attributes may
  // change for the same value (they are the backend's view of it), so a bind
  // with them always binds.
  if (!attributes && binding.wordsValid_ &&
      binding.sameInputs(positional, keywords)) {
    binding.keyUnchanged_ = true;
    return absl::OkStatus();
  }
  // From here on the arguments are written, whether the bind succeeds.
  ++binding.generation_;
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

  // Options the last bind set: those this one does not set go back to
  // their defaults. Every other option already holds its default.
  uint32_t stale = binding.optionsSet_;
  uint32_t given = 0;
  if (numPositional < plan.numRequired ||
      (!keywords.empty() &&
       !plan.bindRememberedOptions(keywords, binding, given, changed))) {
    given = 0;
    if (absl::Status status =
            plan.bindKeywords(positional, keywords, binding, given, changed);
        ABSL_PREDICT_FALSE(!status.ok()))
      return status; // optionsSet_ has gained what it set
  } else {
    // Every required parameter given by position, any keywords launch
    // options: the rest are defaults.
    for (size_t i = numPositional; i < n; ++i)
      args[i] = plan.defaultValues[i];
  }
  stale &= ~given;
  if (ABSL_PREDICT_FALSE(stale != 0))
    plan.resetOptions(stale, binding, changed);

  const Impl::Param *params = plan.params.data();
  const Argument *values = positional.data();
  bool converted = false;
  for (size_t i = 0; i < n; ++i) {
    const Impl::Param &param = params[i];
    Argument &arg = args[i];
    // The positional values are copied here rather than before the loop:
    // a few moves each instead of a call to memmove.
    if (i < numPositional)
      arg = values[i];
    uint64_t *w = words + param.word;
    uint32_t word;
    if (!fastSpecialize(param, arg, word)) {
      // The general rules may convert the value (an int for a float).
      converted |= i < numPositional;
      // The rules leave `arg` as given when they fail, so the message can
      // show it without a copy on the hot path.
      if (param.rules.isConstexpr) {
        ValueError error = plan.bindConstexpr(param, arg, w, changed);
        if (ABSL_PREDICT_FALSE(error != ValueError::Ok))
          return plan.argumentError(i, arg, error);
        continue;
      }
      Specialized general = specializeSlow(param.rules, arg);
      if (ABSL_PREDICT_FALSE(general.error != ValueError::Ok))
        return plan.argumentError(i, arg, general.error);
      word =
          static_cast<uint32_t>(detail::paramWord(general.type, general.spec));
    }
    if (attributes) {
      if (absl::Status status = plan.addAttributes(i, *attributes, arg, word);
          ABSL_PREDICT_FALSE(!status.ok()))
        return status;
    }
    changed |= *w ^ word;
    *w = word;
  }
  binding.wordsValid_ = true;
  binding.keyUnchanged_ = hadKey && changed == 0;
  binding.rememberInputs(positional, keywords, !converted);
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
