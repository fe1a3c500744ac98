//===- TuningFuzzer.cpp - libFuzzer on the autotuner's record readers -----===//
//
// Feeds arbitrary text to timingRecordFromJson and choiceRecordFromJson
// (TuningRecord.h: what a tuning or choice entry of the disk cache, or a
// value of the fleet's store, holds). Beyond memory errors (ASan, UBSan) it
// checks that what a reader accepts survives a round trip: written again
// and read back, it is accepted and written identically, so a writer never
// produces what its reader refuses (docs/DiskCache.md "Fuzzing";
// run-fuzzers.sh runs it).
//
//===----------------------------------------------------------------------===//

#include "kjit/Cache/TuningRecord.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

using namespace kjit::cache;

namespace {

[[noreturn]] void fail(const char *what, const std::string &json) {
  std::fprintf(stderr, "tuning fuzzer: %s\n%s\n", what, json.c_str());
  std::abort();
}

template <typename Read>
void roundTrip(std::string_view text, Read read, const char *what) {
  auto record = read(text);
  if (!record.ok())
    return;
  std::string json = toJson(*record);
  auto again = read(json);
  if (!again.ok())
    fail(what, json + "\n" + std::string(again.status().message()));
  if (toJson(*again) != json)
    fail("a record reads back differently", json);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  roundTrip(text, timingRecordFromJson,
            "a timing record the reader accepted is refused once written");
  roundTrip(text, choiceRecordFromJson,
            "a choice record the reader accepted is refused once written");
  return 0;
}
