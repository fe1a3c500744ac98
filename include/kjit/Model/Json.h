//===- Json.h - a small strict JSON reader and writer -----------*- C++ -*-===//
//
// Reads and writes the JSON of kernel manifests and specialization records.
//
// Why a JSON implementation of our own: the model library may not include
// LLVM headers (so llvm::json is out), and neither Abseil nor the C++
// standard library has JSON. The documents are small and written by kjit
// itself, so what matters is strictness (every malformed input is an error
// that says what and where, never a crash or a silent guess) and exact round
// trips (integers up to 128 bits are kept as their decimal text; doubles are
// written in shortest round-trip form), not speed. docs/Specialization.md
// has the rationale.
//
//===----------------------------------------------------------------------===//

#ifndef KJIT_MODEL_JSON_H
#define KJIT_MODEL_JSON_H

#include "kjit/Model/Argument.h"

#include "absl/status/statusor.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kjit::rt {

struct JsonMember;

/// A parsed JSON value. Objects keep their members in document order and
/// never hold two members with one key (the parser rejects duplicates).
class JsonValue {
public:
  enum class Kind : uint8_t { Null, Bool, Number, String, Array, Object };

  /// null.
  JsonValue() = default;
  static JsonValue boolean(bool value);
  /// A number from its JSON text, which must already be valid JSON number
  /// syntax (the parser guarantees it).
  static JsonValue number(std::string text);
  static JsonValue string(std::string value);
  static JsonValue array(std::vector<JsonValue> elements);
  static JsonValue object(std::vector<JsonMember> members);

  Kind kind() const { return kind_; }
  bool isNull() const { return kind_ == Kind::Null; }
  bool isBool() const { return kind_ == Kind::Bool; }
  bool isNumber() const { return kind_ == Kind::Number; }
  bool isString() const { return kind_ == Kind::String; }
  bool isArray() const { return kind_ == Kind::Array; }
  bool isObject() const { return kind_ == Kind::Object; }

  bool asBool() const { return bool_; }
  /// The number's JSON text, or the string's value.
  const std::string &text() const { return text_; }
  const std::vector<JsonValue> &elements() const { return elements_; }
  const std::vector<JsonMember> &members() const { return members_; }

  /// The member called `key` of an object, or null.
  const JsonValue *find(std::string_view key) const;

  /// The exact integer a number denotes, if it is written without fraction
  /// or exponent and fits in 128 bits.
  std::optional<Int128> asInteger() const;
  /// Whether a number is written with a fraction or exponent (1.0, 1e3):
  /// records keep float constants apart from integer ones this way.
  bool isFloatSyntax() const;
  /// The double nearest to a number.
  std::optional<double> asDouble() const;

private:
  Kind kind_ = Kind::Null;
  bool bool_ = false;
  std::string text_;
  std::vector<JsonValue> elements_;
  std::vector<JsonMember> members_;
};

/// One member of a JSON object.
struct JsonMember {
  std::string key;
  JsonValue value;
};

/// The name of a kind for messages: "an object", "a string", ...
const char *jsonKindName(JsonValue::Kind kind);

/// Parses one JSON document (RFC 8259, strictly: no comments, no trailing
/// commas, no leading zeros, valid UTF-8 and escapes, nothing after the
/// value, nesting at most 64 deep). Errors give the byte offset and what was
/// expected: "JSON error at offset 12: expected ':' after an object key".
absl::StatusOr<JsonValue> parseJson(std::string_view text);

/// Appends compact JSON to a string. Callers pair begin/end calls; the writer
/// places commas and colons.
class JsonWriter {
public:
  explicit JsonWriter(std::string &out) : out_(out) {}

  JsonWriter &beginObject();
  JsonWriter &endObject();
  JsonWriter &beginArray();
  JsonWriter &endArray();
  /// The key of the next object member.
  JsonWriter &key(std::string_view name);
  JsonWriter &null();
  JsonWriter &boolean(bool value);
  JsonWriter &integer(Int128 value);
  /// A finite double in shortest round-trip form, always with a fraction or
  /// exponent so that it reads back as a float ("1.0", not "1"). Non-finite
  /// values are not JSON; callers encode them themselves.
  JsonWriter &finiteDouble(double value);
  JsonWriter &string(std::string_view value);
  /// A value that is already JSON (another writer's document), as it is.
  JsonWriter &raw(std::string_view json);

private:
  void separate();

  std::string &out_;
  bool needComma_ = false;
};

/// `value` as a quoted, escaped JSON string.
std::string quoteJson(std::string_view value);

} // namespace kjit::rt

#endif // KJIT_MODEL_JSON_H
