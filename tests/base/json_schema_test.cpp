// JSON Schema subset: every keyword accepting and rejecting, unsupported keywords with their JSON
// paths, the pattern engine, and randomized tests against independent reference validators.
#include <gtest/gtest.h>

#include <random>
#include <regex>

#include "dloop/base/json_schema.h"

namespace dloop::base {
namespace {

Json J(std::string_view text) {
  auto r = Json::parse(text);
  DLOOP_ASSERT_MSG(r.ok(), "bad JSON in test");
  return *r;
}

Schema S(std::string_view text) {
  auto r = Schema::compile(J(text));
  EXPECT_TRUE(r.ok()) << text << ": " << r.status().to_string();
  return r.ok() ? *r : Schema();
}

// The first error's "path: message", or "" when valid.
std::string err(const Schema& s, std::string_view value) {
  Status st = s.validate(J(value));
  return st.ok() ? "" : st.message();
}

std::string compile_err(std::string_view schema) {
  auto r = Schema::compile(J(schema));
  return r.ok() ? "" : r.status().message();
}

TEST(JsonSchema, Types) {
  EXPECT_EQ(err(S(R"({"type":"string"})"), R"("x")"), "");
  EXPECT_EQ(err(S(R"({"type":"string"})"), "1"), "#: expected string, got integer");
  EXPECT_EQ(err(S(R"({"type":"integer"})"), "3"), "");
  EXPECT_EQ(err(S(R"({"type":"integer"})"), "3.0"), "");  // integral doubles are integers
  EXPECT_EQ(err(S(R"({"type":"integer"})"), "3.5"), "#: expected integer, got number");
  EXPECT_EQ(err(S(R"({"type":"number"})"), "3"), "");
  EXPECT_EQ(err(S(R"({"type":"number"})"), "-2.5e3"), "");
  EXPECT_EQ(err(S(R"({"type":"number"})"), "true"), "#: expected number, got boolean");
  EXPECT_EQ(err(S(R"({"type":"boolean"})"), "false"), "");
  EXPECT_EQ(err(S(R"({"type":"boolean"})"), "0"), "#: expected boolean, got integer");
  EXPECT_EQ(err(S(R"({"type":"null"})"), "null"), "");
  EXPECT_EQ(err(S(R"({"type":"null"})"), "{}"), "#: expected null, got object");
  EXPECT_EQ(err(S(R"({"type":"object"})"), "{}"), "");
  EXPECT_EQ(err(S(R"({"type":"object"})"), "[]"), "#: expected object, got array");
  EXPECT_EQ(err(S(R"({"type":"array"})"), "[]"), "");
  EXPECT_EQ(err(S(R"({"type":"array"})"), R"("[]")"), "#: expected array, got string");
  Schema list = S(R"({"type":["string","null"]})");
  EXPECT_EQ(err(list, "null"), "");
  EXPECT_EQ(err(list, R"("a")"), "");
  EXPECT_EQ(err(list, "1"), "#: expected string or null, got integer");
  Schema any = S("{}");
  for (const char* v : {"1", "null", "[1]", R"({"a":{}})", R"("s")"}) EXPECT_EQ(err(any, v), "") << v;
}

TEST(JsonSchema, BooleanSchemas) {
  EXPECT_EQ(err(S("true"), "[1]"), "");
  EXPECT_EQ(err(S("false"), "1"), "#: no value is allowed here (the schema is false)");
  Schema s = S(R"({"properties":{"a":false}})");
  EXPECT_EQ(err(s, R"({"b":1})"), "");
  EXPECT_EQ(err(s, R"({"a":1})"), "#/a: no value is allowed here (the schema is false)");
}

TEST(JsonSchema, PropertiesRequiredAndNesting) {
  Schema s = S(R"({"type":"object","properties":{
      "city":{"type":"string"},
      "where":{"type":"object","properties":{"lat":{"type":"number"}},"required":["lat"]}},
    "required":["city"]})");
  EXPECT_EQ(err(s, R"({"city":"Paris"})"), "");
  EXPECT_EQ(err(s, R"({"city":"Paris","extra":1})"), "");  // additional properties allowed by default
  EXPECT_EQ(err(s, "{}"), "#: missing required property 'city'");
  EXPECT_EQ(err(s, R"({"city":3})"), "#/city: expected string, got integer");
  EXPECT_EQ(err(s, R"({"city":"P","where":{}})"), "#/where: missing required property 'lat'");
  EXPECT_EQ(err(s, R"({"city":"P","where":{"lat":"x"}})"), "#/where/lat: expected number, got string");
  // properties/required are ignored for non-objects when no type is given.
  EXPECT_EQ(err(S(R"({"required":["a"]})"), "5"), "");
  // Keys that need JSON-pointer escaping.
  EXPECT_EQ(err(S(R"({"properties":{"a/b~":{"type":"string"}}})"), R"({"a/b~":1})"),
            "#/a~1b~0: expected string, got integer");
  EXPECT_TRUE(s.root().is_required("city"));
  ASSERT_NE(s.root().property("where"), nullptr);
  EXPECT_EQ(s.root().property("where")->types, kSchemaObject);
  EXPECT_EQ(s.root().property("nope"), nullptr);
  // One node alone: what validate() checks at its place.
  const SchemaNode& where = *s.root().property("where");
  EXPECT_TRUE(where.accepts(J(R"({"lat":1.5})")));
  EXPECT_FALSE(where.accepts(J("{}")));
  EXPECT_FALSE(where.accepts(J(R"({"lat":"x"})")));
  EXPECT_TRUE(s.root().property("city")->accepts(J(R"("Oslo")")));
  EXPECT_FALSE(s.root().property("city")->accepts(J("3")));
}

