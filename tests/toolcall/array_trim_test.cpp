// Array overruns and gaps (array_trim.h): an array of copies of the conversation is cut before the
// first item that is not one, or that repeats an item more often than the conversation does; a
// list of copies that skipped units of the conversation's list gets them back.
#include <gtest/gtest.h>

#include <string>

#include "array_trim.h"

namespace dloop::engine::toolcall {
namespace {

using Step = size_t (*)(base::Json&, const base::SchemaNode&, std::string_view);

// `args` after `step` with `schema` over `text`, compact JSON; *count: what it returned.
std::string applied(Step step, const std::string& schema_text, const std::string& args, const std::string& text,
                    size_t* count) {
  auto schema = base::Schema::compile(*base::Json::parse(schema_text));
  EXPECT_TRUE(schema.ok()) << schema.status().message();
  base::Json v = *base::Json::parse(args);
  const size_t n = step(v, schema->root(), text);
  if (count) *count = n;
  return v.dump();
}

std::string trimmed(const std::string& schema_text, const std::string& args, const std::string& text,
                    size_t* dropped = nullptr) {
  return applied(trim_array_overruns, schema_text, args, text, dropped);
}

std::string filled(const std::string& schema_text, const std::string& args, const std::string& text,
                   size_t* added = nullptr) {
  return applied(fill_array_gaps, schema_text, args, text, added);
}

constexpr const char* kTags = R"({"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}})";
constexpr const char* kNums = R"({"type": "object", "properties": {"items": {"type": "array", "items": {"type": "integer"}}}})";

TEST(ArrayTrim, CutsBeforeTheFirstItemTheConversationDoesNotHold) {
  size_t dropped = 0;
  EXPECT_EQ(trimmed(kTags, R"({"tags": ["socket", "shared", "morning", "arguments", "}}{"]})",
                    "accept my license tags: socket, shared and morning.", &dropped),
            R"({"tags":["socket","shared","morning"]})");
  EXPECT_EQ(dropped, 2u);
  // A whole unit only: "mus" inside "music" is not a copy.
  EXPECT_EQ(trimmed(kTags, R"({"tags": ["weekly", "mus"]})", "attendees weekly, vector and music."),
            R"({"tags":["weekly"]})");
}

TEST(ArrayTrim, CutsRepeatsBeyondTheConversationsCount) {
  EXPECT_EQ(trimmed(kNums, R"({"items": [31, 31, 31, 21]})", "send my review with items: 31, then stop"),
            R"({"items":[31]})");
  EXPECT_EQ(trimmed(kNums, R"({"items": [10, 41, 41, 4]})", "attendees 10 and 41"), R"({"items":[10,41]})");
  // Said twice, kept twice.
  EXPECT_EQ(trimmed(kTags, R"({"tags": ["red", "red", "blue"]})", "tags red, red and green"), R"({"tags":["red","red"]})");
}

TEST(ArrayTrim, LeavesComposedListsAndCompleteListsAlone) {
  size_t dropped = 1;
  // The first item is not a copy: a list the model wrote itself.
  EXPECT_EQ(trimmed(kTags, R"({"tags": ["outdoor", "red"]})", "tags for a red bike", &dropped),
            R"({"tags":["outdoor","red"]})");
  EXPECT_EQ(dropped, 0u);
  EXPECT_EQ(trimmed(kTags, R"({"tags": ["galaxy", "red", "daisy"]})", "attendees: galaxy, red and daisy"),
            R"({"tags":["galaxy","red","daisy"]})");
  EXPECT_EQ(trimmed(kTags, R"({"tags": []})", "nothing"), R"({"tags":[]})");
}

TEST(ArrayTrim, KeepsMinItemsAndWalksNestedObjects) {
  const char* min2 = R"({"type": "object", "properties": {"tags": {"type": "array", "minItems": 2, "items": {"type": "string"}}}})";
  EXPECT_EQ(trimmed(min2, R"({"tags": ["red", "junk", "more"]})", "tags red"), R"({"tags":["red","junk"]})");
  const char* nested = R"({"type": "object", "properties": {"dimensions": {"type": "object", "properties":
      {"keywords": {"type": "array", "items": {"type": "string"}}}}}})";
  EXPECT_EQ(trimmed(nested, R"({"dimensions": {"keywords": ["red", "soup", " }}{"]}})", "keywords red and soup"),
            R"({"dimensions":{"keywords":["red","soup"]}})");
  // Arrays of objects: each object's arrays are trimmed, the outer array is not a list of copies.
  const char* objs = R"({"type": "array", "items": {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}}})";
  EXPECT_EQ(trimmed(objs, R"([{"tags": ["red", "x"]}, {"tags": ["blue"]}])", "red and blue"),
            R"([{"tags":["red"]},{"tags":["blue"]}])");
  // A property the schema does not declare is left alone.
  EXPECT_EQ(trimmed(kTags, R"({"other": ["red", "x"]})", "red"), R"({"other":["red","x"]})");
}

