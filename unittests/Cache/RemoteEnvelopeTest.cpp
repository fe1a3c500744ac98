//===- RemoteEnvelopeTest.cpp - the fleet cache's signed values -----------===//
//
// Every way a value from a remote store can be wrong is rejected with a
// message naming the check: another secret, a replay under another key, an
// older version, bad lengths, a payload that does not match its digest,
// every truncation and every single-bit flip. And the key file's rules.
//
//===----------------------------------------------------------------------===//

#include "kjit/Cache/RemoteEnvelope.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace kjit::cache;

namespace {

const std::string kSecret = "0123456789abcdef0123456789abcdef";
const std::string kKey = "kjit-0.1/r1/abc";

std::string message(const absl::Status &status) {
  return std::string(status.message());
}

TEST(RemoteEnvelope, RoundTrips) {
  for (const std::string &payload :
       {std::string(), std::string("x"), std::string(100000, '\0')}) {
    std::string sealed = sealEnvelope(kSecret, kKey, "host:1", payload);
    absl::StatusOr<OpenedEnvelope> opened = openEnvelope(kSecret, kKey, sealed);
    ASSERT_TRUE(opened.ok()) << opened.status();
    EXPECT_EQ(opened->payload, payload);
    EXPECT_EQ(opened->writerId, "host:1");
  }
}

TEST(RemoteEnvelope, AnotherSecretIsRejected) {
  std::string sealed = sealEnvelope(kSecret, kKey, "w", "payload");
  absl::StatusOr<OpenedEnvelope> opened =
      openEnvelope("another secret of 32 bytes......", kKey, sealed);
  EXPECT_EQ(opened.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(message(opened.status()),
            "remote value rejected: the HMAC does not match (another "
            "secret, or tampered)");
}

TEST(RemoteEnvelope, AReplayUnderAnotherKeyIsRejected) {
  std::string sealed = sealEnvelope(kSecret, "kjit-0.1/r1/other", "w", "p");
  absl::StatusOr<OpenedEnvelope> opened = openEnvelope(kSecret, kKey, sealed);
  EXPECT_EQ(opened.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(message(opened.status()),
            "remote value rejected: it was stored under key "
            "'kjit-0.1/r1/other', not 'kjit-0.1/r1/abc' (a replay)");
}

TEST(RemoteEnvelope, AnotherVersionIsRejected) {
  std::string sealed = sealEnvelope(kSecret, kKey, "w", "p");
  sealed[8] = 0; // version 0: an older kjit
  EXPECT_EQ(message(openEnvelope(kSecret, kKey, sealed).status()),
            "remote value rejected: envelope version 0; this kjit reads 1");
}

TEST(RemoteEnvelope, APayloadThatDoesNotMatchItsDigestIsRejected) {
  // A writer that holds the secret but sends other bytes than it signed
  // (or a store that changes the payload, which the MAC does not cover).
  std::string sealed = sealEnvelope(kSecret, kKey, "w", "payload");
  sealed.back() ^= 1;
  EXPECT_EQ(message(openEnvelope(kSecret, kKey, sealed).status()),
            "remote value rejected: the payload's SHA-256 does not match "
            "its header");
}

TEST(RemoteEnvelope, LengthsAreChecked) {
  std::string sealed = sealEnvelope(kSecret, kKey, "w", "payload");
  EXPECT_EQ(message(openEnvelope(kSecret, kKey, sealed + "x").status()),
            "remote value rejected: " + std::to_string(sealed.size() + 1) +
                " bytes, but the header says " + std::to_string(sealed.size()));
  EXPECT_EQ(message(openEnvelope(kSecret, kKey, "short").status()),
            "remote value rejected: 5 bytes are shorter than a header (64)");
  EXPECT_EQ(message(openEnvelope(kSecret, kKey, std::string(64, 'g')).status()),
            "remote value rejected: it is not a kjit envelope (bad magic)");
  std::string huge = sealed;
  huge[12 + 3] = 0x7f; // a key size of about 2^31
  EXPECT_EQ(message(openEnvelope(kSecret, kKey, huge).status()),
            "remote value rejected: a header field is out of bounds");
}

TEST(RemoteEnvelope, EveryTruncationAndBitFlipIsRejected) {
  std::string sealed = sealEnvelope(kSecret, kKey, "writer", "some payload");
  for (size_t size = 0; size < sealed.size(); ++size)
    EXPECT_FALSE(openEnvelope(kSecret, kKey, sealed.substr(0, size)).ok())
        << size;
  for (size_t bit = 0; bit < sealed.size() * 8; ++bit) {
    std::string flipped = sealed;
    flipped[bit / 8] ^= char(1 << (bit % 8));
    EXPECT_FALSE(openEnvelope(kSecret, kKey, flipped).ok()) << bit;
  }
}

class SecretFile : public ::testing::Test {
protected:
  void SetUp() override {
    char dir[] = "/tmp/kjit-secret-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    directory = dir;
    path = directory + "/key";
  }
  void TearDown() override {
    std::remove(path.c_str());
    std::remove((directory + "/link").c_str());
    rmdir(directory.c_str());
  }
  void write(const std::string &bytes, mode_t mode) {
    std::remove(path.c_str());
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, mode);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, bytes.data(), bytes.size()), ssize_t(bytes.size()));
    close(fd);
    chmod(path.c_str(), mode);
  }
  std::string directory, path;
};

