//===- TuningRecordTest.cpp - the autotuner's records and putIfAbsent -----===//
//
// The records' JSON: round trips, each field missing, of another type or
// out of bounds, unknown fields, every truncation; the entry kinds that
// carry them; and DiskCache::putIfAbsent, the first writer of a key
// winning through each of its three ways (renameat2, linkat, a look and a
// rename), also under threads (docs/Autotuning.md "The records").
//
//===----------------------------------------------------------------------===//

#include "kjit/Cache/TuningRecord.h"
#include "kjit/Cache/DiskCache.h"
#include "kjit/Cache/EntryFormat.h"
#include "kjit/Model/Json.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

using namespace kjit::cache;
using kjit::rt::JsonValue;
using kjit::rt::JsonWriter;

namespace {

const std::string kClass(64, 'c');

TimingRecord timing() {
  TimingRecord record;
  record.kernel = "softmax";
  record.source = "d41d8cd98f00b204e9800998ecf8427e";
  record.device = {"host", "x86_64", kClass};
  record.tuningKey = "n_cols=4096; in=fp32, out=fp32";
  record.config = "SLOTS=4, num_warps=4";
  record.protocol = "kjit-trials/host-rounds/1";
  record.clock = "host";
  record.medianNanos = 11812.5;
  record.rounds = 7;
  record.launchesPerRound = 100;
  record.measuredUnixNanos = 1780000000000000000;
  record.writer = "gpu3:4121";
  record.kjit = "0.1.0";
  return record;
}

ChoiceRecord choice() {
  ChoiceRecord record;
  record.kernel = "softmax";
  record.device = {"cuda", "sm_90", kClass};
  record.tuningKey = "n_cols=4096; in=fp32, out=fp32";
  record.timingKeys = {std::string(64, '1'), std::string(64, '2'),
                       std::string(64, '3')};
  record.winner = std::string(64, '2');
  record.winnerConfig = "SLOTS=4, num_warps=4";
  record.winnerMedianNanos = 11800;
  record.confirmed = false;
  record.chosenUnixNanos = 1780000000000000001;
  record.writer = "gpu3:4121";
  record.kjit = "0.1.0";
  return record;
}

/// `value` written back as JSON (numbers as their text).
void write(JsonWriter &json, const JsonValue &value) {
  switch (value.kind()) {
  case JsonValue::Kind::Null:
    json.null();
    break;
  case JsonValue::Kind::Bool:
    json.boolean(value.asBool());
    break;
  case JsonValue::Kind::Number:
    json.raw(value.text());
    break;
  case JsonValue::Kind::String:
    json.string(value.text());
    break;
  case JsonValue::Kind::Array:
    json.beginArray();
    for (const JsonValue &element : value.elements())
      write(json, element);
    json.endArray();
    break;
  case JsonValue::Kind::Object:
    json.beginObject();
    for (const kjit::rt::JsonMember &member : value.members()) {
      json.key(member.key);
      write(json, member.value);
    }
    json.endObject();
    break;
  }
}

/// `json` with its member `name` (top level, or "device.class") replaced by
/// the JSON `replacement`, or removed when `replacement` is empty.
std::string with(const std::string &json, const std::string &name,
                 const std::string &replacement) {
  absl::StatusOr<JsonValue> parsed = kjit::rt::parseJson(json);
  EXPECT_TRUE(parsed.ok());
  std::string inner, outer = name;
  if (size_t dot = name.find('.'); dot != std::string::npos) {
    outer = name.substr(0, dot);
    inner = name.substr(dot + 1);
  }
  std::string out;
  JsonWriter writer(out);
  writer.beginObject();
  for (const kjit::rt::JsonMember &member : parsed->members()) {
    if (member.key != outer) {
      writer.key(member.key);
      write(writer, member.value);
      continue;
    }
    if (!inner.empty()) {
      std::string nested;
      JsonWriter part(nested);
      write(part, member.value);
      writer.key(member.key).raw(with(nested, inner, replacement));
      continue;
    }
    if (!replacement.empty())
      writer.key(member.key).raw(replacement);
  }
  writer.endObject();
  return out;
}

std::string message(const absl::Status &status) {
  return std::string(status.message());
}

TEST(TuningRecord, TimingRoundTrips) {
  for (bool ran : {true, false}) {
    TimingRecord record = timing();
    if (!ran) {
      record.ran = false;
      record.reason = "kernel 'softmax': num_warps=64 means 2048 threads";
      record.medianNanos = 0;
      record.rounds = record.launchesPerRound = 0;
    }
    std::string json = toJson(record);
    absl::StatusOr<TimingRecord> back = timingRecordFromJson(json);
    ASSERT_TRUE(back.ok()) << back.status() << "\n" << json;
    EXPECT_EQ(toJson(*back), json);
    EXPECT_EQ(back->ran, ran);
    EXPECT_EQ(back->medianNanos, record.medianNanos);
    EXPECT_EQ(back->device.deviceClass, kClass);
  }
}

TEST(TuningRecord, ChoiceRoundTrips) {
  std::string json = toJson(choice());
  absl::StatusOr<ChoiceRecord> back = choiceRecordFromJson(json);
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << json;
  EXPECT_EQ(toJson(*back), json);
  EXPECT_EQ(back->timingKeys, choice().timingKeys);
  EXPECT_FALSE(back->confirmed);
}

TEST(TuningRecord, EveryFieldIsRequired) {
  std::string json = toJson(timing());
  for (const char *field :
       {"schema", "kernel", "source", "device", "tuning_key", "config",
        "protocol", "clock", "status", "reason", "median_ns", "rounds",
        "launches_per_round", "measured_unix_ns", "writer", "kjit"}) {
    absl::StatusOr<TimingRecord> back =
        timingRecordFromJson(with(json, field, ""));
    ASSERT_FALSE(back.ok()) << field;
    EXPECT_EQ(message(back.status()),
              std::string("timing record: '") + field + "' is missing");
  }
  for (const char *field : {"target", "arch", "class"}) {
    absl::StatusOr<TimingRecord> back =
        timingRecordFromJson(with(json, std::string("device.") + field, ""));
    ASSERT_FALSE(back.ok()) << field;
    EXPECT_EQ(message(back.status()),
              std::string("timing record: device: '") + field + "' is missing");
  }
  std::string chosen = toJson(choice());
  for (const char *field :
       {"schema", "kernel", "device", "tuning_key", "timing_keys", "winner",
        "confirmed", "chosen_unix_ns", "writer", "kjit"}) {
    absl::StatusOr<ChoiceRecord> back =
        choiceRecordFromJson(with(chosen, field, ""));
    ASSERT_FALSE(back.ok()) << field;
    EXPECT_EQ(message(back.status()),
              std::string("choice record: '") + field + "' is missing");
  }
  for (const char *field : {"timing_key", "config", "median_ns"}) {
    absl::StatusOr<ChoiceRecord> back =
        choiceRecordFromJson(with(chosen, std::string("winner.") + field, ""));
    ASSERT_FALSE(back.ok()) << field;
    EXPECT_EQ(message(back.status()),
              std::string("choice record: winner: '") + field + "' is missing");
  }
}

TEST(TuningRecord, FieldsOutOfBoundsOrOfAnotherTypeAreRefused) {
  std::string json = toJson(timing());
  auto refused = [&](const std::string &field, const std::string &value,
                     const std::string &expected) {
    absl::StatusOr<TimingRecord> back =
        timingRecordFromJson(with(json, field, value));
    ASSERT_FALSE(back.ok()) << field << " = " << value;
    EXPECT_EQ(back.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_EQ(message(back.status()), "timing record: " + expected);
  };
  refused("kernel", "7", "'kernel' is a number, not a string");
  refused("kernel", "\"\"", "'kernel' is empty");
  refused("kernel", "\"" + std::string(4097, 'k') + "\"",
          "'kernel' is 4097 bytes long; at most 4096");
  refused("schema", "\"kjit.tuning/2\"",
          "schema 'kjit.tuning/2'; this kjit reads 'kjit.tuning/1'");
  refused("device", "[]", "'device' is an array, not an object");
  refused("device.class", "\"abc\"", "device: 'class' is not 64 hex digits");
  refused("status", "\"maybe\"", "'status' is 'maybe'; it is 'ok' or 'failed'");
  refused("reason", "\"slow\"", "a configuration that ran has no 'reason'");
  refused("median_ns", "0",
          "'median_ns' is 0; a median is positive and at most 60 s");
  refused("median_ns", "-1",
          "'median_ns' is -1; a median is positive and at most 60 s");
  refused("median_ns", "60000000001",
          "'median_ns' is 60000000001; a median is positive and at most 60 s");
  refused("median_ns", "1e999",
          "'median_ns' is 1e999; a median is positive and at most 60 s");
  refused("median_ns", "\"12\"", "'median_ns' is a string, not a number");
  refused("rounds", "0", "'rounds' is 0; it is an integer from 1 to 1000000");
  refused("rounds", "1000001",
          "'rounds' is 1000001; it is an integer from 1 to 1000000");
  refused("rounds", "2.5",
          "'rounds' is 2.5; it is an integer from 1 to 1000000");
  refused("launches_per_round", "-3",
          "'launches_per_round' is -3; it is an integer from 1 to 1000000");
  refused("measured_unix_ns", "-1",
          "'measured_unix_ns' is -1; it is an integer from 0 to "
          "9223372036854775807");
  refused("writer", "null", "'writer' is null, not a string");

  // A configuration that did not run has a reason and no timing.
  TimingRecord failed = timing();
  failed.ran = false;
  failed.reason = "cannot run";
  failed.medianNanos = 0;
  failed.rounds = failed.launchesPerRound = 0;
  std::string failedJson = toJson(failed);
  auto failedRefused = [&](const std::string &field, const std::string &value,
                           const std::string &expected) {
    absl::StatusOr<TimingRecord> back =
        timingRecordFromJson(with(failedJson, field, value));
    ASSERT_FALSE(back.ok()) << field << " = " << value;
    EXPECT_EQ(message(back.status()), "timing record: " + expected);
  };
  failedRefused("reason", "\"\"", "'reason' is empty");
  failedRefused("median_ns", "12",
                "'median_ns' is 12; a configuration that did not run has no "
                "median (0)");
  failedRefused("rounds", "3", "'rounds' is 3; it is an integer from 0 to 0");
}

TEST(TuningRecord, ChoicesOutOfBoundsAreRefused) {
  std::string json = toJson(choice());
  auto refused = [&](const std::string &field, const std::string &value,
                     const std::string &expected) {
    absl::StatusOr<ChoiceRecord> back =
        choiceRecordFromJson(with(json, field, value));
    ASSERT_FALSE(back.ok()) << field << " = " << value;
    EXPECT_EQ(message(back.status()), "choice record: " + expected);
  };
  std::string one(64, '1'), two(64, '2'), three(64, '3');
  refused("timing_keys", "[]", "'timing_keys' has 0 keys; a set has 1 to 4096");
  refused("timing_keys", "[\"" + one + "\", \"" + three + "\"]",
          "the winner is not one of 'timing_keys'");
  refused("timing_keys", "[\"" + two + "\", \"" + one + "\"]",
          "'timing_keys' is not sorted without duplicates");
  refused("timing_keys", "[\"" + two + "\", \"" + two + "\"]",
          "'timing_keys' is not sorted without duplicates");
  refused("timing_keys", "[\"" + two + "\", 3]",
          "'timing_keys' holds something other than keys (64 hex digits)");
  refused("timing_keys", "[\"" + two + "\", \"XYZ\"]",
          "'timing_keys' holds something other than keys (64 hex digits)");
  std::string many = "[";
  for (int i = 0; i < 4097; ++i) {
    char key[65];
    std::snprintf(key, sizeof key, "%064x", i);
    many += std::string(i ? "," : "") + "\"" + key + "\"";
  }
  refused("timing_keys", many + "]",
          "'timing_keys' has 4097 keys; a set has 1 to 4096");
  refused("winner.timing_key", "\"" + std::string(64, '4') + "\"",
          "the winner is not one of 'timing_keys'");
  refused("winner.median_ns", "0",
          "winner: 'median_ns' is 0; a median is positive and at most 60 s");
  refused("confirmed", "1", "'confirmed' is a number, not a bool");
  refused("winner", "\"x\"", "'winner' is a string, not an object");
}

TEST(TuningRecord, UnknownFieldsAndOtherDocumentsAreRefused) {
  std::string json = toJson(timing());
  std::string extra = json.substr(0, json.size() - 1) + ",\"extra\":1}";
  EXPECT_EQ(message(timingRecordFromJson(extra).status()),
            "timing record: unknown field 'extra'");
  std::string device = with(json, "device",
                            "{\"target\":\"host\",\"arch\":\"x\",\"class\":\"" +
                                kClass + "\",\"uuid\":\"GPU-1\"}");
  EXPECT_EQ(message(timingRecordFromJson(device).status()),
            "timing record: device: unknown field 'uuid'");
  std::string chosen = toJson(choice());
  std::string winner =
      with(chosen, "winner",
           "{\"timing_key\":\"" + std::string(64, '2') +
               "\",\"config\":\"\",\"median_ns\":1.0,\"by\":\"me\"}");
  EXPECT_EQ(message(choiceRecordFromJson(winner).status()),
            "choice record: winner: unknown field 'by'");
  EXPECT_EQ(message(timingRecordFromJson("[1]").status()),
            "timing record: an array, not an object");
  EXPECT_EQ(message(choiceRecordFromJson("{").status())
                .rfind("choice record: JSON error at offset 1", 0),
            0u)
      << choiceRecordFromJson("{").status();
  // A choice is not a timing, and the other way round.
  EXPECT_EQ(message(timingRecordFromJson(chosen).status()),
            "timing record: unknown field 'timing_keys'");
  EXPECT_EQ(message(choiceRecordFromJson(json).status()),
            "choice record: unknown field 'source'");
}

TEST(TuningRecord, EveryTruncationIsRefused) {
  for (const std::string &json : {toJson(timing()), toJson(choice())})
    for (size_t size = 0; size < json.size(); ++size) {
      std::string_view cut(json.data(), size);
      EXPECT_FALSE(timingRecordFromJson(cut).ok()) << cut;
      EXPECT_FALSE(choiceRecordFromJson(cut).ok()) << cut;
    }
}

TEST(TuningRecord, EntriesOfTheTuningKindsRoundTripAndOthersAreRefused) {
  for (EntryKind kind : {EntryKind::Tuning, EntryKind::Choice}) {
    EntryData data;
    data.kind = kind;
    data.key = std::string(64, 'e');
    data.metadata =
        kind == EntryKind::Tuning ? toJson(timing()) : toJson(choice());
    absl::StatusOr<EntryData> back = decodeEntry(encodeEntry(data), data.key);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->kind, kind);
    EXPECT_EQ(back->metadata, data.metadata);
  }
  EXPECT_STREQ(kindName(EntryKind::Tuning), "tuning");
  EXPECT_STREQ(kindName(EntryKind::Choice), "choice");
  EntryData data;
  data.key = std::string(64, 'e');
  std::string bytes = encodeEntry(data);
  bytes[12] = 5; // the kind, little-endian
  fixChecksum(bytes);
  EXPECT_EQ(message(decodeEntry(bytes).status()), "unknown entry kind 5");
}

/// A disk cache of its own in a fresh directory.
class PutIfAbsent : public ::testing::Test {
protected:
  void SetUp() override {
    const char *tmp = std::getenv("TMPDIR");
    directory_ =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/kjit-put-if-absent-XXXXXX";
    ASSERT_NE(mkdtemp(directory_.data()), nullptr);
  }
  void TearDown() override {
    std::string command = "rm -rf '" + directory_ + "'";
    ASSERT_EQ(std::system(command.c_str()), 0);
  }
  std::unique_ptr<DiskCache> open(bool noRename, bool noLinks) {
    DiskCacheOptions options;
    options.directory = directory_ + "/cache";
    options.noRenameNoReplace = noRename;
    options.noHardLinks = noLinks;
    auto cache = DiskCache::open(options);
    EXPECT_TRUE(cache.ok()) << cache.status();
    return cache.ok() ? *std::move(cache) : nullptr;
  }
  static EntryData choiceEntry(const std::string &writer) {
    ChoiceRecord record = choice();
    record.writer = writer;
    EntryData data;
    data.kind = EntryKind::Choice;
    data.key = std::string(64, 'b');
    data.metadata = toJson(record);
    return data;
  }
  std::string directory_;
};

TEST_F(PutIfAbsent, TheFirstWriterWinsEachWay) {
  for (bool noRename : {false, true})
    for (bool noLinks : {false, true}) {
      std::unique_ptr<DiskCache> cache = open(noRename, noLinks);
      ASSERT_TRUE(cache);
      ASSERT_TRUE(cache->clear().ok());
      EXPECT_EQ(cache->putIfAbsent(choiceEntry("first:1")),
                DiskCache::PutResult::Stored);
      EXPECT_EQ(cache->putIfAbsent(choiceEntry("second:2")),
                DiskCache::PutResult::Exists);
      DiskCache::Lookup found =
          cache->get(EntryKind::Choice, std::string(64, 'b'));
      ASSERT_EQ(found.result, DiskCache::Lookup::Result::Hit);
      EXPECT_EQ(choiceRecordFromJson(found.entry.metadata)->writer, "first:1");
      // Nothing is left behind: one entry, no temporary file.
      EXPECT_EQ(cache->list().size(), 1u);
      DiskCache::PruneResult pruned = cache->prune(uint64_t(1) << 30, 0);
      EXPECT_EQ(pruned.staleTemporaries, 0u);
      // put still replaces.
      EXPECT_TRUE(cache->put(choiceEntry("third:3")));
      found = cache->get(EntryKind::Choice, std::string(64, 'b'));
      EXPECT_EQ(choiceRecordFromJson(found.entry.metadata)->writer, "third:3");
    }
}

TEST_F(PutIfAbsent, OneOfManyThreadsWins) {
  std::unique_ptr<DiskCache> cache = open(false, false);
  ASSERT_TRUE(cache);
  std::atomic<int> stored{0}, exists{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      DiskCache::PutResult result =
          cache->putIfAbsent(choiceEntry("thread:" + std::to_string(i)));
      (result == DiskCache::PutResult::Stored ? stored : exists)++;
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(stored.load(), 1);
  EXPECT_EQ(exists.load(), 7);
}

TEST_F(PutIfAbsent, ClearOfSomeKindsKeepsTheOthers) {
  std::unique_ptr<DiskCache> cache = open(false, false);
  ASSERT_TRUE(cache);
  EntryData artifact;
  artifact.key = std::string(64, 'a');
  artifact.metadata = "{}";
  artifact.payload = "code";
  ASSERT_TRUE(cache->put(artifact));
  ASSERT_EQ(cache->putIfAbsent(choiceEntry("first:1")),
            DiskCache::PutResult::Stored);
  absl::StatusOr<uint64_t> removed =
      cache->clear([](EntryKind kind) { return kind == EntryKind::Choice; });
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, 1u);
  std::vector<Listing> left = cache->list();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].key, artifact.key);
}

} // namespace
