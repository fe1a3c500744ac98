//===- EntryFormatTest.cpp - the entry file, sizes and durations ----------===//
//
// Round trips of the entry format (compressed or not, empty parts, the
// largest metadata allowed), and the parsers of sizes and durations. The
// exhaustive corruption cases are test/Cache/torture.test's.
//
//===----------------------------------------------------------------------===//

#include "kjit/Cache/EntryFormat.h"
#include "kjit/Cache/DiskCache.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

using namespace kjit::cache;

namespace {

const std::string kKey(64, 'a');

EntryData entry(std::string metadata, std::string payload) {
  EntryData data;
  data.kind = EntryKind::Artifact;
  data.key = kKey;
  data.createdNanos = 1234567890123456789ull;
  data.metadata = std::move(metadata);
  data.payload = std::move(payload);
  return data;
}

TEST(EntryFormat, RoundTrips) {
  std::mt19937 random(1);
  std::string noise(100000, '\0');
  for (char &c : noise)
    c = char(random());
  for (const EntryData &data :
       {entry("", ""), entry("{}", ""), entry("{\"kernel\":\"add\"}", "x"),
        entry("{}", std::string(100000, 'z')), entry("{}", noise)}) {
    for (bool compress : {false, true}) {
      std::string bytes = encodeEntry(data, compress);
      EntryHeader header;
      absl::StatusOr<EntryData> back = decodeEntry(bytes, kKey, &header);
      ASSERT_TRUE(back.ok()) << back.status();
      EXPECT_EQ(back->metadata, data.metadata);
      EXPECT_EQ(back->payload, data.payload);
      EXPECT_EQ(back->createdNanos, data.createdNanos);
      EXPECT_EQ(back->key, kKey);
      EXPECT_EQ(header.version, kFormatVersion);
      EXPECT_EQ(bytes.size(), kHeaderSize + header.storedSize + kTrailerSize);
    }
  }
}

TEST(EntryFormat, CompressesOnlyWhenItPays) {
  std::string repetitive = encodeEntry(entry("{}", std::string(100000, 'z')));
  EXPECT_LT(repetitive.size(), 1000u);
  // Large bodies read faster than they decompress: stored as they are.
  std::string large = encodeEntry(entry("{}", std::string(200000, 'z')));
  EXPECT_GT(large.size(), 200000u);
  std::mt19937 random(2);
  std::string noise(50000, '\0');
  for (char &c : noise)
    c = char(random());
  EntryHeader header;
  ASSERT_TRUE(decodeEntry(encodeEntry(entry("{}", noise)), kKey, &header).ok());
  EXPECT_EQ(header.flags & kFlagZstd, 0u) << "random bytes stay uncompressed";
}

// A compressed body larger than any encodeEntry compresses is refused by
// its header, before the reader allocates its declared size. Found while
// writing fuzz/EntryFuzzer.cpp: a 137-byte file claiming 1 GiB made
// decodeEntry allocate and zero 1 GiB before the frame was found invalid.
TEST(EntryFormat, ACompressedBodyIsBounded) {
  std::string bytes = encodeEntry(entry("{}", std::string(4096, 'z')));
  ASSERT_EQ(bytes[56] & kFlagZstd, kFlagZstd);
  // The payload size (offset 72) claims 1 GiB; the frame is left as it is.
  for (int i = 0; i < 8; ++i)
    bytes[72 + i] = char((uint64_t(1) << 30) >> (8 * i));
  fixChecksum(bytes);
  absl::Status header =
      checkEntryHeader(bytes.substr(0, kHeaderSize), bytes.size());
  EXPECT_EQ(header.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(header.message().find("compressed body"), absl::string_view::npos)
      << header;
  EXPECT_EQ(decodeEntry(bytes).status().code(), absl::StatusCode::kDataLoss);
  // The largest body encodeEntry compresses still reads back.
  std::string largest =
      encodeEntry(entry("{}", std::string(128 * 1024 - 2, 'z')));
  ASSERT_EQ(largest[56] & kFlagZstd, kFlagZstd);
  EXPECT_TRUE(decodeEntry(largest).ok());
}

TEST(EntryFormat, TheKeyIsEchoed) {
  std::string bytes = encodeEntry(entry("{}", "payload"));
  EXPECT_TRUE(decodeEntry(bytes).ok()) << "no key expected: any key";
  absl::StatusOr<EntryData> other = decodeEntry(bytes, std::string(64, 'b'));
  ASSERT_FALSE(other.ok());
  EXPECT_NE(std::string(other.status().message()).find("as its name says"),
            std::string::npos);
}

TEST(EntryFormat, KeysAre64LowercaseHexDigits) {
  EXPECT_TRUE(isValidKey(kKey));
  EXPECT_FALSE(isValidKey(std::string(63, 'a')));
  EXPECT_FALSE(isValidKey(std::string(64, 'A')));
  EXPECT_FALSE(isValidKey(".tmp." + std::string(59, 'a')));
}

TEST(DiskCacheSettings, Sizes) {
  EXPECT_EQ(parseSize("0"), 0u);
  EXPECT_EQ(parseSize("1073741824"), 1073741824u);
  EXPECT_EQ(parseSize("512K"), 512u << 10);
  EXPECT_EQ(parseSize("64M"), 64u << 20);
  EXPECT_EQ(parseSize("64mib"), 64u << 20);
  EXPECT_EQ(parseSize("2G"), uint64_t(2) << 30);
  EXPECT_EQ(parseSize("1.5GiB"), uint64_t(3) << 29);
  EXPECT_EQ(parseSize("1T"), uint64_t(1) << 40);
  for (const char *bad :
       {"", "G", "-1", "1.", "1X", "1 G", "99999999999999999999"})
    EXPECT_FALSE(parseSize(bad).has_value()) << bad;
  EXPECT_EQ(formatSize(900), "900 B");
  EXPECT_EQ(formatSize(1536), "1.5 KiB");
  EXPECT_EQ(formatSize(uint64_t(1) << 30), "1.0 GiB");
}

TEST(DiskCacheSettings, Durations) {
  EXPECT_EQ(parseDuration("500ms")->count(), 500);
  EXPECT_EQ(parseDuration("30s")->count(), 30000);
  EXPECT_EQ(parseDuration("30")->count(), 30000);
  EXPECT_EQ(parseDuration("2m")->count(), 120000);
  EXPECT_EQ(parseDuration("12h")->count(), 12 * 3600000);
  EXPECT_EQ(parseDuration("7d")->count(), 7 * 86400000);
  for (const char *bad : {"", "ms", "1w", "-5s", "1.5s"})
    EXPECT_FALSE(parseDuration(bad).has_value()) << bad;
}

} // namespace
