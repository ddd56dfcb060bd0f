// Slot automata and their feasibility dynamic program (engine/toolcall/slot_automaton.h), on the
// byte-level vocabulary of the random-weight llada test model.
#include <gtest/gtest.h>

#include "dloop/engine/engine.h"
#include "infiller.h"
#include "slot_automaton.h"

namespace dloop::engine::toolcall {
namespace {

const std::string kModel = std::string(DLOOP_SOURCE_DIR) + "/tests/data/models/llada-f32.gguf";

struct Vocab {
  std::unique_ptr<Engine> engine;
  VocabInfo info;
  int32_t id(const std::string& text) const {
    auto ids = engine->tokenizer().encode(text, false);
    EXPECT_EQ(ids.size(), 1u) << text;
    return ids.at(0);
  }
};

const Vocab& vocab() {
  static Vocab* v = [] {
    auto e = Engine::open({kModel, 1, {}});
    EXPECT_TRUE(e.ok()) << e.status().message();
    auto* out = new Vocab{std::move(e).value(), {}};
    out->info = VocabInfo::build(out->engine->tokenizer(), out->engine->special_tokens().mask);
    return out;
  }();
  return *v;
}

TEST(SlotAutomaton, StringClosesWithQuoteThenPads) {
  const Vocab& v = vocab();
  auto a = SlotAutomaton::string(v.info, 0, std::nullopt, 4);
  const int32_t q = v.id("\""), sp = v.id(" "), x = v.id("x");
  std::vector<int32_t> t(4, kMasked);
  SlotDp dp = slot_dp(*a, t);
  ASSERT_TRUE(dp.feasible);
  EXPECT_TRUE(slot_allows(*a, dp, 0, q));   // the empty string
  EXPECT_TRUE(slot_allows(*a, dp, 0, x));
  EXPECT_FALSE(slot_allows(*a, dp, 3, x));  // the last position cannot be content
  EXPECT_TRUE(slot_allows(*a, dp, 3, q));
  EXPECT_TRUE(slot_allows(*a, dp, 3, sp));
  t[1] = q;  // a quote at 1: closes the string unless position 0 is a backslash
  dp = slot_dp(*a, t);
  EXPECT_TRUE(slot_allows(*a, dp, 0, x));
  EXPECT_FALSE(slot_allows(*a, dp, 0, q));
  EXPECT_TRUE(slot_allows(*a, dp, 0, v.id("\\")));
  t[0] = x;  // closed at 1: 2 and 3 are pads
  dp = slot_dp(*a, t);
  EXPECT_EQ(slot_allowed(*a, dp, 2), std::vector<int32_t>{sp});
}

TEST(SlotAutomaton, StringLengthBounds) {
  const Vocab& v = vocab();
  auto a = SlotAutomaton::string(v.info, 2, 3, 6);
  const int32_t q = v.id("\""), x = v.id("x");
  std::vector<int32_t> t(6, kMasked);
  SlotDp dp = slot_dp(*a, t);
  EXPECT_FALSE(slot_allows(*a, dp, 0, q));  // minLength 2
  t[0] = x;
  dp = slot_dp(*a, t);
  EXPECT_FALSE(slot_allows(*a, dp, 1, q));
  t = {x, x, x, kMasked, kMasked, kMasked};
  dp = slot_dp(*a, t);
  EXPECT_EQ(slot_allowed(*a, dp, 3), std::vector<int32_t>{q});  // maxLength 3 reached
  // 3 content positions and a closing quote cannot hold more than 3 tokens' code points.
  const auto too_long = static_cast<uint64_t>(3 * v.info.max_code_points + 1);
  auto tight = SlotAutomaton::string(v.info, too_long, std::nullopt, 4);
  EXPECT_FALSE(slot_dp(*tight, std::vector<int32_t>(4, kMasked)).feasible);
  auto fits = SlotAutomaton::string(v.info, 3, std::nullopt, 4);
  EXPECT_TRUE(slot_dp(*fits, std::vector<int32_t>(4, kMasked)).feasible);
}

TEST(SlotAutomaton, StringEscapes) {
  const Vocab& v = vocab();
  auto a = SlotAutomaton::string(v.info, 0, std::nullopt, 5);
  const int32_t bs = v.id("\\"), n = v.id("n"), u = v.id("u"), q = v.id("\"");
  std::vector<int32_t> t = {bs, kMasked, kMasked, kMasked, kMasked};
  SlotDp dp = slot_dp(*a, t);
  EXPECT_TRUE(slot_allows(*a, dp, 1, n));
  EXPECT_TRUE(slot_allows(*a, dp, 1, q));   // \" is content
  EXPECT_FALSE(slot_allows(*a, dp, 1, u));  // \u is not supported
  EXPECT_FALSE(slot_allows(*a, dp, 1, v.id(" ")));
}

TEST(SlotAutomaton, NumberGrammar) {
  const Vocab& v = vocab();
  auto integer = SlotAutomaton::number(v.info, true, false);
  const int32_t zero = v.id("0"), one = v.id("1"), minus = v.id("-"), dot = v.id("."), sp = v.id(" ");
  std::vector<int32_t> t(3, kMasked);
  SlotDp dp = slot_dp(*integer, t);
  EXPECT_FALSE(slot_allows(*integer, dp, 0, minus));  // minimum >= 0
  EXPECT_FALSE(slot_allows(*integer, dp, 0, sp));     // at least one digit
  EXPECT_FALSE(slot_allows(*integer, dp, 1, dot));
  t = {zero, kMasked, kMasked};
  dp = slot_dp(*integer, t);
  EXPECT_FALSE(slot_allows(*integer, dp, 1, one));  // no leading zeros
  EXPECT_EQ(slot_allowed(*integer, dp, 1), std::vector<int32_t>{sp});
  auto number = SlotAutomaton::number(v.info, false, true);
  t = {minus, kMasked, kMasked, kMasked};
  dp = slot_dp(*number, t);
  EXPECT_FALSE(slot_allows(*number, dp, 1, sp));
  EXPECT_TRUE(slot_allows(*number, dp, 1, zero));
  t = {minus, zero, dot, kMasked};
  dp = slot_dp(*number, t);
  EXPECT_FALSE(slot_allows(*number, dp, 3, sp));  // "-0." needs a fraction digit
  EXPECT_TRUE(slot_allows(*number, dp, 3, one));
}

TEST(MergeTail, PunctuationRunsAndTheirSpace) {
  EXPECT_EQ(merge_tail("{\"name\": \"x\", \"arguments\": {"), " {");
  EXPECT_EQ(merge_tail("\"city\": \"Paris\""), "\"");
  EXPECT_EQ(merge_tail("\"tags\": ["), " [");
  EXPECT_EQ(merge_tail("abc"), "");
  EXPECT_EQ(merge_tail(""), "");
}

}  // namespace
}  // namespace dloop::engine::toolcall