TEST(JsonSchema, AdditionalProperties) {
  Schema closed = S(R"({"properties":{"city":{},"days":{}},"additionalProperties":false})");
  EXPECT_EQ(err(closed, R"({"city":1,"days":2})"), "");
  EXPECT_EQ(err(closed, R"({"citty":1})"), "#/citty: unexpected property (allowed: city, days)");
  EXPECT_EQ(err(S(R"({"additionalProperties":false})"), R"({"x":1})"),
            "#/x: unexpected property (no properties are allowed)");
  Schema typed = S(R"({"properties":{"a":{}},"additionalProperties":{"type":"integer"}})");
  EXPECT_EQ(err(typed, R"({"a":"s","b":1,"c":2})"), "");
  EXPECT_EQ(err(typed, R"({"a":"s","b":"x"})"), "#/b: expected integer, got string");
  EXPECT_EQ(err(S(R"({"additionalProperties":true})"), R"({"q":[]})"), "");
}

TEST(JsonSchema, EnumAndConst) {
  Schema e = S(R"({"enum":["c","f",1,null,{"k":[1]}]})");
  for (const char* v : {R"("c")", R"("f")", "1", "1.0", "null", R"({"k":[1]})"}) EXPECT_EQ(err(e, v), "") << v;
  EXPECT_EQ(err(e, R"("kelvin")"), R"(#: "kelvin" is not one of ["c","f",1,null,{"k":[1]}])");
  EXPECT_NE(err(e, R"({"k":[2]})"), "");
  Schema c = S(R"({"const":"v1"})");
  EXPECT_EQ(err(c, R"("v1")"), "");
  EXPECT_EQ(err(c, R"("v2")"), R"(#: must be "v1")");
  EXPECT_EQ(err(S(R"({"const":{"a":1,"b":2}})"), R"({"b":2,"a":1})"), "");  // key order is irrelevant
}

TEST(JsonSchema, NumberBounds) {
  Schema s = S(R"({"minimum":1,"maximum":10})");
  EXPECT_EQ(err(s, "1"), "");
  EXPECT_EQ(err(s, "10"), "");
  EXPECT_EQ(err(s, "5.5"), "");
  EXPECT_EQ(err(s, "0"), "#: must be >= 1");
  EXPECT_EQ(err(s, "10.01"), "#: must be <= 10");
  EXPECT_EQ(err(s, R"("100")"), "");  // bounds only constrain numbers
  Schema x = S(R"({"exclusiveMinimum":0,"exclusiveMaximum":1.5})");
  EXPECT_EQ(err(x, "0.25"), "");
  EXPECT_EQ(err(x, "0"), "#: must be > 0");
  EXPECT_EQ(err(x, "1.5"), "#: must be < 1.5");
  // Large integers compare exactly.
  Schema big = S(R"({"maximum":9007199254740993})");
  EXPECT_EQ(err(big, "9007199254740993"), "");
  EXPECT_NE(err(big, "9007199254740994"), "");
}

