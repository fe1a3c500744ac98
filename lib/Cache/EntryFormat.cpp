//===- EntryFormat.cpp - one disk cache entry, self-validating ------------===//

#include "kjit/Cache/EntryFormat.h"

#include "LittleEndian.h"
#include "kjit/Support/StrCat.h"

// Header-only xxHash: the runtime gains no shared-library dependency.
#define XXH_INLINE_ALL
#include <xxhash.h>
#include <zstd.h>

#include <cstring>

namespace kjit::cache {

namespace {

using namespace detail;

constexpr char kMagic[8] = {'\x89', 'K', 'J', 'C', '\r', '\n', '\x1a', '\n'};
// Offsets of the header fields (EntryFormat.h).
constexpr size_t kOffVersion = 8, kOffKind = 12, kOffKey = 16, kOffCreated = 48,
                 kOffFlags = 56, kOffReserved1 = 60, kOffMetadataSize = 64,
                 kOffPayloadSize = 72, kOffStoredSize = 80, kOffReserved2 = 88;
// Bodies between these sizes are compressed. Below, a zstd frame would not
// pay; above, decompressing on every hit costs more than reading the bytes
// (a 1 MiB body: 0.3 ms to read and check stored as it is, 1.5-2 ms to
// decompress; bench/disk-cache/DiskCacheBench.cpp), and a later launch's
// budget is half a millisecond.
constexpr size_t kMinCompressSize = 1024;
constexpr size_t kMaxCompressSize = 128 * 1024;

int hexDigit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  return -1;
}

void keyToRaw(std::string_view key, char raw[32]) {
  for (int i = 0; i < 32; ++i)
    raw[i] = char(hexDigit(key[2 * i]) << 4 | hexDigit(key[2 * i + 1]));
}

std::string rawToKey(std::string_view raw) {
  static const char hex[] = "0123456789abcdef";
  std::string key;
  for (char c : raw) {
    key += hex[uint8_t(c) >> 4];
    key += hex[uint8_t(c) & 15];
  }
  return key;
}

void checksum(std::string_view bytes, unsigned char out[16]) {
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical,
                           XXH3_128bits(bytes.data(), bytes.size()));
  std::memcpy(out, canonical.digest, 16);
}

absl::Status bad(const std::string &message) {
  return absl::DataLossError(message);
}

} // namespace

const char *kindName(EntryKind kind) {
  switch (kind) {
  case EntryKind::Artifact:
    return "artifact";
  case EntryKind::Manifest:
    return "manifest";
  case EntryKind::Tuning:
    return "tuning";
  case EntryKind::Choice:
    return "choice";
  }
  return "unknown";
}

bool isValidKey(std::string_view key) {
  if (key.size() != 64)
    return false;
  for (char c : key)
    if (hexDigit(c) < 0)
      return false;
  return true;
}

std::string encodeEntry(const EntryData &entry, bool compress) {
  std::string body = entry.metadata + entry.payload;
  uint32_t flags = 0;
  if (compress && body.size() >= kMinCompressSize &&
      body.size() <= kMaxCompressSize) {
    std::string frame(ZSTD_compressBound(body.size()), '\0');
    // Level 3 (zstd's default): a kernel object compresses in well under a
    // millisecond, once per compile; decompression speed hardly depends on
    // the level.
    size_t size =
        ZSTD_compress(frame.data(), frame.size(), body.data(), body.size(), 3);
    if (!ZSTD_isError(size) && size <= body.size() - body.size() / 10) {
      frame.resize(size);
      body = std::move(frame);
      flags |= kFlagZstd;
    }
  }
  std::string out(kHeaderSize, '\0');
  std::memcpy(out.data(), kMagic, 8);
  put32(out, kOffVersion, kFormatVersion);
  put32(out, kOffKind, uint32_t(entry.kind));
  if (isValidKey(entry.key))
    keyToRaw(entry.key, out.data() + kOffKey);
  put64(out, kOffCreated, entry.createdNanos);
  put32(out, kOffFlags, flags);
  put64(out, kOffMetadataSize, entry.metadata.size());
  put64(out, kOffPayloadSize, entry.payload.size());
  put64(out, kOffStoredSize, body.size());
  out += body;
  unsigned char sum[16];
  checksum(out, sum);
  out.append(reinterpret_cast<const char *>(sum), 16);
  return out;
}

void fixChecksum(std::string &bytes) {
  if (bytes.size() < kTrailerSize)
    return;
  unsigned char sum[16];
  checksum(std::string_view(bytes).substr(0, bytes.size() - kTrailerSize), sum);
  std::memcpy(bytes.data() + bytes.size() - kTrailerSize, sum, 16);
}

