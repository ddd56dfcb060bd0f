// Member order (member_order.h): where a parameter name is first mentioned, which messages are
// read, and the order the decoder lays a mention-ordered model's call out in. The expected orders
// are what models/recipe/train.py (mention_order, mention_text) gives for the same inputs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "member_order.h"

namespace dloop::engine::toolcall {
namespace {

using Keys = std::vector<std::string>;

TEST(MemberOrder, FirstMentionFoldsCaseUnderscoresAndHyphens) {
  EXPECT_EQ(first_mention("Set Dry-Run: yes", "dry_run"), 4u);
  EXPECT_EQ(first_mention("the order id is 7", "order_id"), 4u);
  EXPECT_EQ(first_mention("ORDER_ID 7", "order-id"), 0u);
  EXPECT_EQ(first_mention("date = 2030-02-10", "date"), 0u);
  EXPECT_EQ(first_mention("no such name", "city"), kNotMentioned);
  EXPECT_EQ(first_mention("anything", "_"), kNotMentioned);  // a name of separators only
  EXPECT_EQ(first_mention("anything", ""), kNotMentioned);
}

TEST(MemberOrder, AMentionIsAWholeWord) {
  EXPECT_EQ(first_mention("a video, then the id", "id"), 18u);  // not inside "video"
  EXPECT_EQ(first_mention("cities, then city Lyon", "city"), 13u);
  EXPECT_EQ(first_mention("city2 x, city: y", "city"), 9u);   // digits continue a word
  EXPECT_EQ(first_mention("(city)", "city"), 1u);
  EXPECT_EQ(first_mention("\"city\": \"Lyon\"", "city"), 1u);  // a key in a tool result
  EXPECT_EQ(first_mention("caf\xc3\xa9 city", "city"), 6u);    // offsets are bytes
}

TEST(MemberOrder, AllMentionsInOrder) {
  EXPECT_EQ(all_mentions("City Lyon, then city: Oslo, cities", "city"), (std::vector<size_t>{0, 16}));
  EXPECT_TRUE(all_mentions("no such name", "city").empty());
  EXPECT_TRUE(all_mentions("anything", "_").empty());
}

TEST(MemberOrder, TextIsTheLastUserMessageAndLaterToolResults) {
  const std::vector<ChatMessage> m = {{"system", "city date"},
                                      {"user", "first request, priority high"},
                                      {"assistant", "<tool_call>{\"name\": \"a\"}</tool_call>"},
                                      {"tool", "{\"old\": 1}"},
                                      {"user", "now book date 5"},
                                      {"assistant", "<tool_call>{\"name\": \"b\", \"city\": 1}</tool_call>"},
                                      {"tool", "{\"order_id\": \"X-1\"}"}};
  EXPECT_EQ(mention_text(m), "now book date 5\n{\"order_id\": \"X-1\"}");
  EXPECT_EQ(mention_text({{"tool", "a"}, {"tool", "b"}}), "a\nb");  // no user message: from the start
  EXPECT_EQ(mention_text({}), "");
}

TEST(MemberOrder, KeysSortByFirstMentionUnmentionedLastInSchemaOrder) {
  const std::string text = "fetch door lock date = 2030-02-10 and dry run: yes";
  EXPECT_EQ(mention_order(Keys{"dry_run", "date", "note"}, text), (Keys{"date", "dry_run", "note"}));
  EXPECT_EQ(mention_order(Keys{"x", "dry_run", "y", "date"}, text), (Keys{"date", "dry_run", "x", "y"}));
  // Same offset ("dry" is a word of "dry run"): the schema's order decides.
  EXPECT_EQ(mention_order(Keys{"dry_run", "dry"}, "dry run on"), (Keys{"dry_run", "dry"}));
  EXPECT_EQ(mention_order(Keys{"dry", "dry_run"}, "dry run on"), (Keys{"dry", "dry_run"}));
  EXPECT_EQ(mention_order(Keys{}, text), Keys{});
}

TEST(MemberOrder, OrderedSchemaMovesOnlyTopLevelProperties) {
  auto schema = base::Json::parse(R"({"type": "object", "properties": {
      "a": {"type": "string"}, "b": {"type": "object", "properties": {"z": {"type": "integer"}, "y": {"type": "integer"}}},
      "c": {"type": "integer"}}, "required": ["a", "c"]})");
  ASSERT_TRUE(schema.ok());
  const base::Json out = mention_ordered_schema(*schema, "set c to 1, y 2 and z 3, then b");
  EXPECT_EQ(out.dump(),
            R"({"type":"object","properties":{"c":{"type":"integer"},"b":{"type":"object","properties":{"z":{"type":"integer"},"y":{"type":"integer"}}},"a":{"type":"string"}},"required":["a","c"]})");
  // No mention: the schema as it was.
  EXPECT_EQ(mention_ordered_schema(*schema, "nothing here"), *schema);
  EXPECT_EQ(mention_ordered_schema(base::Json::object(), "a b"), base::Json::object());
}

}  // namespace
}  // namespace dloop::engine::toolcall
