//===- RemoteEnvelope.cpp - signed values of the fleet cache --------------===//

#include "kjit/Cache/RemoteEnvelope.h"

#include "LittleEndian.h"
#include "kjit/Cache/EntryFormat.h"
#include "kjit/Support/StrCat.h"

#include <openssl/crypto.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kjit::cache {

namespace {

using namespace detail;

constexpr char kMagic[8] = {'\x89', 'K', 'J', 'R', '\r', '\n', '\x1a', '\n'};
// Offsets of the header fields (RemoteEnvelope.h).
constexpr size_t kOffVersion = 8, kOffKeySize = 12, kOffPayloadSize = 16,
                 kOffDigest = 24, kOffWriterSize = 56, kOffReserved = 60;

void sha256(std::string_view bytes, unsigned char out[SHA256_DIGEST_LENGTH]) {
  SHA256(reinterpret_cast<const unsigned char *>(bytes.data()), bytes.size(),
         out);
}

void hmac(std::string_view secret, std::string_view bytes,
          unsigned char out[kEnvelopeMacSize]) {
  unsigned int size = 0;
  HMAC(EVP_sha256(), secret.data(), int(secret.size()),
       reinterpret_cast<const unsigned char *>(bytes.data()), bytes.size(), out,
       &size);
}

/// The key for messages: printable keys as they are, others in hex.
std::string printableKey(std::string_view key) {
  std::string out;
  for (char c : key.substr(0, 96)) {
    if (c >= 0x20 && c < 0x7f)
      out += c;
    else
      out += strCat("\\x", absl::Hex(uint8_t(c), absl::kZeroPad2));
  }
  if (key.size() > 96)
    out += "...";
  return out;
}

absl::Status invalid(std::string_view why) {
  return absl::DataLossError(strCat("remote value rejected: ", why));
}

} // namespace

std::string sealEnvelope(std::string_view secret, std::string_view key,
                         std::string_view writerId, std::string_view payload) {
  writerId = writerId.substr(0, kMaxWriterIdSize);
  std::string out(kEnvelopeHeaderSize, '\0');
  std::memcpy(out.data(), kMagic, sizeof(kMagic));
  put32(out, kOffVersion, kEnvelopeVersion);
  put32(out, kOffKeySize, uint32_t(key.size()));
  put64(out, kOffPayloadSize, payload.size());
  unsigned char digest[SHA256_DIGEST_LENGTH];
  sha256(payload, digest);
  std::memcpy(out.data() + kOffDigest, digest, sizeof(digest));
  put32(out, kOffWriterSize, uint32_t(writerId.size()));
  put32(out, kOffReserved, 0);
  out.append(key);
  out.append(writerId);
  unsigned char mac[kEnvelopeMacSize];
  hmac(secret, out, mac);
  out.append(reinterpret_cast<const char *>(mac), sizeof(mac));
  out.append(payload);
  return out;
}

absl::StatusOr<OpenedEnvelope> openEnvelope(std::string_view secret,
                                            std::string_view key,
                                            std::string_view bytes) {
  if (bytes.size() < kEnvelopeHeaderSize)
    return invalid(strCat(bytes.size(), " bytes are shorter than a header (",
                          kEnvelopeHeaderSize, ")"));
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    return invalid("it is not a kjit envelope (bad magic)");
  if (uint32_t version = get32(bytes, kOffVersion); version != kEnvelopeVersion)
    return invalid(strCat("envelope version ", version, "; this kjit reads ",
                          kEnvelopeVersion));
  uint64_t keySize = get32(bytes, kOffKeySize);
  uint64_t payloadSize = get64(bytes, kOffPayloadSize);
  uint64_t writerSize = get32(bytes, kOffWriterSize);
  if (keySize > kMaxRemoteKeySize || writerSize > kMaxWriterIdSize ||
      payloadSize > kMaxFileSize || get32(bytes, kOffReserved) != 0)
    return invalid("a header field is out of bounds");
  uint64_t macAt = kEnvelopeHeaderSize + keySize + writerSize;
  if (bytes.size() != macAt + kEnvelopeMacSize + payloadSize)
    return invalid(strCat(bytes.size(), " bytes, but the header says ",
                          macAt + kEnvelopeMacSize + payloadSize));
  // The MAC first: until it matches, nothing else in the value (the echo
  // included) is the writer's word.
  unsigned char mac[kEnvelopeMacSize];
  hmac(secret, bytes.substr(0, macAt), mac);
  if (CRYPTO_memcmp(mac, bytes.data() + macAt, sizeof(mac)) != 0)
    return absl::UnauthenticatedError(
        "remote value rejected: the HMAC does not match (another secret, or "
        "tampered)");
  std::string_view echo = bytes.substr(kEnvelopeHeaderSize, keySize);
  if (echo != key)
    return invalid(strCat("it was stored under key '", printableKey(echo),
                          "', not '", printableKey(key), "' (a replay)"));
  std::string_view payload = bytes.substr(macAt + kEnvelopeMacSize);
  unsigned char digest[SHA256_DIGEST_LENGTH];
  sha256(payload, digest);
  if (std::memcmp(digest, bytes.data() + kOffDigest, sizeof(digest)) != 0)
    return invalid("the payload's SHA-256 does not match its header");
  OpenedEnvelope opened;
  opened.payload = std::string(payload);
  opened.writerId =
      std::string(bytes.substr(kEnvelopeHeaderSize + keySize, writerSize));
  return opened;
}

absl::StatusOr<std::string> readSecretFile(const std::string &path) {
  auto refuse = [&](std::string_view why) {
    return absl::FailedPreconditionError(
        strCat("the remote cache key file '", path, "' ", why));
  };
  int fd = ::open(path.c_str(),
                  O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    return refuse(errno == ELOOP
                      ? std::string("is a symbolic link")
                      : strCat("cannot be opened: ", std::strerror(errno)));
  struct stat st;
  std::string secret;
  absl::Status problem;
  if (fstat(fd, &st) != 0)
    problem = refuse(strCat("cannot be read: ", std::strerror(errno)));
  else if (!S_ISREG(st.st_mode))
    problem = refuse("is not a regular file");
  else if (st.st_mode & 077) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", unsigned(st.st_mode & 07777));
    problem = refuse(strCat("has mode ", mode,
                            "; it must not be readable by group or others "
                            "(chmod 600)"));
  } else if (uint64_t(st.st_size) > kMaxSecretSize + 1)
    problem = refuse(strCat("holds ", st.st_size, " bytes; at most ",
                            kMaxSecretSize, " are read"));
  else {
    secret.resize(size_t(st.st_size));
    ssize_t got = ::read(fd, secret.data(), secret.size());
    if (got != ssize_t(secret.size()))
      problem = refuse("could not be read whole");
  }
  ::close(fd);
  if (!problem.ok())
    return problem;
  if (!secret.empty() && secret.back() == '\n')
    secret.pop_back();
  // The size check above allows one byte more than a key for its newline;
  // a file of that size whose last byte is something else holds a key one
  // byte too long.
  if (secret.size() > kMaxSecretSize)
    return refuse(strCat("holds ", secret.size(), " bytes; a key has at most ",
                         kMaxSecretSize, " (and one trailing newline)"));
  if (secret.size() < kMinSecretSize)
    return refuse(strCat("holds ", secret.size(),
                         " bytes; a key needs at "
                         "least ",
                         kMinSecretSize, " (e.g. openssl rand -hex 32)"));
  return secret;
}

} // namespace kjit::cache
