//===- Binder.h - binds launch arguments and computes the key ---*- C++ -*-===//
//
// The binder turns a launch's positional and keyword arguments into the
// bound argument list (defaults applied), the launch options, and the
// specialization key. A BindPlan is computed once per kernel from its
// manifest; a Binding is the reusable output storage. Binding into a
// Binding that has been used once does not allocate, so the cache-hit path
// (bind, hash, look up) never touches the heap. Part of the model library
// (docs/Architecture.md): no LLVM or MLIR header may be included here.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_MODEL_BINDER_H
#define KJIT_MODEL_BINDER_H

#include "kjit/Model/Argument.h"
#include "kjit/Model/KernelManifest.h"
#include "kjit/Model/LaunchOptions.h"
#include "kjit/Model/Specialization.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kjit::rt {

/// A key as the binder produces it: a 64-bit hash plus the words it was
/// computed from (compared on lookup, so a hash collision is never a wrong
/// kernel). Borrowed from a Binding; valid until its next bind.
struct KeyView {
  uint64_t hash = 0;
  absl::Span<const uint64_t> words;

  friend bool operator==(const KeyView &a, const KeyView &b) {
    return a.hash == b.hash && a.words == b.words;
  }
  friend bool operator!=(const KeyView &a, const KeyView &b) {
    return !(a == b);
  }
};

/// An owned key, for storing in a cache.
class SpecializationKey {
public:
  SpecializationKey() = default;
  explicit SpecializationKey(KeyView view)
      : hash_(view.hash), words_(view.words.begin(), view.words.end()) {}

  uint64_t hash() const { return hash_; }
  KeyView view() const { return {hash_, words_}; }

  friend bool operator==(const SpecializationKey &a,
                         const SpecializationKey &b) {
    return a.view() == b.view();
  }
  friend bool operator!=(const SpecializationKey &a,
                         const SpecializationKey &b) {
    return !(a == b);
  }

private:
  uint64_t hash_ = 0;
  std::vector<uint64_t> words_;
};

/// Hash functor for a cache keyed by SpecializationKey that is looked up
/// with a KeyView without allocating (absl/std heterogeneous lookup).
struct KeyHash {
  using is_transparent = void;
  size_t operator()(const KeyView &key) const { return key.hash; }
  size_t operator()(const SpecializationKey &key) const { return key.hash(); }
};

/// Equality functor matching KeyHash.
struct KeyEq {
  using is_transparent = void;
  static KeyView view(const KeyView &key) { return key; }
  static KeyView view(const SpecializationKey &key) { return key.view(); }
  template <typename A, typename B>
  bool operator()(const A &a, const B &b) const {
    return view(a) == view(b);
  }
};

/// A backend's own specialization attributes (plugin ABI 1.3, describe's
/// spec_attributes and the specialize entry), as the binder asks them: the
/// runtime implements it over the launch's backend and device. The bits
/// that hold for a value join its parameter's key word beside the spec key.
class BackendAttributes {
public:
  virtual ~BackendAttributes() = default;
  /// The attribute names, in bit order (at most 8).
  virtual const std::vector<std::string> &names() const = 0;
  /// Whether a parameter bound as `type` is asked at all.
  virtual bool asks(SigType type) const = 0;
  /// The bits that hold for `value`, bound to parameter `param` as `type`;
  /// an error (the backend's, or bits beyond names()) fails the bind.
  virtual absl::StatusOr<uint32_t> of(size_t param, SigType type,
                                      const Argument &value) const = 0;
};

/// The output of one bind: bound arguments in parameter order (defaults
/// applied, values converted to the declared type: an int for a float
/// parameter becomes a float), per-parameter type and spec key, the options
/// and the key. Make one with BindPlan::makeBinding and reuse it. A Binding
/// is used by one thread at a time (even key(), which computes and keeps
/// the hash); the runtime keeps one per thread and kernel.
class Binding {
public:
  Binding() = default;

  /// Every parameter's value, in declaration order.
  absl::Span<const Argument> arguments() const { return args_; }
  /// The signature type of non-constexpr parameter `index`.
  SigType type(size_t index) const {
    uint64_t word = keyWord(index);
    return {static_cast<SigType::Kind>(word & 0xff),
            static_cast<DType>((word >> 8) & 0xff)};
  }
  /// The spec key of parameter `index` (None for constexprs).
  SpecKey specKey(size_t index) const {
    return static_cast<SpecKey>((keyWord(index) >> 16) & 0xff);
  }
  /// The backend attribute bits of parameter `index` (0 without any).
  uint32_t backendAttributes(size_t index) const {
    return static_cast<uint32_t>(keyWord(index) >> 24);
  }
  /// The launch options, defaults included.
  const LaunchOptions &options() const { return options_; }
  /// The key of the last successful bind. Its hash is computed on the first
  /// call after a bind: a launch that finds its entry without a lookup
  /// (keyUnchanged) never pays for it.
  KeyView key() const {
    if (!hashed_) {
      hash_ = hashWords(words_);
      hashed_ = true;
    }
    return {hash_, words_};
  }
  /// Whether the last bind succeeded with the same key as the successful
  /// bind before it into this Binding (false after a failed bind, and for
  /// the first). The binder compares each key word as it writes it, so a
  /// caller that remembers what the previous key found can skip the cache
  /// lookup without comparing keys itself.
  bool keyUnchanged() const { return keyUnchanged_; }
  /// Changes with every bind that writes the arguments (not with one that
  /// finds the last one's inputs again): what the caller derived from
  /// arguments() at one generation holds while it is unchanged.
  uint64_t generation() const { return generation_; }

private:
  friend class BindPlan;

