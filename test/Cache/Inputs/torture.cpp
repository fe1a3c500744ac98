//===- torture.cpp - corruption and crash harnesses of the disk cache -----===//
//
//   kjit-cache-torture corrupt DIR KEY [FLIPS]
//       Takes the real entry KEY of the cache DIR and stores, in its place,
//       every truncation of it (lengths 0 to n-1), FLIPS copies with random
//       bit flips (1 to 16 bits; default 10000), zero-length and garbage
//       files, the entry extended by a byte, and copies whose header fields
//       hold extreme values under a recomputed checksum (so that the checks
//       behind the checksum are reached). Each is decoded in memory and
//       must be rejected; every case but the flips, and one flip in ten, is
//       also stored in the entry's place and read through DiskCache::get,
//       which must find it invalid, count it and remove it. Then the
//       original is put back and must read as a hit with its exact bytes.
//   kjit-cache-torture crash DIR KEY [ITERATIONS]
//       ITERATIONS times (default 1000): a child process puts entries made
//       from KEY's (8 keys; payloads of 8 to 256 KiB, under a 256 KiB cap
//       that makes it evict too) in a loop, and is killed with SIGKILL after
//       a random 0-5 ms, or up to what a writer takes to start and finish
//       two puts where that is longer (a sanitizer build, a loaded
//       machine: the kills must land inside puts and evictions, not only in
//       the writer's start). After each kill the parent reads every key:
//       each must be absent or a hit with exactly the bytes put under it,
//       never invalid. "evictions by the killed writers: some" shows that
//       kills landed in evictions: the shared stats counted one (a writer
//       that lived to flush them), or a key read absent after a kill (an
//       eviction unlinked it; nothing else removes an entry here, and the
//       stats flush comes after the unlinks, so a kill can take it). At the
//       end, temporary files the kills left are counted and removed by
//       prune(stale age 0).
//
// Prints what it did; exits 1 on the first broken promise.
//
//===----------------------------------------------------------------------===//

#include "kjit/Cache/DiskCache.h"
#include "kjit/Cache/EntryFormat.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace kjit::cache;

namespace {

[[noreturn]] void fail(const std::string &message) {
  std::fprintf(stderr, "FAIL: %s\n", message.c_str());
  std::exit(1);
}

std::string readFile(const std::string &path) {
  FILE *in = std::fopen(path.c_str(), "rb");
  if (!in)
    fail("cannot read " + path);
  std::string bytes;
  char buffer[65536];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, in)) > 0)
    bytes.append(buffer, n);
  std::fclose(in);
  return bytes;
}

void writeFile(const std::string &path, const std::string &bytes) {
  // Replaced, not rewritten: the cache's reader may still hold the old one.
  std::string temp = path + ".torture";
  FILE *out = std::fopen(temp.c_str(), "wb");
  if (!out || std::fwrite(bytes.data(), 1, bytes.size(), out) != bytes.size() ||
      std::fclose(out) != 0 || std::rename(temp.c_str(), path.c_str()) != 0)
    fail("cannot write " + path);
}

std::unique_ptr<DiskCache> openCache(const std::string &dir, uint64_t cap) {
  DiskCacheOptions options;
  options.directory = dir;
  options.maxSize = cap;
  options.warn = [](std::string_view) {}; // counted instead
  auto cache = DiskCache::open(options);
  if (!cache.ok())
    fail(std::string(cache.status().message()));
  return std::move(*cache);
}

void put32(std::string &bytes, size_t at, uint32_t value) {
  for (int i = 0; i < 4; ++i)
    bytes[at + i] = char(value >> (8 * i));
}
void put64(std::string &bytes, size_t at, uint64_t value) {
  for (int i = 0; i < 8; ++i)
    bytes[at + i] = char(value >> (8 * i));
}

