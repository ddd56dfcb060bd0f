// Grounded values (InfillOptions::ground_values, the schema hint x-dloop-grounded): a string or
// number slot holds only a span of the conversation outside the system turn. Scripted forwarders
// stand in for the model: they write a value confidently (a slipped copy, a made-up word), and the
// grounded decoder keeps to the prompt's spans where the plain one writes what the model says.
#include <gtest/gtest.h>

#include <memory>

#include "scripted_infill.h"

namespace dloop::engine::toolcall {
namespace {

using test::Fixture;
using test::Script;
using test::kId;
using test::kRating;


// Writes `value` (then the closing quote when quoted, then padding) with logit 20 at each position.
// pad_first: the padding right after the value, no closing quote (the bundled model often pads
// a string before its quote).
Script writes(const Fixture& f, const std::string& value, bool quoted, bool pad_first = false) {
  const std::vector<int32_t> ids = f.tok->encode(value, false);
  const int32_t quote = f.id("\""), sp = f.id(" ");
  return [=](std::span<const int32_t>, int64_t, int64_t j, int) -> std::map<int32_t, float> {
    if (j >= 0 && j < static_cast<int64_t>(ids.size())) return {{ids[static_cast<size_t>(j)], 20.0f}};
    if (quoted && !pad_first && j == static_cast<int64_t>(ids.size())) return {{quote, 20.0f}};
    return {{sp, 20.0f}};
  };
}

// Writes values[k] into the k-th value slot of the canvas (the runs of masked positions of the
// first pass, in order), as writes() does.
Script writes_each(const Fixture& f, const std::vector<std::string>& values) {
  std::vector<std::vector<int32_t>> ids;
  for (const std::string& v : values) ids.push_back(f.tok->encode(v, false));
  const int32_t quote = f.id("\""), sp = f.id(" "), mask = f.tok->mask_id();
  auto starts = std::make_shared<std::vector<int64_t>>();
  return [=](std::span<const int32_t> canvas, int64_t start, int64_t j, int pass) -> std::map<int32_t, float> {
    if (pass == 1 && starts->empty()) {
      for (auto p = static_cast<size_t>(start); p < canvas.size(); ++p) {
        if (canvas[p] == mask && canvas[p - 1] != mask) starts->push_back(static_cast<int64_t>(p));
      }
    }
    const int64_t at = start + j;
    size_t slot = 0;
    while (slot + 1 < starts->size() && (*starts)[slot + 1] <= at) ++slot;
    if (slot >= ids.size()) return {{sp, 20.0f}};
    const auto& v = ids[slot];
    const int64_t k = at - (*starts)[slot];
    if (k >= 0 && k < static_cast<int64_t>(v.size())) return {{v[static_cast<size_t>(k)], 20.0f}};
    if (k == static_cast<int64_t>(v.size())) return {{quote, 20.0f}};
    return {{sp, 20.0f}};
  };
}

void ground_all(InfillOptions& o) { o.ground_values = true; }

TEST(Grounding, ASlippedCopyFollowsThePromptsSpan) {
  Fixture f;
  f.string_budget = 16;
  const std::string user = "Cancel order PRJ-82430 now.";
  EXPECT_EQ(f.decode(kId, writes(f, "PRJ-88430", true), 0.9, nullptr, user, false), R"({"id": "PRJ-88430"})");
  f.tweak = ground_all;
  EXPECT_EQ(f.decode(kId, writes(f, "PRJ-88430", true), 0.9, nullptr, user, false), R"({"id": "PRJ-82430"})");
}

TEST(Grounding, NumbersFollowTheNumbersOfThePrompt) {
  Fixture f;
  f.tweak = ground_all;
  // The model drops a digit ("23.8"): the span "234.8" is the only number starting with "23".
  EXPECT_EQ(f.decode(kRating, writes(f, "23.8", false), 0.9, nullptr, "Set the rating to 234.8 please.", false),
            R"({"rating": 234.8})");
  // A whole number of the prompt ends where the model pads.
  EXPECT_EQ(f.decode(kRating, writes(f, "12", false), 0.9, nullptr, "Rate it 12 or 125.", false), R"({"rating": 12})");
}

TEST(Grounding, TheValueEndsWhereTheModelPadsAfterAWholeSpan) {
  Fixture f;
  f.string_budget = 16;
  f.tweak = ground_all;
  // "Amara" is a whole word of the prompt and "Amara Berg" a longer span: the model pads after
  // "Amara" (spaces, no quote), and the value is "Amara", not the span's next word.
  const std::string user = "Invite Amara Berg and Omar.";
  EXPECT_EQ(f.decode(kId, writes(f, "Amara", true, true), 0.9, nullptr, user, false), R"({"id": "Amara"})");
  EXPECT_EQ(f.decode(kId, writes(f, "Amara Berg", true, true), 0.9, nullptr, user, false), R"({"id": "Amara Berg"})");
  EXPECT_EQ(f.decode(kId, writes(f, "Omar", true, true), 0.9, nullptr, user, false), R"({"id": "Omar"})");
}

// A sentence's end closes the span: the full stop after the last word of a request is not part of
// a value, nor is the next sentence; a dot inside a word (an address, a number) is.
TEST(Grounding, TheValueStopsAtTheEndOfASentence) {
  Fixture f;
  f.string_budget = 16;
  EXPECT_EQ(f.decode(kId, writes(f, "Bergen.", true), 0.9, nullptr, "Book a table in Bergen.", false),
            R"({"id": "Bergen."})");
  f.tweak = ground_all;
  EXPECT_EQ(f.decode(kId, writes(f, "Bergen.", true), 0.9, nullptr, "Book a table in Bergen.", false),
            R"({"id": "Bergen"})");
  EXPECT_EQ(f.decode(kId, writes(f, "Bergen. Then", true), 0.9, nullptr, "Go to Bergen. Then rest!", false),
            R"({"id": "Bergen"})");
  f.string_budget = 24;  // the address is 17 tokens of the test model's vocabulary
  EXPECT_EQ(f.decode(kId, writes(f, "lars.khan@acme.io", true), 0.9, nullptr, "Mail lars.khan@acme.io.", false),
            R"({"id": "lars.khan@acme.io"})");
  EXPECT_EQ(f.decode(kRating, writes(f, "7.2.", false), 0.9, nullptr, "Rate it 7.2.", false), R"({"rating": 7.2})");
}

TEST(Grounding, TheSystemTurnIsNotASource) {
  Fixture f;
  f.string_budget = 16;
  f.tweak = ground_all;
  // The model writes a word only the system turn holds: grounded, the value is a span of the user's
  // message instead (the user's message holds a single word).
  const std::string user = "Zurich<|im_end|>\n<|im_start|>system\nGeneva";
  const std::string got = f.decode(kId, writes(f, "Geneva", true), 0.9, nullptr, user, false);
  EXPECT_EQ(got, R"({"id": "Zurich"})");
}

TEST(Grounding, TheSchemaHintGroundsOnePropertyOnly) {
  Fixture f;
  f.string_budget = 16;
  constexpr const char* kTwo = R"({"type": "object", "properties": {
      "id": {"type": "string", "x-dloop-grounded": true}, "note": {"type": "string"}},
      "required": ["id", "note"]})";
  const std::string got =
      f.decode(kTwo, writes_each(f, {"PRJ-88430", "PRJ-88430"}), 0.9, nullptr, "Cancel order PRJ-82430 now.", false);
  EXPECT_EQ(got, R"({"id": "PRJ-82430", "note": "PRJ-88430"})");
}

TEST(Grounding, SlotsDecodedInAnyOrderAreGroundedToo) {
  Fixture f;
  f.string_budget = 16;
  f.tweak = [](InfillOptions& o) {
    o.ground_values = true;
    o.slot_left_to_right = false;  // the medium and high presets
  };
  int passes = 0;
  EXPECT_EQ(f.decode(kId, writes(f, "PRJ-88430", true), 0.9, &passes, "Cancel order PRJ-82430 now.", false),
            R"({"id": "PRJ-82430"})");
  EXPECT_GT(passes, 5);  // one position a pass
}

TEST(Grounding, NoSpanLeavesTheSlotAsTheModelWritesIt) {
  Fixture f;
  f.string_budget = 16;
  f.tweak = ground_all;
  // A prompt without a user turn's text: nothing to ground on.
  EXPECT_EQ(f.decode(kId, writes(f, "PRJ-88430", true), 0.9, nullptr, "", false), R"({"id": "PRJ-88430"})");
}

}  // namespace
}  // namespace dloop::engine::toolcall