TEST(JsonSchema, StringBoundsAndPattern) {
  Schema s = S(R"({"type":"string","minLength":2,"maxLength":3})");
  EXPECT_EQ(err(s, R"("ab")"), "");
  EXPECT_EQ(err(s, R"("\u00e9\u00e9\u00e9")"), "");  // code points, not bytes
  EXPECT_EQ(err(s, R"("a")"), "#: must be at least 2 characters long (got 1)");
  EXPECT_EQ(err(s, R"("abcd")"), "#: must be at most 3 characters long (got 4)");
  Schema p = S(R"({"pattern":"^[A-Z]{3}-\\d+$"})");
  EXPECT_EQ(err(p, R"("ABC-12")"), "");
  EXPECT_EQ(err(p, R"("abc-12")"), R"(#: does not match the pattern "^[A-Z]{3}-\\d+$")");
  EXPECT_EQ(err(S(R"({"pattern":"b"})"), R"("abc")"), "");  // unanchored search
  EXPECT_EQ(err(p, "7"), "");  // only strings
}

TEST(JsonSchema, ArraysAndItems) {
  Schema s = S(R"({"type":"array","items":{"type":"integer","minimum":0},"minItems":1,"maxItems":3})");
  EXPECT_EQ(err(s, "[0,1,2]"), "");
  EXPECT_EQ(err(s, "[]"), "#: must have at least 1 items (got 0)");
  EXPECT_EQ(err(s, "[1,2,3,4]"), "#: must have at most 3 items (got 4)");
  EXPECT_EQ(err(s, R"([1,2,"x"])"), "#/2: expected integer, got string");
  EXPECT_EQ(err(s, "[1,-1]"), "#/1: must be >= 0");
  Schema nested = S(R"({"items":{"type":"object","properties":{"n":{"type":"string"}}}})");
  EXPECT_EQ(err(nested, R"([{"n":"a"},{"n":2}])"), "#/1/n: expected string, got integer");
}

TEST(JsonSchema, AnyOf) {
  Schema s = S(R"({"anyOf":[{"type":"string","maxLength":2},{"type":"integer"},{"type":"null"}]})");
  EXPECT_EQ(err(s, R"("ab")"), "");
  EXPECT_EQ(err(s, "7"), "");
  EXPECT_EQ(err(s, "null"), "");
  EXPECT_EQ(err(s, R"("abc")"),
            "#: matches none of the anyOf alternatives: [0] #: must be at most 2 characters long (got 3); "
            "[1] #: expected integer, got string; [2] #: expected null, got string");
  EXPECT_NE(err(s, "1.5"), "");
}

TEST(JsonSchema, AnnotationsAreAccepted) {
  Schema s = S(R"({"title":"T","description":"D","default":3,"examples":[1,2],"type":"integer"})");
  EXPECT_EQ(*s.root().title, "T");
  EXPECT_EQ(*s.root().description, "D");
  EXPECT_EQ(*s.root().default_value, Json(3));
  EXPECT_EQ(s.root().examples->size(), 2u);
  EXPECT_EQ(err(s, "9"), "");
  EXPECT_EQ(s.json(), J(R"({"title":"T","description":"D","default":3,"examples":[1,2],"type":"integer"})"));
}

TEST(JsonSchema, GroundedHintIsADecodingHintOnly) {
  Schema s = S(R"({"type":"object","properties":{"id":{"type":"string","x-dloop-grounded":true},
                  "n":{"type":"integer","x-dloop-grounded":false},"q":{"type":"string"}}})");
  EXPECT_FALSE(s.root().grounded);
  EXPECT_TRUE(s.root().property("id")->grounded);
  EXPECT_FALSE(s.root().property("n")->grounded);
  EXPECT_FALSE(s.root().property("q")->grounded);
  // Not a validation keyword: any string is valid.
  EXPECT_EQ(err(s, R"({"id":"anything at all","n":3})"), "");
  EXPECT_EQ(err(s, R"({"id":7})"), "#/id: expected string, got integer");
  EXPECT_EQ(compile_err(R"({"properties":{"id":{"x-dloop-grounded":"yes"}}})"),
            "#/properties/id: 'x-dloop-grounded' must be a boolean");
  EXPECT_EQ(compile_err(R"({"x-dloop-other":true})"), "#: unsupported keyword 'x-dloop-other'");
}

