//===- TuningRecord.cpp - the autotuner's records, as JSON ----------------===//

#include "kjit/Cache/TuningRecord.h"

#include "kjit/Cache/EntryFormat.h"

#include "kjit/Model/Json.h"
#include "kjit/Support/StrCat.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <optional>

namespace kjit::cache {

using rt::JsonValue;
using rt::JsonWriter;

namespace {

void writeDevice(JsonWriter &json, const TuningDevice &device) {
  json.key("device")
      .beginObject()
      .key("target")
      .string(device.target)
      .key("arch")
      .string(device.arch)
      .key("class")
      .string(device.deviceClass)
      .endObject();
}

/// Reads one record's fields, each once, and says what is wrong with the
/// first that is.
class Reader {
public:
  Reader(const char *what, const JsonValue &object)
      : what_(what), object_(object) {}

  absl::Status error(const std::string &message) const {
    return absl::DataLossError(strCat(what_, ": ", message));
  }

  /// Fails on a member that is not in `known`.
  absl::Status onlyKnown(std::initializer_list<std::string_view> known) const {
    for (const rt::JsonMember &member : object_.members())
      if (std::find(known.begin(), known.end(), member.key) == known.end())
        return error(strCat("unknown field '", member.key, "'"));
    return absl::OkStatus();
  }

  absl::StatusOr<const JsonValue *> field(std::string_view name,
                                          JsonValue::Kind kind) const {
    const JsonValue *value = object_.find(name);
    if (!value)
      return error(strCat("'", name, "' is missing"));
    if (value->kind() != kind)
      return error(strCat("'", name, "' is ", rt::jsonKindName(value->kind()),
                          ", not ", rt::jsonKindName(kind)));
    return value;
  }

  absl::Status string(std::string_view name, std::string &out,
                      bool mayBeEmpty = false) const {
    absl::StatusOr<const JsonValue *> value =
        field(name, JsonValue::Kind::String);
    if (!value.ok())
      return value.status();
    if ((*value)->text().size() > kMaxRecordString)
      return error(strCat("'", name, "' is ", (*value)->text().size(),
                          " bytes long; at most ", kMaxRecordString));
    if (!mayBeEmpty && (*value)->text().empty())
      return error(strCat("'", name, "' is empty"));
    out = (*value)->text();
    return absl::OkStatus();
  }

  absl::Status integer(std::string_view name, int64_t &out, int64_t low,
                       int64_t high) const {
    absl::StatusOr<const JsonValue *> value =
        field(name, JsonValue::Kind::Number);
    if (!value.ok())
      return value.status();
    std::optional<rt::Int128> number = (*value)->asInteger();
    if (!number || *number < low || *number > high)
      return error(strCat("'", name, "' is ", (*value)->text(),
                          "; it is an integer from ", low, " to ", high));
    out = int64_t(*number);
    return absl::OkStatus();
  }

  absl::Status boolean(std::string_view name, bool &out) const {
    absl::StatusOr<const JsonValue *> value =
        field(name, JsonValue::Kind::Bool);
    if (!value.ok())
      return value.status();
    out = (*value)->asBool();
    return absl::OkStatus();
  }

  /// A median: positive, finite, at most a minute; 0 only when `mayBeZero`.
  absl::Status median(std::string_view name, double &out,
                      bool mayBeZero) const {
    absl::StatusOr<const JsonValue *> value =
        field(name, JsonValue::Kind::Number);
    if (!value.ok())
      return value.status();
    std::optional<double> number = (*value)->asDouble();
    if (!number || !std::isfinite(*number) ||
        (mayBeZero ? *number != 0
                   : (*number <= 0 || *number > kMaxMedianNanos)))
      return error(strCat("'", name, "' is ", (*value)->text(),
                          mayBeZero ? "; a configuration that did not run "
                                      "has no median (0)"
                                    : "; a median is positive and at most "
                                      "60 s"));
    out = *number;
    return absl::OkStatus();
  }

  absl::Status device(TuningDevice &out) const {
    absl::StatusOr<const JsonValue *> value =
        field("device", JsonValue::Kind::Object);
    if (!value.ok())
      return value.status();
    Reader device(what_ == std::string_view("timing record")
                      ? "timing record: device"
                      : "choice record: device",
                  **value);
    if (absl::Status status = device.onlyKnown({"target", "arch", "class"});
        !status.ok())
      return status;
    if (absl::Status status = device.string("target", out.target); !status.ok())
      return status;
    if (absl::Status status = device.string("arch", out.arch, true);
        !status.ok())
      return status;
    if (absl::Status status = device.string("class", out.deviceClass);
        !status.ok())
      return status;
    if (!isValidKey(out.deviceClass))
      return device.error("'class' is not 64 hex digits");
    return absl::OkStatus();
  }

