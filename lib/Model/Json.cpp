//===- Json.cpp - a small strict JSON reader and writer -------------------===//

#include "kjit/Model/Json.h"

#include "kjit/Support/StrCat.h"

#include "absl/strings/str_cat.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace kjit::rt {

JsonValue JsonValue::boolean(bool value) {
  JsonValue v;
  v.kind_ = Kind::Bool;
  v.bool_ = value;
  return v;
}

JsonValue JsonValue::number(std::string text) {
  JsonValue v;
  v.kind_ = Kind::Number;
  v.text_ = std::move(text);
  return v;
}

JsonValue JsonValue::string(std::string value) {
  JsonValue v;
  v.kind_ = Kind::String;
  v.text_ = std::move(value);
  return v;
}

JsonValue JsonValue::array(std::vector<JsonValue> elements) {
  JsonValue v;
  v.kind_ = Kind::Array;
  v.elements_ = std::move(elements);
  return v;
}

JsonValue JsonValue::object(std::vector<JsonMember> members) {
  JsonValue v;
  v.kind_ = Kind::Object;
  v.members_ = std::move(members);
  return v;
}

const JsonValue *JsonValue::find(std::string_view key) const {
  for (const JsonMember &member : members_)
    if (member.key == key)
      return &member.value;
  return nullptr;
}

bool JsonValue::isFloatSyntax() const {
  return kind_ == Kind::Number &&
         text_.find_first_of(".eE") != std::string::npos;
}

std::optional<Int128> JsonValue::asInteger() const {
  if (kind_ != Kind::Number || isFloatSyntax())
    return std::nullopt;
  return parseInt128(text_);
}

std::optional<double> JsonValue::asDouble() const {
  if (kind_ != Kind::Number)
    return std::nullopt;
  // from_chars, unlike strtod, ignores the C locale: a record written under
  // one locale reads back under any other.
  double value = 0;
  const char *begin = text_.data();
  const char *end = begin + text_.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ptr != end || (ec != std::errc() && ec != std::errc::result_out_of_range))
    return std::nullopt;
  if (ec == std::errc::result_out_of_range)
    return std::nullopt;
  return value;
}

const char *jsonKindName(JsonValue::Kind kind) {
  switch (kind) {
  case JsonValue::Kind::Null:
    return "null";
  case JsonValue::Kind::Bool:
    return "a bool";
  case JsonValue::Kind::Number:
    return "a number";
  case JsonValue::Kind::String:
    return "a string";
  case JsonValue::Kind::Array:
    return "an array";
  case JsonValue::Kind::Object:
    return "an object";
  }
  return "an unknown value";
}

//===----------------------------------------------------------------------===//
// Parser
//===----------------------------------------------------------------------===//

namespace {

constexpr int kMaxDepth = 64;

class Parser {
public:
  explicit Parser(std::string_view text) : text_(text) {}

  absl::StatusOr<JsonValue> parseDocument() {
    JsonValue value;
    if (!parseValue(value, 0))
      return error_;
    skipSpace();
    if (pos_ != text_.size()) {
      fail("unexpected text after the JSON value");
      return error_;
    }
    return value;
  }

private:
  /// Records the first error; parse functions then return false.
  void fail(std::string_view what) {
    error_ = absl::InvalidArgumentError(
        kjit::strCat("JSON error at offset ", pos_, ": ", what));
  }

  bool atEnd() const { return pos_ >= text_.size(); }
  char peek() const { return text_[pos_]; }

  void skipSpace() {
    while (!atEnd() && (peek() == ' ' || peek() == '\t' || peek() == '\n' ||
                        peek() == '\r'))
      ++pos_;
  }

  bool parseValue(JsonValue &out, int depth) {
    skipSpace();
    if (atEnd()) {
      fail("unexpected end of input, expected a value");
      return false;
    }
    char c = peek();
    switch (c) {
    case '{':
      return parseObject(out, depth);
    case '[':
      return parseArray(out, depth);
    case '"': {
      std::string s;
      if (!parseString(s))
        return false;
      out = JsonValue::string(std::move(s));
      return true;
    }
    case 't':
      return parseLiteral("true", JsonValue::boolean(true), out);
    case 'f':
      return parseLiteral("false", JsonValue::boolean(false), out);
    case 'n':
      return parseLiteral("null", JsonValue(), out);
    default:
      if (c == '-' || (c >= '0' && c <= '9'))
        return parseNumber(out);
      fail(kjit::strCat("unexpected character ", describeChar(c),
                        ", expected a value"));
      return false;
    }
  }

