//===- JsonTest.cpp - the model library's strict JSON reader and writer ---===//

#include "kjit/Model/Json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

using namespace kjit::rt;

namespace {

std::string errorOf(std::string_view text) {
  absl::StatusOr<JsonValue> v = parseJson(text);
  EXPECT_FALSE(v.ok()) << text;
  return v.ok() ? "" : std::string(v.status().message());
}

TEST(Json, ParsesEveryKind) {
  absl::StatusOr<JsonValue> v = parseJson(
      " {\"a\": [1, -2.5e3, true, false, null], \"b\": {\"c\": \"d\"},"
      " \"big\": 340282366920938463463374607431768211455, \"neg\": "
      "-170141183460469231731687303715884105728}\n");
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_TRUE(v->isObject());
  const JsonValue *a = v->find("a");
  ASSERT_TRUE(a && a->isArray());
  ASSERT_EQ(a->elements().size(), 5u);
  EXPECT_EQ(a->elements()[0].asInteger(), Int128(1));
  EXPECT_FALSE(a->elements()[0].isFloatSyntax());
  EXPECT_TRUE(a->elements()[1].isFloatSyntax());
  EXPECT_EQ(a->elements()[1].asDouble(), -2500.0);
  EXPECT_FALSE(a->elements()[1].asInteger().has_value());
  EXPECT_TRUE(a->elements()[2].asBool());
  EXPECT_FALSE(a->elements()[3].asBool());
  EXPECT_TRUE(a->elements()[4].isNull());
  EXPECT_EQ(v->find("b")->find("c")->text(), "d");
  // 2^128-1 is valid JSON but beyond Int128; the most negative Int128 fits.
  EXPECT_FALSE(v->find("big")->asInteger().has_value());
  EXPECT_EQ(v->find("neg")->asInteger(),
            -(static_cast<Int128>(1) << 126) - (static_cast<Int128>(1) << 126));
  EXPECT_EQ(v->members()[0].key, "a");
  EXPECT_EQ(v->members()[3].key, "neg");
}

TEST(Json, Strings) {
  absl::StatusOr<JsonValue> v = parseJson(
      R"(["a\"b\\c\/d\b\f\n\r\t", "\u00e9\u20ac\ud83d\ude00", "é€😀"])");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->elements()[0].text(), "a\"b\\c/d\b\f\n\r\t");
  EXPECT_EQ(v->elements()[1].text(), "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  EXPECT_EQ(v->elements()[2].text(), v->elements()[1].text());
}

TEST(Json, WriterRoundTrip) {
  std::string out;
  JsonWriter w(out);
  w.beginObject();
  w.key("s").string(std::string("q\"\\\n\x01 \xc3\xa9", 8));
  w.key("i").integer(-(static_cast<Int128>(1) << 100));
  w.key("f").finiteDouble(0.1);
  w.key("whole").finiteDouble(3.0);
  w.key("tiny").finiteDouble(5e-324);
  w.key("nz").finiteDouble(-0.0);
  w.key("a")
      .beginArray()
      .null()
      .boolean(true)
      .beginArray()
      .endArray()
      .beginObject()
      .endObject()
      .endArray();
  w.endObject();
  EXPECT_EQ(out, "{\"s\":\"q\\\"\\\\\\n\\u0001 \xc3\xa9\",\"i\":"
                 "-1267650600228229401496703205376,\"f\":0.1,\"whole\":3.0,"
                 "\"tiny\":5e-324,\"nz\":-0.0,\"a\":[null,true,[],{}]}");
  absl::StatusOr<JsonValue> v = parseJson(out);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->find("s")->text(), std::string("q\"\\\n\x01 \xc3\xa9", 8));
  EXPECT_EQ(v->find("i")->asInteger(), -(static_cast<Int128>(1) << 100));
  EXPECT_EQ(v->find("f")->asDouble(), 0.1);
  EXPECT_TRUE(v->find("whole")->isFloatSyntax());
  EXPECT_EQ(v->find("tiny")->asDouble(), 5e-324);
  double nz = *v->find("nz")->asDouble();
  EXPECT_TRUE(nz == 0 && std::signbit(nz));
}

struct ErrorCase {
  const char *text;
  const char *message;
};