TEST(ArrayGaps, FillsTheUnitsACopiedListSkippedOrStoppedShortOf) {
  size_t added = 0;
  EXPECT_EQ(filled(kTags, R"({"tags": ["piano", "red"]})", "set my alarm with tags piano, secret and red.", &added),
            R"({"tags":["piano","secret","red"]})");
  EXPECT_EQ(added, 1u);
  EXPECT_EQ(filled(kTags, R"({"tags": ["a1", "d4"]})", "labels a1, b2, c3, and d4, then go", &added),
            R"({"tags":["a1","b2","c3","d4"]})");
  EXPECT_EQ(added, 2u);
  EXPECT_EQ(filled(kNums, R"({"items": [31, 8]})", "with items 31, 21 or 8"), R"({"items":[31,21,8]})");
  // A list the copy stopped short of gets its end: the unit after " and " / " or ".
  EXPECT_EQ(filled(kTags, R"({"tags": ["piano"]})", "tags piano, secret and red and with time 5", &added),
            R"({"tags":["piano","secret","red"]})");
  EXPECT_EQ(added, 2u);
  EXPECT_EQ(filled(kTags, R"({"tags": ["piano", "secret"]})", "tags: piano and secret, city Oslo"),
            R"({"tags":["piano","secret"]})");
  // Without that join where the list ends is not known ("city" starts the next phrase): only gaps.
  EXPECT_EQ(filled(kTags, R"({"tags": ["a1"]})", "labels a1, b2, city Oslo"), R"({"tags":["a1"]})");
  EXPECT_EQ(filled(kTags, R"({"tags": ["a1", "b2"]})", "labels a1, b2, city Oslo"), R"({"tags":["a1","b2"]})");
  EXPECT_EQ(filled(kTags, R"({"tags": ["a1", "c3"]})", "labels a1, b2, c3, city Oslo"), R"({"tags":["a1","b2","c3"]})");
  // " and " followed by no unit does not end a list.
  EXPECT_EQ(filled(kTags, R"({"tags": ["a1"]})", "labels a1, b2 and 'x'"), R"({"tags":["a1"]})");
  // A list already whole is left as it is.
  EXPECT_EQ(filled(kTags, R"({"tags": ["piano", "secret", "red"]})", "tags piano, secret and red", &added),
            R"({"tags":["piano","secret","red"]})");
  EXPECT_EQ(added, 0u);
}

TEST(ArrayGaps, LeavesAloneWhatIsNotOneListOfUnits) {
  // Items in another order than the conversation's list, or not starting it at the first item.
  EXPECT_EQ(filled(kTags, R"({"tags": ["red", "piano"]})", "tags piano, secret and red"), R"({"tags":["red","piano"]})");
  // An item that is not a copy, or one that is not a whole unit.
  EXPECT_EQ(filled(kTags, R"({"tags": ["piano", "blue"]})", "tags piano, secret and red"), R"({"tags":["piano","blue"]})");
  EXPECT_EQ(filled(kTags, R"({"tags": ["pian", "red"]})", "tags piano, x and red"), R"({"tags":["pian","red"]})");
  // Items joined by words that do not make a list ("piano with secret").
  EXPECT_EQ(filled(kTags, R"({"tags": ["piano", "red"]})", "tags piano with secret and red"),
            R"({"tags":["piano","red"]})");
  // Two lists that disagree on what was skipped.
  EXPECT_EQ(filled(kTags, R"({"tags": ["a", "c"]})", "first a, b and c; then a, x and c"), R"({"tags":["a","c"]})");
  // Two lists that agree.
  EXPECT_EQ(filled(kTags, R"({"tags": ["a", "c"]})", "first a, b and c; again a, b and c"), R"({"tags":["a","b","c"]})");
  // maxItems, and a skipped unit of a number list that is not a number.
  EXPECT_EQ(filled(R"({"type": "array", "maxItems": 2, "items": {"type": "string"}})", R"(["a", "c"])", "a, b and c"),
            R"(["a","c"])");
  EXPECT_EQ(filled(kNums, R"({"items": [31, 8]})", "items 31, twenty and 8"), R"({"items":[31,8]})");
  // Items in a nested object's array are filled too.
  EXPECT_EQ(filled(R"({"type": "array", "items": {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}}})",
                   R"([{"tags": ["a", "c"]}])", "tags a, b and c"),
            R"([{"tags":["a","b","c"]}])");
}

}  // namespace
}  // namespace dloop::engine::toolcall