absl::Status checkEntryHeader(std::string_view bytes, uint64_t fileSize,
                              std::string_view expectedKey) {
  // Sizes and the fixed fields first: they bound everything after.
  if (fileSize < kHeaderSize + kTrailerSize)
    return bad(strCat("truncated: ", fileSize,
                      " bytes, an entry has at "
                      "least ",
                      kHeaderSize + kTrailerSize));
  if (fileSize > kMaxFileSize)
    return bad(strCat("too large: ", fileSize, " bytes"));
  if (bytes.size() < kHeaderSize)
    return bad(strCat("truncated: ", bytes.size(), " bytes of a ", kHeaderSize,
                      "-byte header"));
  if (std::memcmp(bytes.data(), kMagic, 8) != 0)
    return bad("not a kjit cache entry (bad magic)");
  uint32_t version = get32(bytes, kOffVersion);
  if (version != kFormatVersion)
    return bad(strCat("format version ", version, " (this kjit reads ",
                      kFormatVersion, ")"));
  uint32_t kind = get32(bytes, kOffKind);
  if (kind < uint32_t(EntryKind::Artifact) ||
      kind > uint32_t(EntryKind::Choice))
    return bad(strCat("unknown entry kind ", kind));
  uint32_t flags = get32(bytes, kOffFlags);
  if (flags & ~kFlagZstd)
    return bad(strCat("unknown flags 0x", absl::Hex(flags)));
  if (get32(bytes, kOffReserved1) != 0 || get64(bytes, kOffReserved2) != 0)
    return bad("reserved header fields are not zero");
  uint64_t metadataSize = get64(bytes, kOffMetadataSize);
  uint64_t payloadSize = get64(bytes, kOffPayloadSize);
  uint64_t storedSize = get64(bytes, kOffStoredSize);
  if (metadataSize > kMaxMetadataSize)
    return bad(strCat("metadata size ", metadataSize, " exceeds the limit ",
                      kMaxMetadataSize));
  if (payloadSize > kMaxPayloadSize)
    return bad(strCat("payload size ", payloadSize, " exceeds the limit ",
                      kMaxPayloadSize));
  if (storedSize != fileSize - kHeaderSize - kTrailerSize)
    return bad(strCat(
        "the header says ", storedSize, " body bytes, the file has ",
        fileSize - kHeaderSize - kTrailerSize, " (truncated or extended)"));
  uint64_t rawSize = metadataSize + payloadSize;
  if (!(flags & kFlagZstd) && storedSize != rawSize)
    return bad(strCat("the body is ", storedSize, " bytes, not ", rawSize,
                      " as its sizes say"));
  // The reader allocates the declared size before zstd looks at the frame,
  // so without this a file of a hundred bytes could claim a body of 1 GiB
  // and cost that much memory before it is refused. encodeEntry compresses
  // no larger body, so no entry it wrote is refused.
  if ((flags & kFlagZstd) && rawSize > kMaxCompressSize)
    return bad(strCat("a compressed body of ", rawSize,
                      " bytes exceeds the limit ", kMaxCompressSize));
  if (!expectedKey.empty()) {
    std::string key = rawToKey(bytes.substr(kOffKey, 32));
    if (key != expectedKey)
      return bad(strCat("its key is ", key, ", not ", expectedKey,
                        " as its name says"));
  }
  return absl::OkStatus();
}

absl::StatusOr<EntryData> decodeEntry(std::string_view bytes,
                                      std::string_view expectedKey,
                                      EntryHeader *header) {
  if (absl::Status valid = checkEntryHeader(bytes.substr(0, kHeaderSize),
                                            bytes.size(), expectedKey);
      !valid.ok())
    return valid;
  uint32_t version = get32(bytes, kOffVersion);
  uint32_t kind = get32(bytes, kOffKind);
  uint32_t flags = get32(bytes, kOffFlags);
  uint64_t metadataSize = get64(bytes, kOffMetadataSize);
  uint64_t payloadSize = get64(bytes, kOffPayloadSize);
  uint64_t storedSize = get64(bytes, kOffStoredSize);
  uint64_t rawSize = metadataSize + payloadSize;
  std::string key = rawToKey(bytes.substr(kOffKey, 32));
  // The checksum before anything reads the body.
  unsigned char sum[16];
  checksum(bytes.substr(0, bytes.size() - kTrailerSize), sum);
  if (std::memcmp(sum, bytes.data() + bytes.size() - kTrailerSize, 16) != 0)
    return bad("checksum mismatch");

  std::string_view stored = bytes.substr(kHeaderSize, storedSize);
  std::string body;
  if (flags & kFlagZstd) {
    unsigned long long content =
        ZSTD_getFrameContentSize(stored.data(), stored.size());
    if (content == ZSTD_CONTENTSIZE_ERROR ||
        content == ZSTD_CONTENTSIZE_UNKNOWN || content != rawSize)
      return bad("the compressed body does not declare the expected size");
    body.resize(rawSize);
    size_t size =
        ZSTD_decompress(body.data(), body.size(), stored.data(), stored.size());
    if (ZSTD_isError(size))
      return bad(
          strCat("the compressed body is invalid: ", ZSTD_getErrorName(size)));
    if (size != rawSize)
      return bad("the compressed body has the wrong size");
  } else {
    body = std::string(stored);
  }
  EntryData entry;
  entry.kind = EntryKind(kind);
  entry.key = std::move(key);
  entry.createdNanos = get64(bytes, kOffCreated);
  entry.metadata = body.substr(0, metadataSize);
  entry.payload = body.substr(metadataSize);
  if (header) {
    header->version = version;
    header->kind = entry.kind;
    header->createdNanos = entry.createdNanos;
    header->flags = flags;
    header->metadataSize = metadataSize;
    header->payloadSize = payloadSize;
    header->storedSize = storedSize;
  }
  return entry;
}

} // namespace kjit::cache