  struct ParamState {
    /// Where the parameter's first key word is in words_. A
    /// non-constexpr parameter's one word holds a byte each of type kind,
    /// dtype, spec key and backend attribute bits; a constexpr's first word
    /// is its tag, whose spec key and attribute bytes are 0.
    uint32_t word = 0;
    bool given = false;
  };
  /// The first key word of parameter `index`: what type(), specKey() and
  /// backendAttributes() read, so that a bind writes each word once.
  uint64_t keyWord(size_t index) const { return words_[states_[index].word]; }

  /// The hash of a key's words (mixed per position and summed, so that
  /// equal words give equal hashes whatever path produced them).
  static uint64_t hashWords(absl::Span<const uint64_t> words);

  /// The keyword table codes of the first keywords of the last bind, by
  /// position (-1: none), tried before the table (a launch names a few
  /// parameters and options; a lookup in the table costs about 100
  /// instructions more).
  static constexpr size_t kRememberedKeywords = 8;

  /// Whether `positional` and `keywords` are, field for field, what the
  /// last successful bind into this binding was given (inputs_ below).
  bool sameInputs(absl::Span<const Argument> positional,
                  absl::Span<const KeywordArgument> keywords) const;
  /// Remembers a successful bind's inputs for sameInputs;
  /// `positionalAsGiven`: args_ begins with the positional values as given.
  void rememberInputs(absl::Span<const Argument> positional,
                      absl::Span<const KeywordArgument> keywords,
                      bool positionalAsGiven);

  // What every bind reads and writes comes first, in 63 bytes.
  /// The plan of the last bind (BindPlan's unique id; 0: none yet). Another
  /// plan's defaults and keyword codes do not hold here.
  uint64_t planId_ = 0;
  std::vector<Argument> args_;
  std::vector<uint64_t> words_;
  /// The launch options whose value (in options_ and their key words) may
  /// differ from the plan's defaults: those the last bind set by keyword.
  /// Every other option holds its default, so a bind resets and compares
  /// only these.
  uint32_t optionsSet_ = (1u << kNumLaunchOptions) - 1;
  mutable bool hashed_ = false;
  /// Whether words_ hold the key of a successful bind.
  bool wordsValid_ = false;
  bool keyUnchanged_ = false;
  mutable uint64_t hash_ = 0;
  int32_t keywordCodes_[kRememberedKeywords] = {-1, -1, -1, -1, -1, -1, -1, -1};
  std::vector<ParamState> states_;
  LaunchOptions options_;
  /// The inputs of the last successful bind: the positional values (unless
  /// args_ begins with them: positionalAsGiven_), then the keywords'
  /// values, whose names are in inputNames_. A bind given the same inputs
  /// again (a launch loop's) has the same result, so it only marks the key
  /// unchanged (BindPlan::bind). Valid while wordsValid_.
  std::vector<Argument> inputs_;
  std::vector<std::string> inputNames_;
  /// kNoInputs: nothing remembered (a new plan, a failed bind).
  size_t numPositionalInputs_ = kNoInputs;
  /// Whether args_ begins with the positional inputs, field for field.
  bool positionalAsGiven_ = false;
  uint64_t generation_ = 0;
  static constexpr size_t kNoInputs = ~size_t(0);
};

/// A kernel's binding plan: everything about binding that depends only on
/// the manifest, computed once. Copies share the plan; it is immutable and
/// safe to use from several threads (each with its own Binding).
class BindPlan {
public:
  /// Verifies `manifest` (verifyManifest) and precomputes the plan.
  /// `defaults` are the option values a launch that names no option gets;
  /// the runtime passes its defaults (Runtime::defaultLaunchOptions()).
  static absl::StatusOr<BindPlan> create(KernelManifest manifest,
                                         LaunchOptions defaults = {});

  const KernelManifest &manifest() const;
  const LaunchOptions &defaultOptions() const;

  /// A Binding with storage for this kernel, so that bind never allocates.
  Binding makeBinding() const;

  /// Binds one launch's arguments. Keywords name parameters or launch
  /// options. On error `binding` is unspecified and the status names the
  /// parameter or option: missing argument, too many, unknown keyword, the
  /// deprecated device/device_type/stream keywords, a callable constexpr, an
  /// int that does not fit, a tensor of the wrong dtype, an integer beyond
  /// 64 bits, a bad option value.
  /// With `attributes`, the backend's own attributes of each value it asks
  /// for join the key (and an error from it fails the bind, naming the
  /// parameter).
  absl::Status bind(absl::Span<const Argument> positional,
                    absl::Span<const KeywordArgument> keywords,
                    Binding &binding,
                    const BackendAttributes *attributes = nullptr) const;
  /// Binds positional arguments only.
  absl::Status bind(absl::Span<const Argument> positional,
                    Binding &binding) const {
    return bind(positional, {}, binding);
  }

  /// The specialization record of a successful bind (the cache-miss path);
  /// `attributes` as given to that bind.
  SpecializationRecord
  makeRecord(const Binding &binding,
             const BackendAttributes *attributes = nullptr) const;

  /// The key a bind producing `record` would have had: preload rebuilds a
  /// cache entry from a serialized record with it. Fails, naming the
  /// difference, when the record does not fit this kernel, or names
  /// backend attributes other than `attributes` describes.
  absl::StatusOr<SpecializationKey>
  keyForRecord(const SpecializationRecord &record,
               const BackendAttributes *attributes = nullptr) const;

  struct Impl;

private:
  explicit BindPlan(std::shared_ptr<const Impl> impl)
      : impl_(std::move(impl)) {}

  std::shared_ptr<const Impl> impl_;
};

} // namespace kjit::rt

#endif // KJIT_MODEL_BINDER_H
