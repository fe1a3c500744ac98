//===- JsonFields.cpp - typed access to JSON documents with messages ------===//

#include "JsonFields.h"

#include "kjit/Support/StrCat.h"

#include "absl/strings/str_cat.h"

#include <cmath>
#include <cstring>

namespace kjit::rt::detail {

void writeValue(JsonWriter &writer, const Argument &value) {
  switch (value.kind()) {
  case ArgKind::Bool:
    writer.boolean(value.asBool());
    return;
  case ArgKind::Int:
    writer.integer(value.asInt());
    return;
  case ArgKind::Float: {
    double f = value.asFloat();
    if (std::isfinite(f)) {
      writer.finiteDouble(f);
      return;
    }
    uint64_t bits;
    std::memcpy(&bits, &f, sizeof(bits));
    writer.beginObject();
    writer.key("float_bits")
        .string(kjit::strCat("0x", absl::Hex(bits, absl::kZeroPad16)));
    writer.endObject();
    return;
  }
  case ArgKind::DType:
    writer.string(canonicalName(value.dtype()));
    return;
  default:
    // Only the kinds above are stored (defaults and constants are checked
    // before they reach a writer).
    writer.null();
    return;
  }
}

std::string FieldReader::join(std::string_view path, std::string_view key) {
  if (path.empty())
    return std::string(key);
  return kjit::strCat(path, ".", key);
}

absl::Status FieldReader::error(std::string_view path,
                                std::string_view message) const {
  // Paths and messages quote the document's keys and values: escaped, so
  // that a NUL or an escape sequence in a record reaches no terminal.
  if (path.empty())
    return absl::InvalidArgumentError(
        kjit::strCat(document_, ": ", kjit::escapeControl(message)));
  return absl::InvalidArgumentError(
      kjit::strCat(document_, ": field '", kjit::escapeControl(path),
                   "': ", kjit::escapeControl(message)));
}

absl::Status FieldReader::wrap(const absl::Status &status) const {
  return absl::InvalidArgumentError(
      kjit::strCat(document_, ": ", status.message()));
}

absl::Status
FieldReader::object(const JsonValue &value, std::string_view path,
                    absl::Span<const std::string_view> required,
                    absl::Span<const std::string_view> optional) const {
  if (!value.isObject())
    return error(path, kjit::strCat("expected an object, got ",
                                    jsonKindName(value.kind())));
  for (const JsonMember &member : value.members()) {
    bool known = false;
    for (std::string_view key : required)
      known |= key == member.key;
    for (std::string_view key : optional)
      known |= key == member.key;
    if (!known)
      return error(path,
                   kjit::strCat("unknown member ", quoteJson(member.key)));
  }
  for (std::string_view key : required)
    if (!value.find(key))
      return error(path, kjit::strCat("missing member '", key, "'"));
  return absl::OkStatus();
}

absl::StatusOr<const JsonValue *>
FieldReader::member(const JsonValue &value, std::string_view key,
                    JsonValue::Kind kind, std::string_view path) const {
  const JsonValue *m = value.find(key);
  if (!m)
    return error(path, kjit::strCat("missing member '", key, "'"));
  if (m->kind() != kind)
    return error(join(path, key),
                 kjit::strCat("expected ", jsonKindName(kind), ", got ",
                              jsonKindName(m->kind())));
  return m;
}

absl::StatusOr<std::string> FieldReader::string(const JsonValue &value,
                                                std::string_view key,
                                                std::string_view path) const {
  absl::StatusOr<const JsonValue *> m =
      member(value, key, JsonValue::Kind::String, path);
  if (!m.ok())
    return m.status();
  return (*m)->text();
}

absl::StatusOr<bool> FieldReader::boolean(const JsonValue &value,
                                          std::string_view key,
                                          std::string_view path) const {
  absl::StatusOr<const JsonValue *> m =
      member(value, key, JsonValue::Kind::Bool, path);
  if (!m.ok())
    return m.status();
  return (*m)->asBool();
}

absl::Status FieldReader::version(const JsonValue &root, int expected) const {
  absl::StatusOr<const JsonValue *> v =
      member(root, "version", JsonValue::Kind::Number);
  if (!v.ok())
    return v.status();
  std::optional<Int128> number = (*v)->asInteger();
  if (!number || *number != expected)
    return error("version",
                 kjit::strCat("unsupported format version ", (*v)->text(),
                              " (this build reads ", expected, ")"));
  return absl::OkStatus();
}

absl::StatusOr<Argument> FieldReader::value(const JsonValue &value,
                                            std::string_view path) const {
  switch (value.kind()) {
  case JsonValue::Kind::Null:
    return Argument::none();
  case JsonValue::Kind::Bool:
    return Argument::boolean(value.asBool());
  case JsonValue::Kind::Number: {
    if (value.isFloatSyntax()) {
      std::optional<double> f = value.asDouble();
      if (!f)
        return error(path, kjit::strCat("number ", value.text(),
                                        " is out of range for a double"));
      return Argument::fp(*f);
    }
    std::optional<Int128> i = value.asInteger();
    if (!i)
      return error(path, kjit::strCat("integer ", value.text(),
                                      " does not fit in 128 bits"));
    return Argument::integer(*i);
  }
  case JsonValue::Kind::String: {
    std::optional<DType> dtype = parseDType(value.text());
    if (!dtype || canonicalName(*dtype) != value.text())
      return error(path,
                   kjit::strCat("unknown dtype ", quoteJson(value.text())));
    return Argument::dtypeValue(*dtype);
  }
  case JsonValue::Kind::Object: {
    if (absl::Status s = object(value, path, {"float_bits"}, {}); !s.ok())
      return s;
    absl::StatusOr<std::string> text = string(value, "float_bits", path);
    if (!text.ok())
      return text.status();
    std::string_view hex = *text;
    uint64_t bits = 0;
    bool valid = hex.size() == 18 && hex.substr(0, 2) == "0x";
    for (size_t i = 2; valid && i < hex.size(); ++i) {
      char c = hex[i];
      int digit = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                         : -1;
      valid = digit >= 0;
      bits = bits << 4 | static_cast<uint64_t>(digit & 0xf);
    }
    if (!valid)
      return error(
          join(path, "float_bits"),
          kjit::strCat("expected 0x and 16 hex digits, got ", quoteJson(hex)));
    double f;
    std::memcpy(&f, &bits, sizeof(f));
    return Argument::fp(f);
  }
  case JsonValue::Kind::Array:
    break;
  }
  return error(path, "expected null, a bool, a number, a dtype name or a "
                     "float_bits object, got an array");
}

} // namespace kjit::rt::detail
