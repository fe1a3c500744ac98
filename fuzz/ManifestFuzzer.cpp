//===- ManifestFuzzer.cpp - libFuzzer on the manifest and record readers --===//
//
// Feeds arbitrary text to manifestFromJson (the kernel manifests a warm
// process reads from a manifest entry instead of parsing IR) and to
// specializationFromJson (the records Kernel::preload reads); both sit on
// the same JSON parser and field reader, so one input exercises both
// (docs/DiskCache.md "Fuzzing"; run-fuzzers.sh runs it).
//
// Beyond memory errors (ASan, UBSan) it checks that what a reader accepts
// survives a round trip: written again and read back, it is accepted and
// written identically, so a writer never produces what its reader refuses.
//
//===----------------------------------------------------------------------===//

#include "kjit/Model/KernelManifest.h"
#include "kjit/Model/Specialization.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

using namespace kjit::rt;

namespace {

[[noreturn]] void fail(const char *what) {
  std::fprintf(stderr, "manifest fuzzer: %s\n", what);
  std::abort();
}

void readManifest(std::string_view text) {
  absl::StatusOr<KernelManifest> manifest = manifestFromJson(text);
  if (!manifest.ok())
    return;
  std::string json = manifestToJson(*manifest);
  absl::StatusOr<KernelManifest> again = manifestFromJson(json);
  if (!again.ok()) {
    std::fprintf(stderr, "%s\n%s\n", json.c_str(),
                 std::string(again.status().message()).c_str());
    fail("a manifest the reader accepted is refused once written again");
  }
  if (manifestToJson(*again) != json)
    fail("a manifest reads back differently");
}

void readRecord(std::string_view text) {
  absl::StatusOr<SpecializationRecord> record = specializationFromJson(text);
  if (!record.ok())
    return;
  std::string json = toJson(*record);
  absl::StatusOr<SpecializationRecord> again = specializationFromJson(json);
  if (!again.ok()) {
    std::fprintf(stderr, "%s\n%s\n", json.c_str(),
                 std::string(again.status().message()).c_str());
    fail("a record the reader accepted is refused once written again");
  }
  if (toJson(*again) != json)
    fail("a record reads back differently");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  readManifest(text);
  readRecord(text);
  return 0;
}