  absl::Status schema(std::string_view expected) const {
    std::string schema;
    if (absl::Status status = string("schema", schema); !status.ok())
      return status;
    if (schema != expected)
      return error(
          strCat("schema '", schema, "'; this kjit reads '", expected, "'"));
    return absl::OkStatus();
  }

private:
  const char *what_;
  const JsonValue &object_;
};

absl::StatusOr<JsonValue> parseObject(const char *what, std::string_view json) {
  absl::StatusOr<JsonValue> parsed = rt::parseJson(json);
  if (!parsed.ok())
    return absl::DataLossError(strCat(what, ": ", parsed.status().message()));
  if (!parsed->isObject())
    return absl::DataLossError(strCat(
        what, ": ", rt::jsonKindName(parsed->kind()), ", not an object"));
  return parsed;
}

#define KJIT_RETURN_IF_ERROR(expr)                                             \
  if (absl::Status status_ = (expr); !status_.ok())                            \
  return status_

} // namespace

std::string toJson(const TimingRecord &record) {
  std::string out;
  JsonWriter json(out);
  json.beginObject()
      .key("schema")
      .string(kTimingSchema)
      .key("kernel")
      .string(record.kernel)
      .key("source")
      .string(record.source);
  writeDevice(json, record.device);
  json.key("tuning_key")
      .string(record.tuningKey)
      .key("config")
      .string(record.config)
      .key("protocol")
      .string(record.protocol)
      .key("clock")
      .string(record.clock)
      .key("status")
      .string(record.ran ? "ok" : "failed")
      .key("reason")
      .string(record.reason)
      .key("median_ns");
  if (record.ran)
    json.finiteDouble(record.medianNanos);
  else
    json.integer(0);
  json.key("rounds")
      .integer(record.rounds)
      .key("launches_per_round")
      .integer(record.launchesPerRound)
      .key("measured_unix_ns")
      .integer(record.measuredUnixNanos)
      .key("writer")
      .string(record.writer)
      .key("kjit")
      .string(record.kjit)
      .endObject();
  return out;
}

std::string toJson(const ChoiceRecord &record) {
  std::string out;
  JsonWriter json(out);
  json.beginObject()
      .key("schema")
      .string(kChoiceSchema)
      .key("kernel")
      .string(record.kernel);
  writeDevice(json, record.device);
  json.key("tuning_key").string(record.tuningKey).key("timing_keys");
  json.beginArray();
  for (const std::string &key : record.timingKeys)
    json.string(key);
  json.endArray()
      .key("winner")
      .beginObject()
      .key("timing_key")
      .string(record.winner)
      .key("config")
      .string(record.winnerConfig)
      .key("median_ns")
      .finiteDouble(record.winnerMedianNanos)
      .endObject()
      .key("confirmed")
      .boolean(record.confirmed)
      .key("chosen_unix_ns")
      .integer(record.chosenUnixNanos)
      .key("writer")
      .string(record.writer)
      .key("kjit")
      .string(record.kjit)
      .endObject();
  return out;
}

absl::StatusOr<TimingRecord> timingRecordFromJson(std::string_view json) {
  absl::StatusOr<JsonValue> parsed = parseObject("timing record", json);
  if (!parsed.ok())
    return parsed.status();
  Reader read("timing record", *parsed);
  KJIT_RETURN_IF_ERROR(read.onlyKnown(
      {"schema", "kernel", "source", "device", "tuning_key", "config",
       "protocol", "clock", "status", "reason", "median_ns", "rounds",
       "launches_per_round", "measured_unix_ns", "writer", "kjit"}));
  KJIT_RETURN_IF_ERROR(read.schema(kTimingSchema));
  TimingRecord record;
  KJIT_RETURN_IF_ERROR(read.string("kernel", record.kernel));
  KJIT_RETURN_IF_ERROR(read.string("source", record.source));
  KJIT_RETURN_IF_ERROR(read.device(record.device));
  KJIT_RETURN_IF_ERROR(read.string("tuning_key", record.tuningKey, true));
  KJIT_RETURN_IF_ERROR(read.string("config", record.config, true));
  KJIT_RETURN_IF_ERROR(read.string("protocol", record.protocol));
  KJIT_RETURN_IF_ERROR(read.string("clock", record.clock));
  std::string status;
  KJIT_RETURN_IF_ERROR(read.string("status", status));
  if (status != "ok" && status != "failed")
    return read.error(
        strCat("'status' is '", status, "'; it is 'ok' or 'failed'"));
  record.ran = status == "ok";
  KJIT_RETURN_IF_ERROR(read.string("reason", record.reason, record.ran));
  if (record.ran && !record.reason.empty())
    return read.error("a configuration that ran has no 'reason'");
  KJIT_RETURN_IF_ERROR(read.median("median_ns", record.medianNanos,
                                   /*mayBeZero=*/!record.ran));
  KJIT_RETURN_IF_ERROR(read.integer("rounds", record.rounds, record.ran ? 1 : 0,
                                    record.ran ? kMaxRounds : 0));
  KJIT_RETURN_IF_ERROR(read.integer("launches_per_round",
                                    record.launchesPerRound, record.ran ? 1 : 0,
                                    record.ran ? kMaxLaunchesPerRound : 0));
  KJIT_RETURN_IF_ERROR(
      read.integer("measured_unix_ns", record.measuredUnixNanos, 0, INT64_MAX));
  KJIT_RETURN_IF_ERROR(read.string("writer", record.writer));
  KJIT_RETURN_IF_ERROR(read.string("kjit", record.kjit));
  return record;
}

absl::StatusOr<ChoiceRecord> choiceRecordFromJson(std::string_view json) {
  absl::StatusOr<JsonValue> parsed = parseObject("choice record", json);
  if (!parsed.ok())
    return parsed.status();
  Reader read("choice record", *parsed);
  KJIT_RETURN_IF_ERROR(read.onlyKnown(
      {"schema", "kernel", "device", "tuning_key", "timing_keys", "winner",
       "confirmed", "chosen_unix_ns", "writer", "kjit"}));
  KJIT_RETURN_IF_ERROR(read.schema(kChoiceSchema));
  ChoiceRecord record;
  KJIT_RETURN_IF_ERROR(read.string("kernel", record.kernel));
  KJIT_RETURN_IF_ERROR(read.device(record.device));
  KJIT_RETURN_IF_ERROR(read.string("tuning_key", record.tuningKey, true));
  absl::StatusOr<const JsonValue *> keys =
      read.field("timing_keys", JsonValue::Kind::Array);
  if (!keys.ok())
    return keys.status();
  if ((*keys)->elements().empty() || (*keys)->elements().size() > kMaxChoiceSet)
    return read.error(strCat("'timing_keys' has ", (*keys)->elements().size(),
                             " keys; a set has 1 to ", kMaxChoiceSet));
  for (const JsonValue &key : (*keys)->elements()) {
    if (!key.isString() || !isValidKey(key.text()))
      return read.error("'timing_keys' holds something other than keys (64 "
                        "hex digits)");
    if (!record.timingKeys.empty() && key.text() <= record.timingKeys.back())
      return read.error("'timing_keys' is not sorted without duplicates");
    record.timingKeys.push_back(key.text());
  }
  absl::StatusOr<const JsonValue *> winner =
      read.field("winner", JsonValue::Kind::Object);
  if (!winner.ok())
    return winner.status();
  Reader readWinner("choice record: winner", **winner);
  KJIT_RETURN_IF_ERROR(
      readWinner.onlyKnown({"timing_key", "config", "median_ns"}));
  KJIT_RETURN_IF_ERROR(readWinner.string("timing_key", record.winner));
  if (!std::binary_search(record.timingKeys.begin(), record.timingKeys.end(),
                          record.winner))
    return read.error("the winner is not one of 'timing_keys'");
  KJIT_RETURN_IF_ERROR(readWinner.string("config", record.winnerConfig, true));
  KJIT_RETURN_IF_ERROR(readWinner.median("median_ns", record.winnerMedianNanos,
                                         /*mayBeZero=*/false));
  KJIT_RETURN_IF_ERROR(read.boolean("confirmed", record.confirmed));
  KJIT_RETURN_IF_ERROR(
      read.integer("chosen_unix_ns", record.chosenUnixNanos, 0, INT64_MAX));
  KJIT_RETURN_IF_ERROR(read.string("writer", record.writer));
  KJIT_RETURN_IF_ERROR(read.string("kjit", record.kjit));
  return record;
}

#undef KJIT_RETURN_IF_ERROR

} // namespace kjit::cache