TEST_F(SecretFile, ReadsTheKeyWithoutItsNewline) {
  write(kSecret + "\n", 0600);
  absl::StatusOr<std::string> secret = readSecretFile(path);
  ASSERT_TRUE(secret.ok()) << secret.status();
  EXPECT_EQ(*secret, kSecret);
}

TEST_F(SecretFile, RefusesWhatOthersCanRead) {
  write(kSecret, 0644);
  EXPECT_EQ(message(readSecretFile(path).status()),
            "the remote cache key file '" + path +
                "' has mode 0644; it must not be readable by group or "
                "others (chmod 600)");
}

TEST_F(SecretFile, RefusesAShortKey) {
  write("short\n", 0600);
  EXPECT_EQ(message(readSecretFile(path).status()),
            "the remote cache key file '" + path +
                "' holds 5 bytes; a key needs at least 16 (e.g. openssl rand "
                "-hex 32)");
}

// The size limit leaves room for one trailing newline, and for nothing
// else: a longest key with its newline is read, one byte more is not.
TEST_F(SecretFile, RefusesAKeyOneByteTooLong) {
  write(std::string(kMaxSecretSize, 'k') + "\n", 0600);
  absl::StatusOr<std::string> longest = readSecretFile(path);
  ASSERT_TRUE(longest.ok()) << longest.status();
  EXPECT_EQ(longest->size(), kMaxSecretSize);
  write(std::string(kMaxSecretSize + 1, 'k'), 0600);
  EXPECT_EQ(message(readSecretFile(path).status()),
            "the remote cache key file '" + path +
                "' holds 4097 bytes; a key has at most 4096 (and one "
                "trailing newline)");
}

TEST_F(SecretFile, RefusesMissingFilesLinksAndDirectories) {
  EXPECT_EQ(message(readSecretFile(path).status()),
            "the remote cache key file '" + path +
                "' cannot be opened: No such file or directory");
  write(kSecret, 0600);
  std::string link = directory + "/link";
  ASSERT_EQ(symlink(path.c_str(), link.c_str()), 0);
  EXPECT_EQ(message(readSecretFile(link).status()),
            "the remote cache key file '" + link + "' is a symbolic link");
  EXPECT_EQ(message(readSecretFile(directory).status()),
            "the remote cache key file '" + directory +
                "' is not a regular file");
}

} // namespace
