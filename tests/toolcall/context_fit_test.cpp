// The infilling decoder near the end of the model's context: another array item or an optional
// member that cannot fit is not offered, so the call closes instead of failing with a context
// error at the next pass (the test model's context is 256 tokens). A scripted forwarder that
// always wants more (`,` far above `]`, every optional member) stands in for the model.
#include <gtest/gtest.h>

#include "dloop/base/json.h"
#include "scripted_infill.h"

namespace dloop::engine::toolcall {
namespace {

using base::Json;
using test::Fixture;
using test::Script;

constexpr const char* kColors = R"({"type": "object", "properties": {"colors": {"type": "array",
    "items": {"type": "string", "enum": ["red", "blue"]}}}, "required": ["colors"]})";

// A user message of `words` filler words.
std::string filler(int words) {
  std::string s = "Pick colors.";
  for (int i = 0; i < words; ++i) s += " word";
  return s;
}

// `,` (another item) and the quote (an optional member's key) always far above the rest.
Script always_more(const Fixture& f) {
  const int32_t comma = f.id(","), quote = f.id("\"");
  return [=](std::span<const int32_t>, int64_t, int64_t, int) -> std::map<int32_t, float> {
    return {{comma, 20.0f}, {quote, 12.0f}};
  };
}

size_t prompt_tokens(const Fixture& f, const std::string& user) {
  return f.tok->encode("<|im_start|>user\n" + user + "<|im_end|>\n<|im_start|>assistant\n", true).size();
}

TEST(ContextFit, AnArrayClosesWhenTheNextItemCannotFit) {
  Fixture f;
  ASSERT_EQ(f.model->config().n_ctx, 256);
  const Script s = always_more(f);
  size_t last = 9;
  bool cut = false;
  for (int words = 0; words <= 256; words += 2) {
    const std::string user = filler(words);
    if (prompt_tokens(f, user) + 20 > 256) break;  // no room for the call
    SCOPED_TRACE("prompt of " + std::to_string(prompt_tokens(f, user)) + " tokens");
    const std::string out = f.decode(kColors, s, 0.9, nullptr, user);
    ASSERT_FALSE(out.empty());
    auto v = Json::parse(out);
    ASSERT_TRUE(v.ok()) << out;
    const size_t items = v->find("colors")->as_array().size();
    if (words == 0) {
      EXPECT_EQ(items, 8u) << out;  // the decoder's cap without maxItems: the model wants more
    }
    EXPECT_LE(items, last) << out;                // a longer prompt leaves room for no more items
    cut = cut || (items > 0 && items < 8);
    last = items;
  }
  EXPECT_TRUE(cut) << "no prompt cut the array to fewer items";
  EXPECT_EQ(last, 0u) << "the longest prompt leaves room for no item";
}

TEST(ContextFit, AnOptionalMemberThatCannotFitIsLeftOut) {
  Fixture f;
  f.string_budget = 24;
  const char* schema = R"({"type": "object", "properties": {"note": {"type": "string"}}})";
  const Script s = always_more(f);
  // Short prompt: the model's choice (the member) is kept.
  const std::string short_out = f.decode(schema, s, 0.9, nullptr, "Note it.");
  EXPECT_NE(short_out.find("\"note\""), std::string::npos) << short_out;
  // A prompt that leaves less than the member's 24-token slot: the object closes empty.
  int words = 0;
  while (prompt_tokens(f, filler(words + 1)) + 24 < 256) ++words;
  const std::string user = filler(words);
  ASSERT_GT(prompt_tokens(f, user) + 16, 256u - 24u);
  EXPECT_EQ(f.decode(schema, s, 0.9, nullptr, user), "{}");
}

}  // namespace
}  // namespace dloop::engine::toolcall