TEST(Json, ErrorMessages) {
  ErrorCase cases[] = {
      {"", "JSON error at offset 0: unexpected end of input, expected a value"},
      {"   ", "JSON error at offset 3: unexpected end of input, expected a "
              "value"},
      {"{} x", "JSON error at offset 3: unexpected text after the JSON value"},
      {"[1,]", "JSON error at offset 3: unexpected character ']', expected a "
               "value"},
      {"{\"a\":1,}", "JSON error at offset 7: expected a string as an object "
                     "key"},
      {"{\"a\" 1}", "JSON error at offset 5: expected ':' after an object key"},
      {"{\"a\":1 \"b\":2}", "JSON error at offset 7: expected ',' or '}' in "
                            "an object"},
      {"[1 2]", "JSON error at offset 3: expected ',' or ']' in an array"},
      {"[1", "JSON error at offset 2: unexpected end of input, expected ',' "
             "or ']' in an array"},
      {"{\"a\":1", "JSON error at offset 6: unexpected end of input, "
                   "expected ',' or '}' in an object"},
      {"{", "JSON error at offset 1: unexpected end of input, expected an "
            "object key"},
      {"{\"a\":1,\"a\":2}", "JSON error at offset 7: duplicate object key "
                            "\"a\""},
      {"01", "JSON error at offset 1: a number may not have a leading zero"},
      {"-", "JSON error at offset 1: unexpected end of input in a number"},
      {"-x", "JSON error at offset 1: expected a digit in a number"},
      {"1.", "JSON error at offset 2: expected a digit after the decimal "
             "point"},
      {"1e+", "JSON error at offset 3: expected a digit in the exponent"},
      {"+1", "JSON error at offset 0: unexpected character '+', expected a "
             "value"},
      {"tru", "JSON error at offset 0: invalid literal, expected 'true'"},
      {"nul", "JSON error at offset 0: invalid literal, expected 'null'"},
      {"falsy", "JSON error at offset 0: invalid literal, expected 'false'"},
      {"\"abc", "JSON error at offset 4: unterminated string"},
      {"\"a\\", "JSON error at offset 3: unterminated escape in a string"},
      {"\"a\\x\"", "JSON error at offset 3: invalid escape \\'x' in a string"},
      {"\"\\u12\"", "JSON error at offset 3: unexpected end of input in a \\u "
                    "escape"},
      {"\"\\u12g4\"", "JSON error at offset 5: invalid hex digit in a \\u "
                      "escape"},
      {"\"\\udc00\"", "JSON error at offset 7: unpaired low surrogate in a "
                      "\\u escape"},
      {"\"\\ud800x\"", "JSON error at offset 7: unpaired high surrogate in a "
                       "\\u escape"},
      {"\"\\ud800\\u0041\"", "JSON error at offset 13: unpaired high "
                             "surrogate in a \\u escape"},
      {"\"a\tb\"", "JSON error at offset 2: unescaped control character in "
                   "a string"},
      {"\"\xff\"", "JSON error at offset 1: invalid UTF-8 in a string"},
      {"\"\xc0\xaf\"", "JSON error at offset 1: invalid UTF-8 in a string"},
      {"\"\xe0\x80\xaf\"", "JSON error at offset 1: invalid UTF-8 in a "
                           "string"},
      {"\"\xed\xa0\x80\"", "JSON error at offset 1: invalid UTF-8 in a "
                           "string"},
      {"\"\xf4\x90\x80\x80\"", "JSON error at offset 1: invalid UTF-8 in a "
                               "string"},
      {"\"\xe2\x82\"", "JSON error at offset 1: invalid UTF-8 in a string"},
      {"\"\xe2\x82", "JSON error at offset 1: truncated UTF-8 sequence in a "
                     "string"},
      {"\x01", "JSON error at offset 0: unexpected character byte 0x01, "
               "expected a value"},
      {"// c\n1", "JSON error at offset 0: unexpected character '/', "
                  "expected a value"},
  };
  for (const ErrorCase &c : cases)
    EXPECT_EQ(errorOf(c.text), c.message) << c.text;
}

TEST(Json, NestingIsBounded) {
  std::string ok(64, '[');
  ok += std::string(64, ']');
  EXPECT_TRUE(parseJson(ok).ok());
  std::string deep(65, '[');
  deep += std::string(65, ']');
  EXPECT_EQ(errorOf(deep),
            "JSON error at offset 64: nesting deeper than 64 levels");
  // Far deeper input is an error, not a stack overflow.
  EXPECT_FALSE(parseJson(std::string(1 << 20, '[')).ok());
}

TEST(Json, NumbersOutOfRange) {
  absl::StatusOr<JsonValue> v = parseJson("[1e400, 1e-400]");
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v->elements()[0].asDouble().has_value());
  EXPECT_FALSE(v->elements()[1].asDouble().has_value());
}

} // namespace
