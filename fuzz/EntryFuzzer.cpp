//===- EntryFuzzer.cpp - libFuzzer on the disk cache entry reader ---------===//
//
// Feeds arbitrary bytes to decodeEntry and checkEntryHeader, the code that
// reads every file under a cache directory (docs/DiskCache.md "Fuzzing";
// run-fuzzers.sh runs it). Each input is read twice: as it is, and behind a
// recomputed checksum. Almost no mutation keeps the XXH3 trailer valid, so
// without the second read the fuzzer would stop at "checksum mismatch" and
// never reach the body, the zstd frame or the sizes checked after it.
//
// Beyond memory errors (ASan, UBSan) it checks the reader's contract:
// every rejection is a DataLoss error; checkEntryHeader never rejects what
// decodeEntry accepts; a decoded entry matches its header's sizes, and
// encoding it again (compressed or not) decodes to the same entry.
//
//===----------------------------------------------------------------------===//

#include "kjit/Cache/EntryFormat.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

using namespace kjit::cache;

namespace {

[[noreturn]] void fail(const char *what) {
  std::fprintf(stderr, "entry fuzzer: %s\n", what);
  std::abort();
}

bool sameEntry(const EntryData &a, const EntryData &b) {
  return a.kind == b.kind && a.key == b.key &&
         a.createdNanos == b.createdNanos && a.metadata == b.metadata &&
         a.payload == b.payload;
}

void readEntry(std::string_view bytes) {
  EntryHeader header;
  absl::StatusOr<EntryData> entry = decodeEntry(bytes, {}, &header);
  absl::Status headerOnly =
      checkEntryHeader(bytes.substr(0, kHeaderSize), bytes.size());
  if (!entry.ok()) {
    if (entry.status().code() != absl::StatusCode::kDataLoss)
      fail("a rejection is not a DataLoss error");
    return;
  }
  if (!headerOnly.ok())
    fail("checkEntryHeader rejects an entry decodeEntry accepts");
  if (!isValidKey(entry->key))
    fail("a decoded key is not 64 hex digits");
  if (header.metadataSize != entry->metadata.size() ||
      header.payloadSize != entry->payload.size())
    fail("the decoded sizes differ from the header's");
  // The key echo: the entry's own key passes, another does not.
  if (!decodeEntry(bytes, entry->key).ok())
    fail("the entry's own key is refused");
  std::string other = entry->key;
  other[0] = other[0] == '0' ? '1' : '0';
  if (decodeEntry(bytes, other).ok())
    fail("another key is accepted");
  for (bool compress : {false, true}) {
    absl::StatusOr<EntryData> again =
        decodeEntry(encodeEntry(*entry, compress));
    if (!again.ok() || !sameEntry(*entry, *again))
      fail("encoding a decoded entry does not decode to it");
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char *>(data), size);
  readEntry(bytes);
  std::string fixed(bytes);
  fixChecksum(fixed);
  readEntry(fixed);
  return 0;
}
