// The mention prior (InfillOptions::mention_log_prior, docs/tool-calls.md "Mention prior"): at an
// object's member choice, a candidate that writes a member the request names next gains the prior,
// and one that leaves such members out loses it for each; at an enum choice, a string value the
// request states gains it. A scripted forwarder stands in for a
// model that leans towards closing the object (`}` a little likelier than any key), so every
// optional member is left out without the prior.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "dloop/engine/tool_call.h"
#include "scripted_infill.h"

namespace dloop::engine::toolcall {
namespace {

using test::Fixture;
using test::Script;

constexpr const char* kFlags = R"({"type": "object", "properties": {"dry_run": {"type": "boolean"},
    "notify": {"type": "boolean"}, "verbose": {"type": "boolean"}}})";

// `}` with logit `lean` at every position, every other token 0.
Script leans_to_close(const Fixture& f, float lean = 1.5f) {
  const int32_t close = f.id("}");
  return [=](std::span<const int32_t>, int64_t, int64_t, int) -> std::map<int32_t, float> { return {{close, lean}}; };
}

// The decoded object's member names, in order.
std::vector<std::string> keys_of(const std::string& text) {
  std::vector<std::string> out;
  auto j = base::Json::parse(text);
  EXPECT_TRUE(j.ok()) << text;
  if (!j.ok() || !j->is_object()) return out;
  for (const auto& [k, v] : j->as_object()) out.push_back(k);
  return out;
}

std::function<void(InfillOptions&)> prior(const std::string& text, double log_odds) {
  return [=](InfillOptions& o) {
    o.mention_text = text;
    o.mention_log_prior = log_odds;
  };
}

const double kLog9 = std::log(9.0);

TEST(MentionPrior, OffLeavesEveryOptionalMemberToTheModel) {
  Fixture f;
  const std::string user = "Run it with dry run on and notify me.";
  EXPECT_EQ(f.decode(kFlags, leans_to_close(f), 0.9, nullptr, user), "{}");
  f.tweak = prior(user, 0.0);
  EXPECT_EQ(f.decode(kFlags, leans_to_close(f), 0.9, nullptr, user), "{}");
  f.tweak = prior("", kLog9);  // no text to read: no prior
  EXPECT_EQ(f.decode(kFlags, leans_to_close(f), 0.9, nullptr, user), "{}");
}

TEST(MentionPrior, MentionedMembersAreWrittenAndOnlyThose) {
  Fixture f;
  for (const auto& [user, want] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"Run it with dry run on and notify me.", {"dry_run", "notify"}},
           {"Just run it, verbose please.", {"verbose"}},  // the two members before it are skipped
           {"NOTIFY the team; Dry-Run: yes", {"dry_run", "notify"}},  // case, '-' for '_'; schema order
           {"Run it now.", {}},
           {"Run the dry_runner and the notifyall job.", {}},  // inside longer words: no mention
       }) {
    SCOPED_TRACE(user);
    f.tweak = prior(user, kLog9);
    EXPECT_EQ(keys_of(f.decode(kFlags, leans_to_close(f), 0.9, nullptr, user)), want);
  }
}

TEST(MentionPrior, AModelSureOfItsChoiceOutweighsThePrior) {
  Fixture f;
  const std::string user = "Run it with dry run on.";
  f.tweak = prior(user, kLog9);
  // `}` at logit 30: far more than the prior's two log 9 (the candidates' scores are means over
  // their tokens, so the margin is a fraction of it).
  EXPECT_EQ(f.decode(kFlags, leans_to_close(f, 30.0f), 0.9, nullptr, user), "{}");
  f.tweak = prior(user, 40.0);  // a prior of 40 log-odds outweighs it again
  EXPECT_EQ(keys_of(f.decode(kFlags, leans_to_close(f, 30.0f), 0.9, nullptr, user)), std::vector<std::string>{"dry_run"});
}

TEST(MentionPrior, NestedObjectsAndRequiredMembers) {
  Fixture f;
  // The required member comes first, so the optional `mode` after it is a choice against `}`.
  constexpr const char* kNested = R"({"type": "object", "properties": {
      "options": {"type": "object", "properties": {"notify": {"type": "boolean"}, "verbose": {"type": "boolean"}}},
      "mode": {"type": "boolean"}}, "required": ["options"]})";
  const std::string user = "Verbose output, please.";
  EXPECT_EQ(keys_of(f.decode(kNested, leans_to_close(f), 0.9, nullptr, user)), std::vector<std::string>{"options"});
  f.tweak = prior(user, kLog9);
  const std::string got = f.decode(kNested, leans_to_close(f), 0.9, nullptr, user);
  EXPECT_EQ(keys_of(got), std::vector<std::string>{"options"});
  auto j = base::Json::parse(got);
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(keys_of(j->find("options")->dump()), std::vector<std::string>{"verbose"});
}

// Enum values: a string literal the request states as whole words gains the prior. The script is
// neutral (every token alike), so without the prior the first value wins.
TEST(MentionPrior, AnEnumValueTheRequestStatesIsChosen) {
  Fixture f;
  constexpr const char* kUnits = R"({"type": "object", "properties": {"units": {"type": "string",
      "enum": ["celsius", "fahrenheit", "kelvin"]}}, "required": ["units"]})";
  const Script neutral = [](std::span<const int32_t>, int64_t, int64_t, int) { return std::map<int32_t, float>{}; };
  const std::string user = "Show it in Fahrenheit please.";
  EXPECT_EQ(f.decode(kUnits, neutral, 0.9, nullptr, user), R"({"units": "celsius"})");
  for (const auto& [text, want] : std::vector<std::pair<std::string, std::string>>{
           {user, "fahrenheit"},
           {"Kelvin, not the default.", "kelvin"},
           {"Use the fahrenheits scale.", "celsius"},  // inside a longer word: not stated
           {"Nothing about units.", "celsius"},
       }) {
    SCOPED_TRACE(text);
    f.tweak = prior(text, kLog9);
    EXPECT_EQ(f.decode(kUnits, neutral, 0.9, nullptr, text), R"({"units": ")" + want + R"("})");
  }
  // Numbers and booleans are not stated values: the prior leaves them alone.
  constexpr const char* kLevels = R"({"type": "object", "properties": {"level": {"enum": [1, 2, 3]}},
      "required": ["level"]})";
  f.tweak = prior("Level 3 please.", kLog9);
  EXPECT_EQ(f.decode(kLevels, neutral, 0.9, nullptr, "Level 3 please."), R"({"level": 1})");
}

TEST(MentionPrior, TheRequestsPriorMustBeInRange) {
  ToolCallRequest r;
  r.messages = {{"user", "Run it."}};
  EXPECT_DOUBLE_EQ(r.mention_log_prior, std::log(9.0));  // the default
  EXPECT_TRUE(validate_tool_call_request(r).ok());
  for (double ok : {0.0, 0.5, 100.0}) {
    r.mention_log_prior = ok;
    EXPECT_TRUE(validate_tool_call_request(r).ok()) << ok;
  }
  for (double bad : {-0.1, 100.5, std::nan(""), HUGE_VAL}) {
    r.mention_log_prior = bad;
    const base::Status st = validate_tool_call_request(r);
    EXPECT_FALSE(st.ok()) << bad;
    EXPECT_EQ(st.message(), "mention_log_prior must be in [0, 100]") << bad;
  }
}

}  // namespace
}  // namespace dloop::engine::toolcall