int corrupt(const std::string &dir, const std::string &key, long flips) {
  std::unique_ptr<DiskCache> cache = openCache(dir, kDefaultMaxSize);
  const std::string path = cache->entryPath(key);
  const std::string original = readFile(path);
  absl::StatusOr<EntryData> good = decodeEntry(original, key);
  if (!good.ok())
    fail("the original entry is invalid: " +
         std::string(good.status().message()));
  uint64_t corruptBefore = cache->stats()[Counter::Corrupt];
  uint64_t cases = 0, onDisk = 0;
  // One corrupt file: invalid in memory (the reader's own check), and, for
  // `disk` cases, invalid, counted and removed through the cache as well.
  auto expectInvalid = [&](const std::string &bytes, const std::string &what,
                           bool disk = true) {
    ++cases;
    absl::StatusOr<EntryData> decoded = decodeEntry(bytes, key);
    // Only another kind may decode (get refuses it for this kind).
    if (decoded.ok() &&
        (decoded->kind == good->kind || decoded->metadata != good->metadata ||
         decoded->payload != good->payload))
      fail(what + ": accepted");
    if (!disk)
      return;
    ++onDisk;
    writeFile(path, bytes);
    DiskCache::Lookup lookup = cache->get(good->kind, key);
    if (lookup.result != DiskCache::Lookup::Result::Invalid)
      fail(what + ": not found invalid by get");
    struct stat st;
    if (::lstat(path.c_str(), &st) == 0)
      fail(what + ": the invalid file was not removed");
  };

  size_t n = original.size();
  for (size_t length = 0; length < n; ++length)
    expectInvalid(original.substr(0, length),
                  "truncation to " + std::to_string(length));
  std::printf("truncations: %zu of %zu lengths rejected\n", n, n);

  std::mt19937_64 random(12345);
  for (long i = 0; i < flips; ++i) {
    std::string bytes = original;
    int bits = 1 + int(random() % 16);
    std::vector<size_t> flipped;
    for (int b = 0; b < bits; ++b) {
      size_t bit = random() % (n * 8);
      bytes[bit / 8] ^= char(1 << (bit % 8));
    }
    if (bytes == original) // flips that cancelled out
      bytes[random() % n] ^= 1;
    // Every tenth through the disk: the check is the same, the file
    // system's metadata work is not free.
    expectInvalid(bytes, "bit flips #" + std::to_string(i), i % 10 == 0);
  }
  std::printf("bit flips: %ld of %ld rejected\n", flips, flips);

  expectInvalid(std::string(), "an empty file");
  for (size_t size : {size_t(1), size_t(95), size_t(112), size_t(4096), n})
    for (int round = 0; round < 4; ++round) {
      std::string garbage(size, '\0');
      for (char &c : garbage)
        c = char(random());
      expectInvalid(garbage, "garbage of " + std::to_string(size) + " bytes");
    }
  expectInvalid(original + '\0', "the entry and one more byte");
  expectInvalid(original + original, "the entry twice");
  std::printf("empty, garbage and extended files: rejected\n");
  std::fflush(stdout);

  // Header fields at extreme values, with a valid checksum over them.
  struct Field {
    const char *name;
    size_t offset, width;
  };
  const Field fields[] = {{"version", 8, 4},        {"kind", 12, 4},
                          {"flags", 56, 4},         {"reserved", 60, 4},
                          {"metadata size", 64, 8}, {"payload size", 72, 8},
                          {"stored size", 80, 8},   {"reserved2", 88, 8}};
  const uint64_t values[] = {0,
                             1,
                             2,
                             3,
                             0x7f,
                             0xff,
                             0xffff,
                             0x7fffffff,
                             0xffffffff,
                             0x100000000ull,
                             kMaxMetadataSize,
                             kMaxMetadataSize + 1,
                             kMaxPayloadSize,
                             kMaxPayloadSize + 1,
                             0x7fffffffffffffffull,
                             0xffffffffffffffffull};
  uint64_t extremes = 0;
  for (const Field &field : fields)
    for (uint64_t value : values) {
      if (field.width == 4 && value > 0xffffffffull)
        continue;
      std::string bytes = original;
      if (field.width == 4)
        put32(bytes, field.offset, uint32_t(value));
      else
        put64(bytes, field.offset, value);
      fixChecksum(bytes);
      if (bytes == original)
        continue; // the field's own value
      ++extremes;
      expectInvalid(bytes,
                    std::string(field.name) + " = " + std::to_string(value));
    }
  // The key echo: another key in the header, checksum fixed.
  {
    std::string bytes = original;
    bytes[16] ^= 0x55;
    fixChecksum(bytes);
    expectInvalid(bytes, "another key in the header");
    ++extremes;
  }
  std::printf("extreme header fields (checksum fixed): %llu rejected\n",
              (unsigned long long)extremes);

  uint64_t counted = cache->stats()[Counter::Corrupt] - corruptBefore;
  std::printf("cases: %llu, through the cache: %llu, counted corrupt: %llu\n",
              (unsigned long long)cases, (unsigned long long)onDisk,
              (unsigned long long)counted);
  if (counted != onDisk)
    fail("every invalid entry must be counted");
  // The original, put back, reads as it was.
  writeFile(path, original);
  DiskCache::Lookup lookup = cache->get(good->kind, key);
  if (lookup.result != DiskCache::Lookup::Result::Hit ||
      lookup.entry.payload != good->payload ||
      lookup.entry.metadata != good->metadata)
    fail("the original entry no longer reads back");
  std::printf("the original entry reads back\n");
  return 0;
}

