//===- Digest.cpp - SHA-256 of cache keys ---------------------------------===//

#include "Digest.h"

// The low-level SHA-256 functions, not EVP: the first EVP digest of a
// process initializes OpenSSL 3's providers, every algorithm of them, which
// costs 1-4 ms, a third of a warm start's budget (docs/DiskCache.md). They
// are deprecated in OpenSSL 3 but kept, and compute the same digest.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

#include <cstdint>

namespace kjit::rt {

struct KeyDigest::State {
  SHA256_CTX context;
};

KeyDigest::KeyDigest() : state_(std::make_unique<State>()) {
  SHA256_Init(&state_->context);
}

KeyDigest::~KeyDigest() = default;

void KeyDigest::update(std::string_view bytes) {
  SHA256_Update(&state_->context, bytes.data(), bytes.size());
}

void KeyDigest::add(std::string_view name, std::string_view value) {
  auto frame = [&](std::string_view bytes) {
    uint64_t size = bytes.size();
    unsigned char length[8];
    for (int i = 0; i < 8; ++i)
      length[i] = static_cast<unsigned char>(size >> (8 * i));
    update(std::string_view(reinterpret_cast<const char *>(length), 8));
    update(bytes);
  };
  frame(name);
  frame(value);
}

std::string KeyDigest::finishHex() {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  const unsigned size = SHA256_DIGEST_LENGTH;
  SHA256_Final(digest, &state_->context);
  static const char hex[] = "0123456789abcdef";
  std::string text;
  text.reserve(2 * size);
  for (unsigned i = 0; i < size; ++i) {
    text.push_back(hex[digest[i] >> 4]);
    text.push_back(hex[digest[i] & 15]);
  }
  return text;
}

} // namespace kjit::rt
