// Copy repair (InfillOptions::copy_repair): a decoded value that stops short of the unit of the
// conversation it begins (a word, a capitalised name, a quoted string) is completed to it; one that
// is not in the prompt, while a span of the prompt within half its length in edits (at most 8) is,
// becomes a choice between them scored by the model, with the copy's prior (log 9) added. Scripted forwarders stand in for the
// model: they write a value confidently in the decoding passes, and in the choice's pass (the value's opening quote masked
// again) are unsure among the candidates (the prior decides) or sure of the decoded value.
#include <gtest/gtest.h>

#include "scripted_infill.h"

namespace dloop::engine::toolcall {
namespace {

using test::Fixture;
using test::Script;
using test::kId;
using test::kRating;


// Writes `value` (then the closing quote when quoted, then padding) confidently in the first pass.
// In the second (the copy-repair choice, whose region starts at the opening quote when quoted) the
// model is unsure among `choice`: each text's k-th token gets logit `weight` at the region's k-th
// position.
Script writes(const Fixture& f, const std::string& value, bool quoted, const std::vector<std::string>& choice,
              float weight = 10.0f) {
  const std::vector<int32_t> ids = f.tok->encode(value, false);
  std::vector<std::vector<int32_t>> alts;
  for (const std::string& c : choice) alts.push_back(f.tok->encode(quoted ? "\"" + c + "\"" : c, false));
  const int32_t quote = f.id("\""), sp = f.id(" ");
  const int64_t shift = quoted ? 1 : 0;
  return [=](std::span<const int32_t>, int64_t, int64_t j, int pass) -> std::map<int32_t, float> {
    if (pass >= 2) {
      std::map<int32_t, float> out;
      const auto k = static_cast<size_t>(j + shift);
      for (const auto& a : alts) {
        if (k < a.size()) out[a[k]] = weight;
      }
      return out;
    }
    if (j >= 0 && j < static_cast<int64_t>(ids.size())) return {{ids[static_cast<size_t>(j)], 20.0f}};
    if (quoted && j == static_cast<int64_t>(ids.size())) return {{quote, 20.0f}};
    return {{sp, 20.0f}};
  };
}

TEST(CopyRepair, ANearSpanOfThePromptReplacesAValueTheModelDoesNotPrefer) {
  Fixture f;
  f.string_budget = 16;
  int passes = 0;
  EXPECT_EQ(f.decode(kId, writes(f, "PRJ-88430", true, {"PRJ-88430", "PRJ-82430"}), 0.9, &passes,
                     "Cancel order PRJ-82430 now."),
            R"({"id": "PRJ-82430"})");
  int plain = 0;
  EXPECT_EQ(f.decode(kId, writes(f, "PRJ-88430", true, {}), 0.9, &plain, "Cancel order PRJ-82430 now.", false),
            R"({"id": "PRJ-88430"})");
  EXPECT_EQ(passes, plain + 1);  // one pass scores the choice
}

TEST(CopyRepair, TheModelKeepsItsValueWhenItPrefersItByMoreThanThePrior) {
  Fixture f;
  f.string_budget = 16;
  // In the choice's pass the model is sure of "PRJ-88430" (logit 10 for its tokens only): the
  // copy's differing token scores about 10 nats less, more than the prior's 2.2.
  EXPECT_EQ(f.decode(kId, writes(f, "PRJ-88430", true, {"PRJ-88430"}), 0.9, nullptr, "Cancel order PRJ-82430 now."),
            R"({"id": "PRJ-88430"})");
}

TEST(CopyRepair, AValueFoundVerbatimIsKeptWithoutAnotherPass) {
  Fixture f;
  f.string_budget = 16;
  int passes = 0, plain = 0;
  EXPECT_EQ(f.decode(kId, writes(f, "PRJ-88430", true, {}), 0.9, &passes, "Cancel PRJ-88430, not PRJ-88431."),
            R"({"id": "PRJ-88430"})");
  f.decode(kId, writes(f, "PRJ-88430", true, {}), 0.9, &plain, "Cancel PRJ-88430, not PRJ-88431.", false);
  EXPECT_EQ(passes, plain);
}

TEST(CopyRepair, APrefixOfAWordInThePromptIsNotAVerbatimCopy) {
  Fixture f;
  f.string_budget = 16;
  // "USR-4415" occurs in the prompt only inside "USR-44150": not a copy, repaired to the word.
  EXPECT_EQ(f.decode(kId, writes(f, "USR-4415", true, {"USR-4415", "USR-44150"}), 0.9, nullptr, "Close claim USR-44150 today."),
            R"({"id": "USR-44150"})");
}

TEST(CopyRepair, NumbersAreRepairedFromNumbersInThePrompt) {
  Fixture f;
  EXPECT_EQ(f.decode(kRating, writes(f, "23.8", false, {"23.8", "234.8"}), 0.9, nullptr, "Set the rating to 234.8 please."),
            R"({"rating": 234.8})");
}

TEST(CopyRepair, ShortOrFarValuesAreLeftAlone) {
  Fixture f;
  f.string_budget = 16;
  // Under 4 characters: no repair ("ab1" vs "ab2").
  EXPECT_EQ(f.decode(kId, writes(f, "ab1", true, {"ab1", "ab2"}), 0.9, nullptr, "Use ab2 here."), R"({"id": "ab1"})");
  // Five edits from the only candidate, over half of its 9 characters: kept.
  EXPECT_EQ(f.decode(kId, writes(f, "PRJ-11111", true, {"PRJ-11111", "PRJ-82430"}), 0.9, nullptr, "Cancel order PRJ-82430 now."),
            R"({"id": "PRJ-11111"})");
  // 9 edits of a 22-character value: over the cap of 8, kept.
  f.string_budget = 24;
  EXPECT_EQ(f.decode(kId, writes(f, "xxxxxxxxx@example.com", true, {"xxxxxxxxx@example.com", "lars.khan@example.com"}),
                     0.9, nullptr, "Mail lars.khan@example.com today."),
            R"({"id": "xxxxxxxxx@example.com"})");
}

TEST(CopyRepair, UpToHalfTheValuesLengthInEdits) {
  Fixture f;
  f.string_budget = 16;
  // Three edits of a 10-character name ("Sofia Ahh!" for "Sofia Ahmed"), four of a 9-character id.
  EXPECT_EQ(f.decode(kId, writes(f, "Sofia Ahh!", true, {"Sofia Ahh!", "Sofia Ahmed"}), 0.9, nullptr,
                     "Assign it to Sofia Ahmed please."),
            R"({"id": "Sofia Ahmed"})");
  EXPECT_EQ(f.decode(kId, writes(f, "PRJ-11110", true, {"PRJ-11110", "PRJ-82430"}), 0.9, nullptr, "Cancel order PRJ-82430 now."),
            R"({"id": "PRJ-82430"})");
}

TEST(CopyRepair, AValueThatStopsShortOfItsUnitIsCompletedInPlace) {
  Fixture f;
  f.string_budget = 16;
  int passes = 0, plain = 0;
  EXPECT_EQ(f.decode(kId, writes(f, "Vikram", true, {}), 0.9, &passes, "Check the printer for Vikram Fontaine, please."),
            R"({"id": "Vikram Fontaine"})");
  EXPECT_EQ(f.decode(kId, writes(f, "Vikram", true, {}), 0.9, &plain, "Check the printer for Vikram Fontaine, please.", false),
            R"({"id": "Vikram"})");
  EXPECT_EQ(passes, plain);  // one completion: no pass to choose
  EXPECT_EQ(f.decode(kId, writes(f, "pixel birth", true, {}), 0.9, nullptr, "Reserve review content 'pixel birthday'."),
            R"({"id": "pixel birthday"})");
  EXPECT_EQ(f.decode(kRating, writes(f, "431", false, {}), 0.9, nullptr, "Plan a survey using rating 431.3 and start 09:10."),
            R"({"rating": 431.3})");
}

TEST(CopyRepair, TheModelChoosesAmongSeveralCompletions) {
  Fixture f;
  f.string_budget = 16;
  const std::string user = "Una Berg met Una Carvalho.";
  int passes = 0, plain = 0;
  EXPECT_EQ(f.decode(kId, writes(f, "Una", true, {"Una Carvalho"}), 0.9, &passes, user), R"({"id": "Una Carvalho"})");
  EXPECT_EQ(f.decode(kId, writes(f, "Una", true, {"Una Berg"}), 0.9, nullptr, user), R"({"id": "Una Berg"})");
  f.decode(kId, writes(f, "Una", true, {}), 0.9, &plain, user, false);
  EXPECT_EQ(passes, plain + 1);
}

TEST(CopyRepair, ANearSpanIsScoredAsItIsAndWrittenCompleted) {
  Fixture f;
  f.string_budget = 16;
  // "panda Costa" is 5 edits from "panda warm", which begins the quoted string: the model scores
  // "panda warm", the call gets the whole quote.
  EXPECT_EQ(f.decode(kId, writes(f, "panda Costa", true, {"panda warm"}), 0.9, nullptr,
                     "Convert my taxi driver: Quinn Costa, content 'panda warm galaxy orchid'."),
            R"({"id": "panda warm galaxy orchid"})");
  EXPECT_EQ(f.decode(kId, writes(f, "panda Costa", true, {"Quinn Costa"}), 0.9, nullptr,
                     "Convert my taxi driver: Quinn Costa, content 'panda warm galaxy orchid'."),
            R"({"id": "Quinn Costa"})");
}

TEST(CopyRepair, AValueThatIsAWholeUnitSomewhereIsNotCompleted) {
  Fixture f;
  f.string_budget = 16;
  EXPECT_EQ(f.decode(kId, writes(f, "Vikram", true, {}), 0.9, nullptr, "Vikram Fontaine, or Vikram alone."),
            R"({"id": "Vikram"})");
  EXPECT_EQ(f.decode(kRating, writes(f, "4", false, {}), 0.9, nullptr, "Guests 4 and rating 44."), R"({"rating": 4})");
}

}  // namespace
}  // namespace dloop::engine::toolcall
