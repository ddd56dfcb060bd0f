// Array overruns (array_trim.h): an array of copies of the conversation is cut before the first
// item that is not one, or that repeats an item more often than the conversation does.
#include <gtest/gtest.h>

#include <string>

#include "array_trim.h"

namespace dloop::engine::toolcall {
namespace {

// `args` after trim_array_overruns with `schema` over `text`, compact JSON; *dropped: its count.
std::string trimmed(const std::string& schema_text, const std::string& args, const std::string& text,
                    size_t* dropped = nullptr) {
  auto schema = base::Schema::compile(*base::Json::parse(schema_text));
  EXPECT_TRUE(schema.ok()) << schema.status().message();
  base::Json v = *base::Json::parse(args);
  const size_t n = trim_array_overruns(v, schema->root(), text);
  if (dropped) *dropped = n;
  return v.dump();
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

TEST(ArrayTrim, WholeOccurrences) {
  EXPECT_EQ(whole_occurrences("red, red and redder", "red"), 2u);
  EXPECT_EQ(whole_occurrences("rating 431.3", "431"), 0u);
  EXPECT_EQ(whole_occurrences("rating 431.3", "431.3"), 1u);
  EXPECT_EQ(whole_occurrences("x", ""), 0u);
}

}  // namespace
}  // namespace dloop::engine::toolcall
