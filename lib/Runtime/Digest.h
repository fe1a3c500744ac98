//===- Digest.h - SHA-256 of cache keys -------------------------*- C++ -*-===//
//
// The one digest of the runtime: SHA-256 through OpenSSL's libcrypto (the
// disk cache and the fleet cache key their entries by it; a hand-written
// SHA-256 would be one more thing to get wrong).
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_LIB_RUNTIME_DIGEST_H
#define KJIT_LIB_RUNTIME_DIGEST_H

#include <memory>
#include <string>
#include <string_view>

namespace kjit::rt {

/// An incremental SHA-256. Each field is framed with its length, so that
/// ("ab", "c") and ("a", "bc") never digest alike.
class KeyDigest {
public:
  KeyDigest();
  ~KeyDigest();
  KeyDigest(const KeyDigest &) = delete;
  KeyDigest &operator=(const KeyDigest &) = delete;

  /// Adds a named field.
  void add(std::string_view name, std::string_view value);
  /// The digest as 64 lowercase hex digits; the digest is then spent.
  std::string finishHex();

private:
  void update(std::string_view bytes);
  struct State;
  std::unique_ptr<State> state_;
};

} // namespace kjit::rt

#endif // KJIT_LIB_RUNTIME_DIGEST_H