std::string keyOf(int i) {
  std::string key(64, '0');
  static const char hex[] = "0123456789abcdef";
  for (int d = 0; d < 64; ++d)
    key[d] = hex[(i * 7 + d * 13 + (i + 1) * d * d) % 16];
  return key;
}

/// What the writer puts under key `i` (version `v`): the real payload,
/// padded with bytes zstd cannot shrink, so that writes take long enough to
/// be killed in the middle.
EntryData makeEntry(const EntryData &base, int i, uint32_t v) {
  EntryData entry = base;
  entry.key = keyOf(i);
  size_t pad = (size_t(8) << 10) << (i % 6); // 8 KiB .. 256 KiB
  std::mt19937_64 bytes(uint64_t(i) * 1000 + v);
  entry.payload.reserve(base.payload.size() + pad);
  for (size_t k = 0; k < pad; k += 8) {
    uint64_t word = bytes();
    entry.payload.append(reinterpret_cast<const char *>(&word), 8);
  }
  return entry;
}

int crash(const std::string &dir, const std::string &key, long iterations) {
  std::unique_ptr<DiskCache> reader = openCache(dir, kDefaultMaxSize);
  absl::StatusOr<EntryData> base = reader->read(key);
  if (!base.ok())
    fail("no valid entry " + key);
  constexpr int kKeys = 8;
  constexpr uint32_t kVersions = 4;
  // Which bytes a key may hold: any version the writer may have put.
  std::vector<std::vector<std::string>> allowed(kKeys);
  for (int i = 0; i < kKeys; ++i)
    for (uint32_t v = 0; v < kVersions; ++v)
      allowed[i].push_back(makeEntry(*base, i, v).payload);
  // A fresh start, filled past the writers' cap, so that their puts evict
  // from the first one on.
  for (int i = 0; i < kKeys; ++i)
    std::remove(reader->entryPath(keyOf(i)).c_str());
  for (int i = 0; i < kKeys; ++i)
    reader->put(makeEntry(*base, i, 0));
  // How long a writer takes from fork to two finished puts (each evicts:
  // the cache is past its cap), the slowest of three.
  auto writerPuts = [&](uint64_t seed, int puts) {
    std::unique_ptr<DiskCache> writer = openCache(dir, uint64_t(256) << 10);
    std::mt19937_64 mine(seed);
    for (int n = 0; puts == 0 || n < puts; ++n) {
      int i = int(mine() % kKeys);
      writer->put(makeEntry(*base, i, uint32_t(mine() % kVersions)));
    }
  };
  long long twoPutsUs = 0;
  for (int trial = 0; trial < 3; ++trial) {
    auto start = std::chrono::steady_clock::now();
    pid_t child = fork();
    if (child < 0)
      fail("fork failed");
    if (child == 0) {
      writerPuts(uint64_t(trial), 2);
      _exit(0);
    }
    int status;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      fail("a writer of two puts failed");
    twoPutsUs = std::max<long long>(
        twoPutsUs, std::chrono::duration_cast<std::chrono::microseconds>(
                       std::chrono::steady_clock::now() - start)
                       .count());
  }
  const unsigned windowUs = unsigned(
      std::max<long long>(5000, std::min<long long>(twoPutsUs, 1000000)));
  std::fprintf(stderr, "kill window: 0-%u us (two puts: %lld us)\n", windowUs,
               twoPutsUs);
  // Only the killed writers' evictions count.
  const uint64_t evictionsBefore = reader->stats()[Counter::Evictions];
  std::mt19937_64 random(777);
  uint64_t hits = 0, absent = 0, temporariesSeen = 0;
  for (long round = 0; round < iterations; ++round) {
    unsigned delayUs = unsigned(random() % windowUs);
    uint64_t seed = random();
    pid_t child = fork();
    if (child < 0)
      fail("fork failed");
    if (child == 0) {
      // The writer: a cap of 256 KiB, so that its puts evict as well.
      writerPuts(seed, 0);
      _exit(0); // not reached
    }
    usleep(delayUs);
    kill(child, SIGKILL);
    int status;
    waitpid(child, &status, 0);
    for (int i = 0; i < kKeys; ++i) {
      DiskCache::Lookup lookup = reader->get(EntryKind::Artifact, keyOf(i));
      if (lookup.result == DiskCache::Lookup::Result::Invalid)
        fail("round " + std::to_string(round) + ": key " + keyOf(i) +
             " read invalid after a kill: " + lookup.problem);
      if (lookup.result == DiskCache::Lookup::Result::Absent) {
        ++absent;
        continue;
      }
      ++hits;
      bool known = false;
      for (const std::string &payload : allowed[i])
        known |= payload == lookup.entry.payload;
      if (!known || lookup.entry.metadata != base->metadata)
        fail("round " + std::to_string(round) + ": key " + keyOf(i) +
             " holds bytes nobody put");
    }
    // Temporaries of killed puts (left for the janitor).
    std::string entries = dir + "/entries";
    if (DIR *top = opendir(entries.c_str())) {
      while (struct dirent *shard = readdir(top)) {
        if (shard->d_name[0] == '.')
          continue;
        if (DIR *sub = opendir((entries + "/" + shard->d_name).c_str())) {
          while (struct dirent *file = readdir(sub))
            temporariesSeen += std::strncmp(file->d_name, ".tmp.", 5) == 0;
          closedir(sub);
        }
      }
      closedir(top);
    }
  }
  std::printf("kills: %ld; reads after them: %llu hits, %llu absent, 0 "
              "invalid\n",
              iterations, (unsigned long long)hits, (unsigned long long)absent);
  std::printf("evictions by the killed writers: %s\n",
              reader->stats()[Counter::Evictions] > evictionsBefore ||
                      absent > 0
                  ? "some"
                  : "none");
  std::printf("temporary files seen after kills: %s\n",
              temporariesSeen ? "some" : "none");
  DiskCache::PruneResult pruned =
      reader->prune(kDefaultMaxSize, /*staleSeconds=*/0, /*wait=*/true);
  std::printf("pruned stale temporaries: %s\n",
              pruned.staleTemporaries || !temporariesSeen ? "yes" : "NO");
  // None is left.
  uint64_t left = 0;
  std::string entries = dir + "/entries";
  if (DIR *top = opendir(entries.c_str())) {
    while (struct dirent *shard = readdir(top)) {
      if (shard->d_name[0] == '.')
        continue;
      if (DIR *sub = opendir((entries + "/" + shard->d_name).c_str())) {
        while (struct dirent *file = readdir(sub))
          left += std::strncmp(file->d_name, ".tmp.", 5) == 0;
        closedir(sub);
      }
    }
    closedir(top);
  }
  std::printf("temporary files left: %llu\n", (unsigned long long)left);
  return left ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: kjit-cache-torture corrupt|crash DIR KEY "
                         "[COUNT]\n");
    return 2;
  }
  std::string mode = argv[1];
  long count = argc > 4 ? std::atol(argv[4]) : -1;
  if (mode == "corrupt")
    return corrupt(argv[2], argv[3], count >= 0 ? count : 10000);
  if (mode == "crash")
    return crash(argv[2], argv[3], count >= 0 ? count : 1000);
  std::fprintf(stderr, "unknown mode '%s'\n", mode.c_str());
  return 2;
}
