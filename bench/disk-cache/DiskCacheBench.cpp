//===- DiskCacheBench.cpp - what a disk hit and its validation cost -------===//
//
// Per entry of 16 KiB (a host kernel), 256 KiB and 1 MiB (a cubin) of
// payload, random (stored as it is) or compressible (zstd):
//   BM_Validate   decodeEntry on bytes in memory: the checks, XXH3-128 over
//                 the file, and decompression when the body is compressed
//   BM_DiskHit    DiskCache::get from the page cache: open, read, validate,
//                 touch the time of use, count
//   BM_Put        DiskCache::put: encode, write a temporary file, rename
// Bytes per second are of payload. docs/DiskCache.md has the figures.
//
//===----------------------------------------------------------------------===//

#include "kjit/Cache/DiskCache.h"
#include "kjit/Cache/EntryFormat.h"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <random>
#include <string>

using namespace kjit::cache;

namespace {

EntryData makeEntry(size_t size, bool compressible, int salt = 0) {
  EntryData entry;
  entry.kind = EntryKind::Artifact;
  entry.key = std::string(63, 'a') + char('0' + salt % 10);
  entry.metadata = R"({"kernel":"add","target":"host","arch":"x86_64"})";
  entry.payload.resize(size);
  std::mt19937_64 random(size);
  for (size_t i = 0; i < size; i += 8) {
    uint64_t word = random();
    if (compressible)
      word &= 0x0f0f000000000f0full; // an object file's mostly-zero bytes
    std::memcpy(entry.payload.data() + i, &word, std::min<size_t>(8, size - i));
  }
  return entry;
}

std::string cacheDirectory() {
  static std::string dir = [] {
    char pattern[] = "/tmp/kjit-bench-disk-XXXXXX";
    return std::string(mkdtemp(pattern)) + "/cache";
  }();
  return dir;
}

std::unique_ptr<DiskCache> openCache() {
  DiskCacheOptions options;
  options.directory = cacheDirectory();
  options.maxSize = 0; // no evictions in the way
  return std::move(*DiskCache::open(options));
}

void BM_Validate(benchmark::State &state) {
  EntryData entry = makeEntry(size_t(state.range(0)), state.range(1) != 0);
  std::string bytes = encodeEntry(entry);
  for (auto _ : state) {
    auto decoded = decodeEntry(bytes, entry.key);
    benchmark::DoNotOptimize(decoded);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * state.range(0));
  state.counters["stored_bytes"] = double(bytes.size());
}

void BM_DiskHit(benchmark::State &state) {
  std::unique_ptr<DiskCache> cache = openCache();
  EntryData entry = makeEntry(size_t(state.range(0)), state.range(1) != 0);
  cache->put(entry);
  for (auto _ : state) {
    DiskCache::Lookup lookup = cache->get(EntryKind::Artifact, entry.key);
    if (lookup.result != DiskCache::Lookup::Result::Hit)
      state.SkipWithError("not a hit");
    benchmark::DoNotOptimize(lookup);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * state.range(0));
}

void BM_Put(benchmark::State &state) {
  std::unique_ptr<DiskCache> cache = openCache();
  int salt = 0;
  for (auto _ : state) {
    state.PauseTiming();
    EntryData entry =
        makeEntry(size_t(state.range(0)), state.range(1) != 0, ++salt);
    state.ResumeTiming();
    cache->put(entry);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * state.range(0));
}

void sizes(benchmark::internal::Benchmark *b) {
  for (int64_t size : {16 << 10, 256 << 10, 1 << 20})
    for (int64_t compressible : {0, 1})
      b->Args({size, compressible});
  b->ArgNames({"bytes", "compressible"});
}

BENCHMARK(BM_Validate)->Apply(sizes);
BENCHMARK(BM_DiskHit)->Apply(sizes);
BENCHMARK(BM_Put)->Apply(sizes)->Iterations(200);

} // namespace

BENCHMARK_MAIN();
