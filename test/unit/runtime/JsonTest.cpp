//===- JsonTest.cpp - the runtime's JSON writer and reader ----------------===//

#include "runtime/src/Log/Json.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace dtcrt;

namespace {

TEST(Json, QuotesStrings) {
  EXPECT_EQ("\"a\\\"b\\\\c\\nd\\u0001\"", jsonQuote("a\"b\\c\nd\x01"));
}

TEST(Json, WritesNumbersThatReadBack) {
  for (double v : {0.1, 1.0 / 3, 1e-300, -2.5e17, 3.0}) {
    JsonValue parsed;
    std::string error;
    ASSERT_TRUE(parseJson(jsonNumber(v), parsed, error)) << error;
    EXPECT_EQ(v, parsed.number);
  }
  EXPECT_EQ("3", jsonNumber(3.0));
  EXPECT_EQ("0.100000001", jsonNumber(double(0.1f), 9));
  EXPECT_EQ("NaN", jsonNumber(NAN));
  EXPECT_EQ("-Infinity", jsonNumber(-INFINITY, 9));
}

TEST(Json, WritesObjectsInOrder) {
  JsonObjectWriter w;
  w.integer("step", 3).num("loss", 0.5).str("name", "x").raw("list", "[1]");
  EXPECT_EQ("{\"step\": 3, \"loss\": 0.5, \"name\": \"x\", \"list\": [1]}",
            w.finish());
}

TEST(Json, ParsesNestedValues) {
  JsonValue v;
  std::string error;
  ASSERT_TRUE(
      parseJson(R"( {"a": [1, -2.5e1, true, null, "x\u00e9\ud83d\ude00"],
                             "b": {"c": 1152921504606846977}} )",
                v, error))
      << error;
  const JsonValue *a = v.get("a");
  ASSERT_TRUE(a && a->kind == JsonValue::Kind::Array);
  ASSERT_EQ(5u, a->array.size());
  EXPECT_EQ(-25.0, a->array[1].number);
  EXPECT_TRUE(a->array[2].boolean);
  EXPECT_EQ(JsonValue::Kind::Null, a->array[3].kind);
  EXPECT_EQ("x\xc3\xa9\xf0\x9f\x98\x80", a->array[4].string);
  int64_t big = 0;
  ASSERT_TRUE(v.get("b")->get("c")->asInt64(big));
  EXPECT_EQ(int64_t(1152921504606846977), big);
  int64_t notInt;
  EXPECT_FALSE(a->array[1].asInt64(notInt));
  EXPECT_EQ(nullptr, v.get("missing"));
}

TEST(Json, ReadsWhatPythonWritesForNonFiniteNumbers) {
  JsonValue v;
  std::string error;
  ASSERT_TRUE(parseJson("[NaN, Infinity, -Infinity]", v, error)) << error;
  EXPECT_TRUE(std::isnan(v.array[0].number));
  EXPECT_EQ(INFINITY, v.array[1].number);
  EXPECT_EQ(-INFINITY, v.array[2].number);
}

TEST(Json, RejectsMalformedText) {
  for (const char *text :
       {"", "{", "{\"a\" 1}", "[1,]", "\"unterminated", "[1] x", "01x",
        "{\"a\": -}", "\"\\q\"", "tru", "[\"\\ud800\\u0041\"]"}) {
    JsonValue v;
    std::string error;
    EXPECT_FALSE(parseJson(text, v, error)) << text;
    EXPECT_FALSE(error.empty()) << text;
  }
}

TEST(Json, CapsTheNestingDepth) {
  std::string deep(kMaxJsonDepth + 5, '[');
  deep += std::string(kMaxJsonDepth + 5, ']');
  JsonValue v;
  std::string error;
  EXPECT_FALSE(parseJson(deep, v, error));
  EXPECT_NE(std::string::npos, error.find("nesting deeper")) << error;
  std::string fine(kMaxJsonDepth, '[');
  fine += std::string(kMaxJsonDepth, ']');
  EXPECT_TRUE(parseJson(fine, v, error)) << error;
}

} // namespace
