//===- Digest.cpp - SHA-256 of cache keys ---------------------------------===//

#include "Digest.h"

#include <openssl/evp.h>

#include <cstdint>
#include <new>

namespace kjit::rt {

struct KeyDigest::State {
  EVP_MD_CTX *context = nullptr;
};

KeyDigest::KeyDigest() : state_(std::make_unique<State>()) {
  state_->context = EVP_MD_CTX_new();
  // Only allocation can fail here: report it as every allocation does.
  if (!state_->context || !EVP_DigestInit_ex(state_->context, EVP_sha256(),
                                             /*engine=*/nullptr))
    throw std::bad_alloc();
}

KeyDigest::~KeyDigest() { EVP_MD_CTX_free(state_->context); }

void KeyDigest::update(std::string_view bytes) {
  EVP_DigestUpdate(state_->context, bytes.data(), bytes.size());
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
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_DigestFinal_ex(state_->context, digest, &size);
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
