//===- EntryFormat.h - one disk cache entry, self-validating ----*- C++ -*-===//
//
// One disk cache entry is one file (docs/DiskCache.md "The file format"):
//
//   offset size  field
//        0    8  magic "\x89KJC\r\n\x1a\n" (a text-mode copy or a truncated
//                ASCII transfer breaks it, as PNG's does)
//        8    4  format version (kFormatVersion)
//       12    4  kind (EntryKind)
//       16   32  the key, raw (the file name echoes it in hex)
//       48    8  created, Unix nanoseconds
//       56    4  flags (bit 0: the body is one zstd frame)
//       60    4  reserved, 0
//       64    8  metadata size (uncompressed)
//       72    8  payload size (uncompressed)
//       80    8  stored body size
//       88    8  reserved, 0
//       96    -  body: metadata (JSON) then payload, maybe compressed
//   96+body  16  XXH3-128 of every byte before it (canonical, big-endian)
//
// Integers are little-endian. Every length has an upper bound, the stored
// size must equal the file size exactly, and the checksum is verified before
// the body is decompressed or looked at: a reader never hands a byte of an
// invalid entry on. No LLVM, no process state: the runtime and kjit-cache
// both link it, and the tests drive it on bytes in memory.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_CACHE_ENTRYFORMAT_H
#define KJIT_CACHE_ENTRYFORMAT_H

#include "absl/status/statusor.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace kjit::cache {

/// Bumped whenever the layout changes; an entry of another version is a miss
/// (and is replaced), never misread.
inline constexpr uint32_t kFormatVersion = 1;
inline constexpr size_t kHeaderSize = 96;
inline constexpr size_t kTrailerSize = 16;
/// Bounds on what a header may claim (ccache's k_max_uncompressed_payload):
/// a corrupt length never turns into a huge allocation.
inline constexpr uint64_t kMaxMetadataSize = uint64_t(16) << 20;
inline constexpr uint64_t kMaxPayloadSize = uint64_t(1) << 30;
inline constexpr uint64_t kMaxFileSize =
    kHeaderSize + kMaxMetadataSize + kMaxPayloadSize + kTrailerSize + 65536;
/// Flag bit: the body is one zstd frame.
inline constexpr uint32_t kFlagZstd = 1;

enum class EntryKind : uint32_t {
  /// A loadable kernel (the host's shared object, a cubin) and its metadata.
  Artifact = 1,
  /// The analysis of a kernel IR file (manifests, keys, globals): what lets
  /// a warm process launch without the compiler.
  Manifest = 2,
  /// An autotuner's timing of one configuration (TuningRecord.h): JSON
  /// metadata, no payload.
  Tuning = 3,
  /// An autotuner's choice among a set of configurations (TuningRecord.h):
  /// JSON metadata, no payload.
  Choice = 4,
};

/// "artifact", "manifest", "tuning", "choice", "unknown".
const char *kindName(EntryKind kind);

/// What an entry holds.
struct EntryData {
  EntryKind kind = EntryKind::Artifact;
  /// 64 lowercase hex digits (a SHA-256).
  std::string key;
  uint64_t createdNanos = 0;
  /// A JSON object (the reader of each kind checks its fields).
  std::string metadata;
  /// The artifact's bytes; empty for the other kinds.
  std::string payload;
};

/// The header fields, for kjit-cache show.
struct EntryHeader {
  uint32_t version = 0;
  EntryKind kind = EntryKind::Artifact;
  uint64_t createdNanos = 0;
  uint32_t flags = 0;
  uint64_t metadataSize = 0, payloadSize = 0, storedSize = 0;
};

/// Whether `key` is 64 lowercase hex digits, the only names entries have.
bool isValidKey(std::string_view key);

/// The file's bytes. A body of 1 to 128 KiB is compressed with zstd when
/// that saves at least a tenth of it (a host kernel object shrinks to a
/// seventh); a larger one is stored as it is, which reads faster than it
/// would decompress.
std::string encodeEntry(const EntryData &entry, bool compress = true);

/// Checks what can be checked before the body is read: the file's size and
/// the fixed header (`header`: the first kHeaderSize bytes of a file of
/// `fileSize` bytes), so that a reader never reads a large file that is
/// not an entry, or whose header does not describe it. DataLoss errors,
/// the same as decodeEntry's.
absl::Status checkEntryHeader(std::string_view header, uint64_t fileSize,
                              std::string_view expectedKey = {});

/// Validates and decodes a file's bytes: sizes, magic, version, kind, key
/// echo (when `expectedKey` is not empty), reserved fields, bounds, the
/// checksum, then the decompressed size. Errors are DataLoss with what is
/// wrong ("checksum mismatch", "truncated: 40 bytes, a header is 96").
absl::StatusOr<EntryData> decodeEntry(std::string_view bytes,
                                      std::string_view expectedKey = {},
                                      EntryHeader *header = nullptr);

/// For the corruption tests: recomputes the trailer of `bytes` (an encoded
/// entry whose header a test changed), so that the checks behind the
/// checksum are reached.
void fixChecksum(std::string &bytes);

} // namespace kjit::cache

#endif // KJIT_CACHE_ENTRYFORMAT_H
