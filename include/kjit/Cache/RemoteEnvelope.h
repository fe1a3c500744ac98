//===- RemoteEnvelope.h - signed values of the fleet cache ------*- C++ -*-===//
//
// A value in a remote (fleet) cache store is an envelope around one disk
// cache entry (EntryFormat.h), signed with HMAC-SHA256 under a secret that
// every machine of the fleet shares (docs/RemoteCache.md):
//
//   offset size  field
//        0    8  magic "\x89KJR\r\n\x1a\n"
//        8    4  envelope version (kEnvelopeVersion)
//       12    4  key size K (at most kMaxRemoteKeySize)
//       16    8  payload size P (at most kMaxFileSize)
//       24   32  SHA-256 of the payload
//       56    4  writer id size W (at most kMaxWriterIdSize)
//       60    4  reserved, 0
//       64    K  the key the value was stored under (its echo)
//     64+K    W  the writer: "host:pid", for the logs of whoever finds a
//                bad value
//   64+K+W   32  HMAC-SHA256(secret, every byte before it)
//  96+K+W    P  the payload: one encoded disk cache entry
//
// Integers are little-endian. The store is trusted with nothing: a reader
// checks every bound, the echo, the HMAC (in constant time) and the
// payload's digest before any byte of the payload is used, and the payload
// then passes the disk entry's own checks. No LLVM, no process state.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_CACHE_REMOTEENVELOPE_H
#define KJIT_CACHE_REMOTEENVELOPE_H

#include "absl/status/statusor.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace kjit::cache {

/// Bumped whenever the envelope changes; it is part of every remote key too,
/// so kjit builds of different versions never even read each other's values.
inline constexpr uint32_t kEnvelopeVersion = 1;
inline constexpr size_t kEnvelopeHeaderSize = 64;
inline constexpr size_t kEnvelopeMacSize = 32;
inline constexpr size_t kMaxRemoteKeySize = 512;
inline constexpr size_t kMaxWriterIdSize = 256;
/// Shorter secrets are refused: HMAC-SHA256 wants at least 128 bits.
inline constexpr size_t kMinSecretSize = 16;
inline constexpr size_t kMaxSecretSize = 4096;

/// Wraps `payload` for storage under `key`.
std::string sealEnvelope(std::string_view secret, std::string_view key,
                         std::string_view writerId, std::string_view payload);

/// An envelope that passed every check.
struct OpenedEnvelope {
  std::string payload;
  std::string writerId;
};

/// Checks `bytes`, read from under `key`, and returns its payload. A value
/// signed with another secret is Unauthenticated; every other failure is
/// DataLoss. Messages say which check failed ("the HMAC does not match",
/// "it was stored under key ..."); nothing of a value that fails is
/// returned.
absl::StatusOr<OpenedEnvelope> openEnvelope(std::string_view secret,
                                            std::string_view key,
                                            std::string_view bytes);

/// Reads the shared secret from `path`: a regular file (no symlink) that
/// neither group nor others may read, holding kMinSecretSize to
/// kMaxSecretSize bytes (one trailing newline is not part of it). Errors
/// say what is wrong and how to fix it.
absl::StatusOr<std::string> readSecretFile(const std::string &path);

} // namespace kjit::cache

#endif // KJIT_CACHE_REMOTEENVELOPE_H