TEST(JsonSchema, UnsupportedKeywordsNameThePath) {
  EXPECT_EQ(compile_err(R"({"type":"object","properties":{"city":{"type":"string","format":"date"}}})"),
            "#/properties/city: unsupported keyword 'format' (use pattern)");
  // Where pattern cannot be honoured either (tool-call decoding), the hint does not suggest it.
  auto no_pattern = Schema::compile(J(R"({"properties":{"d":{"format":"date"}}})"), /*pattern_supported=*/false);
  ASSERT_FALSE(no_pattern.ok());
  EXPECT_EQ(no_pattern.status().message(),
            "#/properties/d: unsupported keyword 'format' (nor is pattern: state the expected format in the description)");
  EXPECT_EQ(compile_err(R"({"$ref":"#/$defs/x"})"),
            "#: unsupported keyword '$ref' (references are not supported: write the schema inline)");
  EXPECT_EQ(compile_err(R"({"items":{"oneOf":[{}]}})"), "#/items: unsupported keyword 'oneOf' (use anyOf)");
  EXPECT_EQ(compile_err(R"({"anyOf":[{},{"allOf":[]}]})"),
            "#/anyOf/1: unsupported keyword 'allOf' (merge the schemas into one)");
  EXPECT_EQ(compile_err(R"({"additionalProperties":{"not":{}}})"),
            "#/additionalProperties: unsupported keyword 'not'");
  for (const char* kw : {"multipleOf", "uniqueItems", "patternProperties", "prefixItems", "contains",
                         "if", "then", "else", "dependentRequired", "propertyNames", "minProperties",
                         "$schema", "$id", "$defs", "definitions", "contentEncoding", "nullable"}) {
    std::string schema = std::string(R"({")") + kw + R"(":1})";
    std::string e = compile_err(schema);
    EXPECT_EQ(e.rfind(std::string("#: unsupported keyword '") + kw + "'", 0), 0u) << e;
  }
}

TEST(JsonSchema, MalformedKeywordValues) {
  EXPECT_EQ(compile_err(R"({"type":"str"})"),
            "#: unknown type 'str' (expected string, integer, number, boolean, object, array or null)");
  EXPECT_EQ(compile_err(R"({"type":[]})"), "#: 'type' must not be an empty array");
  EXPECT_EQ(compile_err(R"({"type":["string","string"]})"), "#: 'type' lists 'string' twice");
  EXPECT_EQ(compile_err(R"({"type":1})"), "#: 'type' must be a type name or an array of type names");
  EXPECT_EQ(compile_err(R"({"properties":[]})"), "#: 'properties' must be an object of schemas");
  EXPECT_EQ(compile_err(R"({"properties":{"a":1}})"), "#/properties/a: a schema must be an object or a boolean, got integer");
  EXPECT_EQ(compile_err(R"({"required":[1]})"), "#: 'required' must be an array of property names");
  EXPECT_EQ(compile_err(R"({"required":["a","a"]})"), "#: 'required' lists 'a' twice");
  EXPECT_EQ(compile_err(R"({"enum":[]})"), "#: 'enum' must be a non-empty array");
  EXPECT_EQ(compile_err(R"({"minimum":"1"})"), "#: 'minimum' must be a number");
  EXPECT_EQ(compile_err(R"({"exclusiveMinimum":true})"),
            "#: 'exclusiveMinimum' must be a number (the draft-04 boolean form is not supported)");
  EXPECT_EQ(compile_err(R"({"minLength":-1})"), "#: 'minLength' must be a non-negative integer");
  EXPECT_EQ(compile_err(R"({"maxItems":1.5})"), "#: 'maxItems' must be a non-negative integer");
  EXPECT_EQ(compile_err(R"({"maxItems":2.0})"), "");
  EXPECT_EQ(compile_err(R"({"minLength":3,"maxLength":2})"), "#: minLength 3 is greater than maxLength 2");
  EXPECT_EQ(compile_err(R"({"minItems":3,"maxItems":2})"), "#: minItems 3 is greater than maxItems 2");
  EXPECT_EQ(compile_err(R"({"minimum":3,"maximum":2.5})"), "#: minimum 3 is greater than maximum 2.5");
  EXPECT_EQ(compile_err(R"({"items":[{}]})"), "#: 'items' must be a schema (the array form for tuples is not supported)");
  EXPECT_EQ(compile_err(R"({"anyOf":{}})"), "#: 'anyOf' must be a non-empty array of schemas");
  EXPECT_EQ(compile_err(R"({"additionalProperties":1})"), "#: 'additionalProperties' must be a boolean or a schema");
  EXPECT_EQ(compile_err(R"({"description":1})"), "#: 'description' must be a string");
  EXPECT_EQ(compile_err(R"({"examples":1})"), "#: 'examples' must be an array");
  EXPECT_EQ(compile_err(R"({"pattern":"(a"})"), "#: invalid pattern '(a': missing ')' at offset 2");
  EXPECT_EQ(compile_err(R"({"pattern":"(a)\\1"})"),
            "#: invalid pattern '(a)\\1': back references are not supported at offset 5");
  EXPECT_EQ(compile_err("[]"), "#: a schema must be an object or a boolean, got array");
  std::string deep = "{}";
  for (int i = 0; i < 100; ++i) deep = R"({"items":)" + deep + "}";
  EXPECT_NE(compile_err(deep).find("schema nests too deeply"), std::string::npos);
}

TEST(JsonSchema, ValidateAllCollectsEveryProblem) {
  Schema s = S(R"({"type":"object","properties":{"a":{"type":"string"},"b":{"type":"array","items":{"type":"integer"}},"c":{}},
                  "required":["a","c"],"additionalProperties":false})");
  auto errors = s.validate_all(J(R"({"a":1,"b":[1,"x",2.5],"d":true})"));
  std::vector<std::string> got;
  for (const auto& e : errors) got.push_back(e.to_string());
  EXPECT_EQ(got, (std::vector<std::string>{
                     "#: missing required property 'c'", "#/a: expected string, got integer",
                     "#/b/1: expected integer, got string", "#/b/2: expected integer, got number",
                     "#/d: unexpected property (allowed: a, b, c)"}));
  EXPECT_EQ(s.validate_all(J(R"({"a":1,"b":[1,"x",2.5],"d":true})"), 2).size(), 2u);
  EXPECT_TRUE(s.validate_all(J(R"({"a":"x","c":0})")).empty());
  EXPECT_EQ(s.validate(J(R"({"a":1})")).code(), Code::kInvalidArgument);
}

// --- pattern engine -------------------------------------------------------------------------

bool search(std::string_view pattern, std::string_view text) {
  auto p = compile_schema_pattern(pattern);
  EXPECT_TRUE(p.ok()) << pattern << ": " << p.status().to_string();
  return p.ok() && schema_pattern_search(**p, text);
}

std::string pattern_err(std::string_view pattern) {
  auto p = compile_schema_pattern(pattern);
  return p.ok() ? "" : p.status().message();
}

TEST(SchemaPattern, Syntax) {
  EXPECT_TRUE(search("^abc$", "abc"));
  EXPECT_FALSE(search("^abc$", "abcd"));
  EXPECT_TRUE(search("bc", "abcd"));
  EXPECT_TRUE(search("^a.c$", "a\xc3\xa9" "c"));  // . is one code point
  EXPECT_FALSE(search("^a.c$", "a\nc"));
  EXPECT_TRUE(search("^[a-c]+[^a-c]$", "abcz"));
  EXPECT_FALSE(search("^[a-c]+[^a-c]$", "abca"));
  EXPECT_TRUE(search("^[\\d.-]+$", "-3.14"));
  EXPECT_TRUE(search("^\\w+\\s\\W$", "ab_9 !"));
  EXPECT_TRUE(search("^(?:ab|cd){2}$", "abcd"));
  EXPECT_FALSE(search("^(?:ab|cd){2}$", "ab"));
  EXPECT_TRUE(search("^a{2,}$", "aaaa"));
  EXPECT_FALSE(search("^a{2,3}$", "aaaa"));
  EXPECT_TRUE(search("^a{2,3}?$", "aaa"));
  EXPECT_TRUE(search("^(?<year>\\d{4})-\\d\\d$", "2024-05"));
  EXPECT_TRUE(search("^\\u00e9\\x41\\.\\/$", "\xc3\xa9" "A./"));
  EXPECT_TRUE(search("^[\\u4e00-\\u9fff]+$", "\xe4\xb8\xad\xe6\x96\x87"));
  EXPECT_TRUE(search("", "anything"));
  EXPECT_TRUE(search("^$", ""));
  EXPECT_TRUE(search("^(a|)+$", "aaa"));  // empty loops terminate
  EXPECT_TRUE(search("x*", ""));
  EXPECT_TRUE(search("a]}", "a]}"));
}

TEST(SchemaPattern, LinearTimeOnLongInput) {
  std::string text(1'000'000, 'a');
  EXPECT_TRUE(search("^[a-z]+$", text));
  EXPECT_TRUE(search("^(a|b)*$", text));
  EXPECT_FALSE(search("^(a|aa)*b$", std::string(20000, 'a')));  // catastrophic for backtrackers
}

TEST(SchemaPattern, Unsupported) {
  EXPECT_EQ(pattern_err("(a)\\1"), "back references are not supported at offset 5");
  EXPECT_EQ(pattern_err("a(?=b)"), "lookaround and inline flags are not supported at offset 3");
  EXPECT_EQ(pattern_err("\\bword"), "word boundary assertions (\\b) are not supported at offset 2");
  EXPECT_EQ(pattern_err("\\p{L}"), "Unicode property escapes are not supported at offset 2");
  EXPECT_EQ(pattern_err("*a"), "nothing to repeat at offset 0");
  EXPECT_EQ(pattern_err("a**"), "nothing to repeat at offset 2");
  EXPECT_EQ(pattern_err("[b-a]"), "class range out of order at offset 4");
  EXPECT_EQ(pattern_err("a{3,2}"), "quantifier range out of order at offset 6");
  EXPECT_EQ(pattern_err("ab)"), "unmatched ')' at offset 2");
  EXPECT_EQ(pattern_err("[ab"), "missing ']' at offset 3");
  EXPECT_EQ(pattern_err("\\q"), "unknown escape '\\q' at offset 2");
  EXPECT_EQ(pattern_err("(a{1000}){1000}"), "pattern is too large once repetition is expanded");
}

// Random ASCII patterns from a grammar both engines share, compared with std::regex_search.
std::string random_pattern(std::mt19937& rng, int depth) {
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  std::string out;
  int atoms = 1 + pick(3);
  for (int i = 0; i < atoms; ++i) {
    std::string atom;
    switch (depth > 2 ? pick(6) : pick(8)) {
      case 0: case 1: atom = std::string(1, "ab1 _"[pick(5)]); break;
      case 2: atom = "."; break;
      case 3: atom = std::vector<std::string>{"[ab]", "[^a]", "[a-c1]", "\\d", "\\w", "\\s", "[_\\d]"}[pick(7)]; break;
      case 4: atom = pick(2) ? "^" : "$"; break;
      case 5: atom = "\\."; break;
      case 6: atom = "(" + random_pattern(rng, depth + 1) + ")"; break;
      default: atom = "(?:" + random_pattern(rng, depth + 1) + "|" + random_pattern(rng, depth + 1) + ")"; break;
    }
    if (atom[0] == '(') {
      // Only bounded repetition of groups: std::regex backtracks exponentially on nested stars.
      static const char* quants[] = {"", "", "?", "{2}", "{1,2}"};
      atom += quants[pick(5)];
    } else if (atom != "^" && atom != "$") {
      static const char* quants[] = {"", "", "", "*", "+", "?", "{2}", "{1,2}", "{0,}", "*?"};
      atom += quants[pick(10)];
    }
    out += atom;
  }
  return out;
}

TEST(SchemaPattern, RandomizedAgainstStdRegex) {
  std::mt19937 rng(12345);
  int checked = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string pattern = random_pattern(rng, 0);
    auto mine = compile_schema_pattern(pattern);
    ASSERT_TRUE(mine.ok()) << pattern << ": " << mine.status().to_string();
    std::regex theirs(pattern, std::regex::ECMAScript);
    for (int k = 0; k < 8; ++k) {
      std::string text;
      int len = static_cast<int>(rng() % 7);
      for (int i = 0; i < len; ++i) text += "ab1 _.\n"[rng() % 7];
      ASSERT_EQ(schema_pattern_search(**mine, text), std::regex_search(text, theirs))
          << "pattern " << pattern << " text " << json_quote(text);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 24000);
}

// --- randomized schemas against an independent reference validator ---------------------------

class RandomSchemas {
 public:
  explicit RandomSchemas(uint32_t seed) : rng_(seed) {}
  int pick(int n) { return static_cast<int>(rng_() % n); }
  bool chance(int percent) { return pick(100) < percent; }

  Json scalar() {
    switch (pick(7)) {
      case 0: return Json(pick(11) - 5);
      case 1: return Json((pick(11) - 5) * 0.5);
      case 2: return Json(std::string("ab\xc3\xa9" "1").substr(0, pick(6)));
      case 3: return Json(std::string(pick(4), "ab"[pick(2)]));
      case 4: return Json(chance(50));
      case 5: return Json();
      default: return Json(pick(3));
    }
  }

  Json schema(int depth) {
    if (chance(4)) return Json(chance(70));
    Json s = Json::object();
    static const char* types[] = {"string", "integer", "number", "boolean", "object", "array", "null"};
    int kind = depth >= 3 ? pick(4) : pick(7);
    if (kind == 4 && chance(40)) {
      Json list = Json::array();
      list.push_back(types[pick(4)]);
      list.push_back("null");
      s.set("type", list);
    } else if (chance(85)) {
      s.set("type", types[kind == 4 ? pick(7) : kind]);
    }
    const Json* t = s.find("type");
    std::string type = t && t->is_string() ? t->as_string() : "";
    if (chance(10)) s.set("enum", Json::array({scalar(), scalar(), scalar()}));
    if (chance(5)) s.set("const", scalar());
    if (type == "integer" || type == "number" || type.empty()) {
      if (chance(30)) s.set("minimum", Json(pick(5) - 3));
      if (chance(30)) s.set("maximum", Json(pick(5) + 1.5));
      if (chance(15)) s.set("exclusiveMinimum", Json(pick(3) - 2));
      if (chance(15)) s.set("exclusiveMaximum", Json(pick(3) + 2));
    }
    if (type == "string" || type.empty()) {
      if (chance(30)) s.set("minLength", Json(pick(3)));
      if (chance(30)) s.set("maxLength", Json(pick(3) + 2));
      static const char* patterns[] = {"^a", "b$", "^[ab]+$", "1", "^a*b?$", "(ab|1)"};
      if (chance(25)) s.set("pattern", patterns[pick(6)]);
    }
    if (type == "array" || (type.empty() && depth < 3 && chance(20))) {
      if (chance(70)) s.set("items", schema(depth + 1));
      if (chance(30)) s.set("minItems", Json(pick(2)));
      if (chance(30)) s.set("maxItems", Json(pick(3) + 1));
    }
    if (type == "object" || (type.empty() && depth < 3 && chance(20))) {
      Json props = Json::object();
      Json required = Json::array();
      for (const char* key : {"a", "b", "c"}) {
        if (chance(50)) props.set(key, schema(depth + 1));
        if (chance(25)) required.push_back(key);
      }
      s.set("properties", props);
      if (required.size() > 0) s.set("required", required);
      if (chance(30)) s.set("additionalProperties", chance(50) ? Json(false) : schema(depth + 1));
    }
    if (depth < 3 && chance(10)) s.set("anyOf", Json::array({schema(depth + 1), schema(depth + 1)}));
    if (chance(10)) s.set("description", "d");
    return s;
  }

  Json value(const Json& schema, int depth) {
    // Mostly follow the schema (so that many values are valid), sometimes anything.
    const Json* t = schema.is_object() ? schema.find("type") : nullptr;
    std::string type = t && t->is_string() ? t->as_string() : t && t->is_array() ? "" : "";
    if (schema.is_object() && schema.find("enum") && chance(70)) {
      const auto& e = schema.find("enum")->as_array();
      return e[pick(static_cast<int>(e.size()))];
    }
    if (depth > 4 || chance(20)) return scalar();
    if (type == "object" || (type.empty() && chance(30))) {
      Json o = Json::object();
      for (const char* key : {"a", "b", "c", "d"}) {
        if (!chance(55)) continue;
        const Json* props = schema.is_object() ? schema.find("properties") : nullptr;
        const Json* sub = props ? props->find(key) : nullptr;
        o.set(key, value(sub ? *sub : Json::object(), depth + 1));
      }
      return o;
    }
    if (type == "array" || (type.empty() && chance(30))) {
      Json a = Json::array();
      const Json* items = schema.is_object() ? schema.find("items") : nullptr;
      int n = pick(4);
      for (int i = 0; i < n; ++i) a.push_back(value(items ? *items : Json::object(), depth + 1));
      return a;
    }
    return scalar();
  }

 private:
  std::mt19937 rng_;
};

// Written straight from the JSON Schema text, over the raw Json, sharing no code with Schema.
bool ref_valid(const Json& s, const Json& v) {
  if (s.is_bool()) return s.as_bool();
  auto type_ok = [&](const std::string& t) {
    if (t == "string") return v.is_string();
    if (t == "integer") return v.is_int() || (v.is_double() && v.as_double() == static_cast<double>(static_cast<long long>(v.as_double())));
    if (t == "number") return v.is_number();
    if (t == "boolean") return v.is_bool();
    if (t == "object") return v.is_object();
    if (t == "array") return v.is_array();
    return v.is_null();
  };
  if (const Json* t = s.find("type")) {
    bool any = false;
    if (t->is_string()) any = type_ok(t->as_string());
    else for (const Json& x : t->as_array()) any = any || type_ok(x.as_string());
    if (!any) return false;
  }
  if (const Json* c = s.find("const"); c && !(*c == v)) return false;
  if (const Json* e = s.find("enum")) {
    bool found = false;
    for (const Json& x : e->as_array()) found = found || x == v;
    if (!found) return false;
  }
  if (v.is_number()) {
    double d = v.as_double();
    if (const Json* m = s.find("minimum"); m && d < m->as_double()) return false;
    if (const Json* m = s.find("maximum"); m && d > m->as_double()) return false;
    if (const Json* m = s.find("exclusiveMinimum"); m && d <= m->as_double()) return false;
    if (const Json* m = s.find("exclusiveMaximum"); m && d >= m->as_double()) return false;
  }
  if (v.is_string()) {
    std::u32string wide;
    for (size_t i = 0; i < v.as_string().size();) {  // decode just enough to count
      unsigned char c = static_cast<unsigned char>(v.as_string()[i]);
      i += c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
      wide.push_back(U'x');
    }
    if (const Json* m = s.find("minLength"); m && static_cast<int64_t>(wide.size()) < m->as_int()) return false;
    if (const Json* m = s.find("maxLength"); m && static_cast<int64_t>(wide.size()) > m->as_int()) return false;
    if (const Json* p = s.find("pattern"); p && !std::regex_search(v.as_string(), std::regex(p->as_string()))) return false;
  }
  if (v.is_array()) {
    if (const Json* m = s.find("minItems"); m && static_cast<int64_t>(v.size()) < m->as_int()) return false;
    if (const Json* m = s.find("maxItems"); m && static_cast<int64_t>(v.size()) > m->as_int()) return false;
    if (const Json* items = s.find("items")) {
      for (const Json& x : v.as_array()) if (!ref_valid(*items, x)) return false;
    }
  }
  if (v.is_object()) {
    if (const Json* r = s.find("required")) {
      for (const Json& k : r->as_array()) if (!v.find(k.as_string())) return false;
    }
    const Json* props = s.find("properties");
    const Json* extra = s.find("additionalProperties");
    for (const auto& [k, x] : v.as_object()) {
      const Json* sub = props ? props->find(k) : nullptr;
      if (sub) { if (!ref_valid(*sub, x)) return false; }
      else if (extra && !ref_valid(*extra, x)) return false;
    }
  }
  if (const Json* any = s.find("anyOf")) {
    bool one = false;
    for (const Json& b : any->as_array()) one = one || ref_valid(b, v);
    if (!one) return false;
  }
  return true;
}

TEST(JsonSchema, RandomizedAgainstReferenceValidator) {
  RandomSchemas gen(2024);
  int valid = 0, invalid = 0;
  for (int iter = 0; iter < 4000; ++iter) {
    Json schema_json = gen.schema(0);
    auto schema = Schema::compile(schema_json);
    ASSERT_TRUE(schema.ok()) << schema_json.dump() << ": " << schema.status().to_string();
    for (int k = 0; k < 10; ++k) {
      Json v = gen.value(schema_json, 0);
      bool expected = ref_valid(schema_json, v);
      Status st = schema->validate(v);
      ASSERT_EQ(st.ok(), expected) << "schema " << schema_json.dump() << "\nvalue " << v.dump() << "\n"
                                   << st.to_string();
      ASSERT_EQ(schema->validate_all(v).empty(), expected);
      if (!st.ok()) {
        EXPECT_EQ(st.message().rfind("#", 0), 0u) << st.message();  // names a JSON pointer
        EXPECT_EQ(st.message(), schema->validate_all(v)[0].to_string());
      }
      (expected ? valid : invalid)++;
    }
  }
  // Both outcomes are well represented, so the comparison means something.
  EXPECT_GT(valid, 8000);
  EXPECT_GT(invalid, 8000);
}

}  // namespace
}  // namespace dloop::base