  static std::string describeChar(char c) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f)
      return kjit::strCat("'", std::string(1, c), "'");
    return kjit::strCat("byte 0x", absl::Hex(u, absl::kZeroPad2));
  }

  bool parseLiteral(std::string_view word, JsonValue value, JsonValue &out) {
    if (text_.substr(pos_, word.size()) != word) {
      fail(kjit::strCat("invalid literal, expected '", word, "'"));
      return false;
    }
    pos_ += word.size();
    out = std::move(value);
    return true;
  }

  bool parseNumber(JsonValue &out) {
    size_t start = pos_;
    auto digits = [&] {
      size_t from = pos_;
      while (!atEnd() && peek() >= '0' && peek() <= '9')
        ++pos_;
      return pos_ - from;
    };
    if (peek() == '-')
      ++pos_;
    if (atEnd()) {
      fail("unexpected end of input in a number");
      return false;
    }
    if (peek() == '0') {
      ++pos_;
      if (!atEnd() && peek() >= '0' && peek() <= '9') {
        fail("a number may not have a leading zero");
        return false;
      }
    } else if (digits() == 0) {
      fail("expected a digit in a number");
      return false;
    }
    if (!atEnd() && peek() == '.') {
      ++pos_;
      if (digits() == 0) {
        fail("expected a digit after the decimal point");
        return false;
      }
    }
    if (!atEnd() && (peek() == 'e' || peek() == 'E')) {
      ++pos_;
      if (!atEnd() && (peek() == '+' || peek() == '-'))
        ++pos_;
      if (digits() == 0) {
        fail("expected a digit in the exponent");
        return false;
      }
    }
    out = JsonValue::number(std::string(text_.substr(start, pos_ - start)));
    return true;
  }

  static void appendUtf8(std::string &s, uint32_t cp) {
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else if (cp < 0x800) {
      s += static_cast<char>(0xC0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      s += static_cast<char>(0xE0 | (cp >> 12));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      s += static_cast<char>(0xF0 | (cp >> 18));
      s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  bool parseHex4(uint32_t &out) {
    if (text_.size() - pos_ < 4) {
      fail("unexpected end of input in a \\u escape");
      return false;
    }
    out = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[pos_ + i];
      uint32_t digit;
      if (c >= '0' && c <= '9')
        digit = c - '0';
      else if (c >= 'a' && c <= 'f')
        digit = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        digit = c - 'A' + 10;
      else {
        pos_ += i;
        fail("invalid hex digit in a \\u escape");
        return false;
      }
      out = out * 16 + digit;
    }
    pos_ += 4;
    return true;
  }

  /// Validates one UTF-8 sequence starting at pos_ (which holds a byte >=
  /// 0x80) and copies it: overlong forms, surrogates and values above
  /// U+10FFFF are rejected, as RFC 3629 requires.
  bool copyUtf8(std::string &s) {
    unsigned char lead = static_cast<unsigned char>(peek());
    int length;
    uint32_t cp;
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
      cp = lead & 0x1F;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      cp = lead & 0x0F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      cp = lead & 0x07;
    } else {
      fail("invalid UTF-8 in a string");
      return false;
    }
    if (text_.size() - pos_ < static_cast<size_t>(length)) {
      fail("truncated UTF-8 sequence in a string");
      return false;
    }
    for (int i = 1; i < length; ++i) {
      unsigned char c = static_cast<unsigned char>(text_[pos_ + i]);
      if ((c & 0xC0) != 0x80) {
        fail("invalid UTF-8 in a string");
        return false;
      }
      cp = (cp << 6) | (c & 0x3F);
    }
    if ((length == 3 && cp < 0x800) || (length == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      fail("invalid UTF-8 in a string");
      return false;
    }
    s.append(text_.data() + pos_, length);
    pos_ += length;
    return true;
  }

  bool parseString(std::string &s) {
    ++pos_; // opening quote
    while (true) {
      if (atEnd()) {
        fail("unterminated string");
        return false;
      }
      char c = peek();
      unsigned char u = static_cast<unsigned char>(c);
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (u < 0x20) {
        fail("unescaped control character in a string");
        return false;
      }
      if (u >= 0x80) {
        if (!copyUtf8(s))
          return false;
        continue;
      }
      if (c != '\\') {
        s += c;
        ++pos_;
        continue;
      }
      ++pos_;
      if (atEnd()) {
        fail("unterminated escape in a string");
        return false;
      }
      char e = peek();
      ++pos_;
      switch (e) {
      case '"':
        s += '"';
        break;
      case '\\':
        s += '\\';
        break;
      case '/':
        s += '/';
        break;
      case 'b':
        s += '\b';
        break;
      case 'f':
        s += '\f';
        break;
      case 'n':
        s += '\n';
        break;
      case 'r':
        s += '\r';
        break;
      case 't':
        s += '\t';
        break;
      case 'u': {
        uint32_t cp;
        if (!parseHex4(cp))
          return false;
        if (cp >= 0xDC00 && cp <= 0xDFFF) {
          fail("unpaired low surrogate in a \\u escape");
          return false;
        }
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          if (text_.substr(pos_, 2) != "\\u") {
            fail("unpaired high surrogate in a \\u escape");
            return false;
          }
          pos_ += 2;
          uint32_t low;
          if (!parseHex4(low))
            return false;
          if (low < 0xDC00 || low > 0xDFFF) {
            fail("unpaired high surrogate in a \\u escape");
            return false;
          }
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        appendUtf8(s, cp);
        break;
      }
      default:
        --pos_;
        fail(
            kjit::strCat("invalid escape \\", describeChar(e), " in a string"));
        return false;
      }
    }
  }

  bool enter(int depth) {
    if (depth >= kMaxDepth) {
      fail(kjit::strCat("nesting deeper than ", kMaxDepth, " levels"));
      return false;
    }
    return true;
  }

  bool parseArray(JsonValue &out, int depth) {
    if (!enter(depth))
      return false;
    ++pos_; // '['
    std::vector<JsonValue> elements;
    skipSpace();
    if (!atEnd() && peek() == ']') {
      ++pos_;
      out = JsonValue::array(std::move(elements));
      return true;
    }
    while (true) {
      JsonValue element;
      if (!parseValue(element, depth + 1))
        return false;
      elements.push_back(std::move(element));
      skipSpace();
      if (atEnd()) {
        fail("unexpected end of input, expected ',' or ']' in an array");
        return false;
      }
      if (peek() == ']') {
        ++pos_;
        out = JsonValue::array(std::move(elements));
        return true;
      }
      if (peek() != ',') {
        fail("expected ',' or ']' in an array");
        return false;
      }
      ++pos_;
    }
  }

  bool parseObject(JsonValue &out, int depth) {
    if (!enter(depth))
      return false;
    ++pos_; // '{'
    std::vector<JsonMember> members;
    skipSpace();
    if (!atEnd() && peek() == '}') {
      ++pos_;
      out = JsonValue::object(std::move(members));
      return true;
    }
    while (true) {
      skipSpace();
      if (atEnd() || peek() != '"') {
        fail(atEnd() ? "unexpected end of input, expected an object key"
                     : "expected a string as an object key");
        return false;
      }
      size_t keyStart = pos_;
      JsonMember member;
      if (!parseString(member.key))
        return false;
      for (const JsonMember &other : members)
        if (other.key == member.key) {
          pos_ = keyStart;
          fail(kjit::strCat("duplicate object key ", quoteJson(member.key)));
          return false;
        }
      skipSpace();
      if (atEnd() || peek() != ':') {
        fail("expected ':' after an object key");
        return false;
      }
      ++pos_;
      if (!parseValue(member.value, depth + 1))
        return false;
      members.push_back(std::move(member));
      skipSpace();
      if (atEnd()) {
        fail("unexpected end of input, expected ',' or '}' in an object");
        return false;
      }
      if (peek() == '}') {
        ++pos_;
        out = JsonValue::object(std::move(members));
        return true;
      }
      if (peek() != ',') {
        fail("expected ',' or '}' in an object");
        return false;
      }
      ++pos_;
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  absl::Status error_;
};

} // namespace

absl::StatusOr<JsonValue> parseJson(std::string_view text) {
  return Parser(text).parseDocument();
}

//===----------------------------------------------------------------------===//
// Writer
//===----------------------------------------------------------------------===//

std::string quoteJson(std::string_view value) {
  std::string out;
  JsonWriter(out).string(value);
  return out;
}

void JsonWriter::separate() {
  if (needComma_)
    out_ += ',';
  needComma_ = true;
}

JsonWriter &JsonWriter::beginObject() {
  separate();
  out_ += '{';
  needComma_ = false;
  return *this;
}

JsonWriter &JsonWriter::endObject() {
  out_ += '}';
  needComma_ = true;
  return *this;
}

JsonWriter &JsonWriter::beginArray() {
  separate();
  out_ += '[';
  needComma_ = false;
  return *this;
}

JsonWriter &JsonWriter::endArray() {
  out_ += ']';
  needComma_ = true;
  return *this;
}

JsonWriter &JsonWriter::key(std::string_view name) {
  string(name);
  out_ += ':';
  // The value that follows is not preceded by a comma.
  needComma_ = false;
  return *this;
}

JsonWriter &JsonWriter::null() {
  separate();
  out_ += "null";
  return *this;
}

JsonWriter &JsonWriter::boolean(bool value) {
  separate();
  out_ += value ? "true" : "false";
  return *this;
}

JsonWriter &JsonWriter::integer(Int128 value) {
  separate();
  out_ += int128ToString(value);
  return *this;
}

JsonWriter &JsonWriter::finiteDouble(double value) {
  separate();
  char buffer[64];
  // Shortest form that reads back to the same double.
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  std::string_view text(buffer, end - buffer);
  out_ += text;
  if (text.find_first_of(".e") == std::string_view::npos)
    out_ += ".0";
  return *this;
}

JsonWriter &JsonWriter::raw(std::string_view json) {
  separate();
  out_ += json;
  return *this;
}

JsonWriter &JsonWriter::string(std::string_view value) {
  separate();
  out_ += '"';
  for (char c : value) {
    unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
    case '"':
      out_ += "\\\"";
      break;
    case '\\':
      out_ += "\\\\";
      break;
    case '\n':
      out_ += "\\n";
      break;
    case '\r':
      out_ += "\\r";
      break;
    case '\t':
      out_ += "\\t";
      break;
    default:
      if (u < 0x20)
        kjit::strAppend(&out_, "\\u00", absl::Hex(u, absl::kZeroPad2));
      else
        out_ += c;
    }
  }
  out_ += '"';
  return *this;
}

} // namespace kjit::rt
