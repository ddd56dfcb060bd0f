#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "dloop/base/json.h"

namespace dloop::base {
namespace {

TEST(Json, ParsesEveryType) {
  auto r = Json::parse(R"({"s": "h\u00e9\n", "i": -42, "d": 2.5, "b": true, "n": null, "a": [1, [2]], "o": {"k": "v"}})");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const Json& j = *r;
  EXPECT_EQ(j.find("s")->as_string(), "h\xc3\xa9\n");
  EXPECT_EQ(j.find("i")->as_int(), -42);
  EXPECT_DOUBLE_EQ(j.find("d")->as_double(), 2.5);
  EXPECT_TRUE(j.find("b")->as_bool());
  EXPECT_TRUE(j.find("n")->is_null());
  EXPECT_EQ(j.find("a")->size(), 2u);
  EXPECT_EQ(j.find("o")->find("k")->as_string(), "v");
  EXPECT_EQ(j.find("missing"), nullptr);
}

TEST(Json, KeepsKeyOrderAndDumpsStyles) {
  auto r = Json::parse(R"({"name":"get_weather","arguments":{"city":"Paris","days":3,"metric":true}})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->dump(), R"({"name":"get_weather","arguments":{"city":"Paris","days":3,"metric":true}})");
  EXPECT_EQ(r->dump(Json::Style::kPython),
            R"({"name": "get_weather", "arguments": {"city": "Paris", "days": 3, "metric": true}})");
  EXPECT_EQ(Json::parse("[1,{}]")->dump(Json::Style::kPretty), "[\n  1,\n  {}\n]");
}

TEST(Json, ErrorsNameTheByteOffset) {
  auto r = Json::parse("{\"a\": 1,\n \"b\": tru}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("at byte 15 (line 2, column 7)"), std::string::npos)
      << r.status().message();
  EXPECT_NE(Json::parse("[1, 2").status().message().find("unexpected end of input"), std::string::npos);
  EXPECT_NE(Json::parse("\"ab\xff\"").status().message().find("invalid UTF-8"), std::string::npos);
  EXPECT_NE(Json::parse("{\"a\":1} x").status().message().find("after the JSON value"), std::string::npos);
  EXPECT_FALSE(Json::parse("").ok());
  EXPECT_FALSE(Json::parse("{\"a\":1,\"a\":2}").ok());
}

TEST(Json, DepthLimit) {
  std::string deep(300, '[');
  deep += std::string(300, ']');
  auto r = Json::parse(deep, 256);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kResourceExhausted);
  EXPECT_TRUE(Json::parse(deep, 400).ok());
}

TEST(Json, PythonFloatRepr) {
  EXPECT_EQ(format_double(1.0), "1.0");
  EXPECT_EQ(format_double(0.1), "0.1");
  EXPECT_EQ(format_double(-2.5), "-2.5");
  EXPECT_EQ(format_double(100000.0), "100000.0");
  EXPECT_EQ(format_double(1e16), "1e+16");
  EXPECT_EQ(format_double(1.5e-5), "1.5e-05");
  EXPECT_EQ(format_double(0.0001), "0.0001");
  EXPECT_EQ(format_double(123456789.125), "123456789.125");
  EXPECT_EQ(format_double(0.0), "0.0");
  EXPECT_EQ(format_double(NAN), "null");
}

TEST(Json, EscapesControlCharacters) {
  EXPECT_EQ(json_quote("a\"b\\c\x01\t"), "\"a\\\"b\\\\c\\u0001\\t\"");
  EXPECT_EQ(json_quote("\xe2\x82\xac"), "\"\xe2\x82\xac\"");
  // Invalid UTF-8 never reaches the output: each bad byte becomes U+FFFD.
  EXPECT_EQ(json_quote("a\xff\xc3(b"), "\"a\xef\xbf\xbd\xef\xbf\xbd(b\"");
  EXPECT_EQ(json_quote("\xf0\x9f\x98\x80"), "\"\xf0\x9f\x98\x80\"");
}

TEST(Json, CopiesAreDeepAndEqualityIgnoresKeyOrder) {
  Json a = Json::object();
  a.set("x", Json::array({Json(1), Json("two")}));
  Json b = a;
  b.find("x")->push_back(Json(3.5));
  EXPECT_EQ(a.find("x")->size(), 2u);
  EXPECT_EQ(b.find("x")->size(), 3u);
  EXPECT_EQ(*Json::parse(R"({"a":1,"b":2})"), *Json::parse(R"({"b":2,"a":1.0})"));
  EXPECT_NE(*Json::parse(R"({"a":1})"), *Json::parse(R"({"a":"1"})"));
}

// Random documents survive dump -> parse in every style.
TEST(Json, RandomRoundTrip) {
  std::mt19937_64 rng(7);
  std::function<Json(int)> gen = [&](int depth) -> Json {
    int kind = int(rng() % (depth > 3 ? 5 : 7));
    switch (kind) {
      case 0: return Json();
      case 1: return Json(bool(rng() & 1));
      case 2: return Json(int64_t(rng()) >> int(rng() % 60));
      case 3: return Json(std::ldexp(double(int64_t(rng() % 2000001) - 1000000), int(rng() % 40) - 20));
      case 4: {
        std::string s;
        for (int i = 0, n = int(rng() % 8); i < n; ++i) s.push_back(char(rng() % 128));
        s += "\xc3\xa9";
        return Json(s);
      }
      case 5: {
        Json a = Json::array();
        for (int i = 0, n = int(rng() % 4); i < n; ++i) a.push_back(gen(depth + 1));
        return a;
      }
      default: {
        Json o = Json::object();
        for (int i = 0, n = int(rng() % 4); i < n; ++i) o.set(std::string("k").append(std::to_string(i)), gen(depth + 1));
        return o;
      }
    }
  };
  for (int i = 0; i < 500; ++i) {
    Json doc = gen(0);
    for (auto style : {Json::Style::kCompact, Json::Style::kPython, Json::Style::kPretty}) {
      auto back = Json::parse(doc.dump(style));
      ASSERT_TRUE(back.ok()) << doc.dump(style);
      EXPECT_EQ(*back, doc) << doc.dump(style);
      EXPECT_EQ(back->dump(style), doc.dump(style));
    }
  }
}

}  // namespace
}  // namespace dloop::base
