// The key check (key_check.h): the call's string and number values re-assigned among their keys
// by the model's log-probability of the keys, masked, given the values; and the duplicate check,
// which replaces a value written under two keys by a span of the conversation. A scripted forwarder on
// the llada test model's vocabulary stands in for the model: it is sure (uniform over the
// vocabulary, so every key token gets log(1/V)) only when the canvas holds the true assignment,
// and confidently wrong (one unrelated token at +30) otherwise.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "dloop/base/json.h"
#include "dloop/base/json_schema.h"
#include "key_check.h"
#include "scripted_infill.h"

namespace dloop::engine::toolcall {
namespace {

using base::Json;
using test::Fixture;

class TruthForwarder final : public Forwarder {
 public:
  TruthForwarder(const Tokenizer& tok, int32_t n_vocab, std::function<bool(const std::string&)> truth,
                 std::vector<int32_t> favoured = {})
      : tok_(tok), n_vocab_(n_vocab), truth_(std::move(truth)), favoured_(std::move(favoured)) {}
  base::Status forward(std::span<const int32_t> canvas, std::span<const int32_t> rows, float* logits,
                       const PassHint&, int) override {
    ++passes;
    masked_rows += static_cast<int>(rows.size());
    const bool right = truth_(tok_.decode(canvas, false));
    for (size_t k = 0; k < rows.size(); ++k) {
      float* l = logits + k * static_cast<size_t>(n_vocab_);
      std::fill(l, l + n_vocab_, 0.0f);
      if (!right) l[7] = 30.0f;
      for (int32_t t : favoured_) l[t] = 3.0f;
    }
    return base::Status();
  }
  int passes = 0, masked_rows = 0;

 private:
  const Tokenizer& tok_;
  int32_t n_vocab_;
  std::function<bool(const std::string&)> truth_;
  std::vector<int32_t> favoured_;  // tokens given +3 at every row: the value picks favour them
};

struct Check {
  KeyCheckResult result;
  int passes = 0;
  int masked_rows = 0;
};

KeyCheckSpec book_spec(const base::Schema& schema) {
  return KeyCheckSpec{{{"<tool_call>", -1}, {"{\"name\": \"book\", \"arguments\": ", -1}},
                      {{"}", -1}, {"</tool_call>", -1}},
                      &schema,
                      32};
}

// check_keys on `args` (JSON text) for `schema`, the truth being `truth(canvas text)`.
Check run(const Fixture& f, const char* schema_text, const char* args, std::function<bool(const std::string&)> truth,
          int64_t prompt_words = 0) {
  auto schema = base::Schema::compile(*Json::parse(schema_text));
  EXPECT_TRUE(schema.ok()) << schema.status().message();
  std::string user = "Book it.";
  for (int64_t i = 0; i < prompt_words; ++i) user += " word";
  const std::vector<int32_t> prompt =
      f.tok->encode("<|im_start|>user\n" + user + "<|im_end|>\n<|im_start|>assistant\n", true);
  const VocabInfo vocab = VocabInfo::build(*f.tok, f.tok->mask_id());
  TruthForwarder fwd(*f.tok, f.model->config().n_vocab, std::move(truth));
  const InfillContext ctx{*f.model, fwd, *f.tok, vocab, f.tok->eos_id()};
  auto res = check_keys(ctx, prompt, book_spec(*schema), *Json::parse(args));
  EXPECT_TRUE(res.ok()) << res.status().message();
  Check c{res.ok() ? *res : KeyCheckResult{}, fwd.passes, fwd.masked_rows};
  return c;
}

constexpr const char* kTwoStrings = R"({"type": "object", "properties": {"city": {"type": "string"},
    "person": {"type": "string"}}, "required": ["city", "person"]})";

// The truth: Paris is the city (its value comes first in the call, as "city" is the first key).
bool paris_first(const std::string& text) {
  const size_t paris = text.find("Paris"), bob = text.find("Bob");
  return paris != std::string::npos && bob != std::string::npos && paris < bob;
}

// Decoded swapped, the values are put back; decoded right, they stay. Both assignments are
// scored either way, one pass each, with both keys masked.
TEST(KeyCheck, TheAssignmentWhoseKeysTheModelReadsBestWins) {
  Fixture f;
  for (const char* decoded : {R"({"city": "Bob", "person": "Paris"})", R"({"city": "Paris", "person": "Bob"})"}) {
    SCOPED_TRACE(decoded);
    Check c = run(f, kTwoStrings, decoded, paris_first);
    EXPECT_EQ(c.result.arguments.dump(), R"({"city":"Paris","person":"Bob"})");
    EXPECT_EQ(c.result.changed, decoded[10] == 'B');
    EXPECT_EQ(c.result.assignments, 2);
    EXPECT_EQ(c.result.forward_passes, 2);
    EXPECT_EQ(c.passes, 2);
    EXPECT_GE(c.masked_rows, 4);  // each pass masks both keys ("city", "person": a token or more each)
  }
}

TEST(KeyCheck, ATieKeepsTheDecodedAssignment) {
  Fixture f;
  Check c = run(f, kTwoStrings, R"({"city": "Bob", "person": "Paris"})", [](const std::string&) { return true; });
  EXPECT_EQ(c.result.arguments.dump(), R"({"city":"Bob","person":"Paris"})");
  EXPECT_FALSE(c.result.changed);
}

TEST(KeyCheck, OnlyAssignmentsTheSchemaAcceptsAreScored) {
  Fixture f;
  // "Paris" is too long for person (maxLength 3): the swap is not valid, so nothing to compare.
  Check c = run(f, R"({"type": "object", "properties": {"city": {"type": "string"},
      "person": {"type": "string", "maxLength": 3}}, "required": ["city", "person"]})",
                R"({"city": "Paris", "person": "Bob"})", [](const std::string&) { return false; });
  EXPECT_EQ(c.result.assignments, 0);
  EXPECT_EQ(c.passes, 0);
  EXPECT_EQ(c.result.arguments.dump(), R"({"city":"Paris","person":"Bob"})");
  // A string and an integer: neither fits the other's type.
  c = run(f, R"({"type": "object", "properties": {"city": {"type": "string"}, "guests": {"type": "integer"}}})",
          R"({"city": "12", "guests": 7})", [](const std::string&) { return false; });
  EXPECT_EQ(c.passes, 0);
  EXPECT_EQ(c.result.arguments.dump(), R"({"city":"12","guests":7})");
}

TEST(KeyCheck, EnumBooleanAndNestedValuesStayPut) {
  Fixture f;
  // Two strings, one of them an enum value (a literal the model chose among): one movable value.
  Check c = run(f, R"({"type": "object", "properties": {"city": {"type": "string"},
      "size": {"type": "string", "enum": ["Paris", "Bob"]}, "ok": {"type": "boolean"},
      "where": {"type": "object", "properties": {"name": {"type": "string"}}}}})",
                R"({"city": "Bob", "size": "Paris", "ok": true, "where": {"name": "x"}})", paris_first);
  EXPECT_EQ(c.passes, 0);
  EXPECT_FALSE(c.result.changed);
  EXPECT_EQ(c.result.arguments.dump(), R"({"city":"Bob","size":"Paris","ok":true,"where":{"name":"x"}})");
}

TEST(KeyCheck, ThreeValuesScoreEveryDistinctAssignment) {
  Fixture f;
  const char* schema = R"({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"},
      "c": {"type": "string"}}})";
  // The truth: x, y, z in that order.
  auto xyz = [](const std::string& t) {
    const size_t x = t.find("\"xx\""), y = t.find("\"yy\""), z = t.find("\"zz\"");
    return x < y && y < z && z != std::string::npos;
  };
  Check c = run(f, schema, R"({"a": "zz", "b": "xx", "c": "yy"})", xyz);
  EXPECT_EQ(c.result.assignments, 6);
  EXPECT_EQ(c.passes, 6);
  EXPECT_EQ(c.result.arguments.dump(), R"({"a":"xx","b":"yy","c":"zz"})");
  // Two equal values: the assignments that only exchange them are one.
  c = run(f, schema, R"({"a": "zz", "b": "xx", "c": "xx"})", [](const std::string&) { return true; });
  EXPECT_EQ(c.result.assignments, 3);
}

TEST(KeyCheck, FiveValuesAreNotChecked) {
  Fixture f;
  Check c = run(f, R"({"type": "object"})", R"({"a": "1", "b": "2", "c": "3", "d": "4", "e": "5"})",
                [](const std::string&) { return false; });
  EXPECT_EQ(c.passes, 0);
  EXPECT_EQ(c.result.assignments, 0);
}

TEST(KeyCheck, ACallThatDoesNotFitTheContextIsLeftAsItIs) {
  Fixture f;
  ASSERT_EQ(f.model->config().n_ctx, 256);
  Check c = run(f, kTwoStrings, R"({"city": "Bob", "person": "Paris"})", paris_first, 240);
  EXPECT_EQ(c.passes, 0);
  EXPECT_FALSE(c.result.changed);
  EXPECT_EQ(c.result.arguments.dump(), R"({"city":"Bob","person":"Paris"})");
}

// The duplicate check on `args` with `user` as the user's message; the model favours the tokens
// of `favoured` (text) wherever it is asked for a value.
struct DupCheck {
  DuplicateCheckResult result;
  int passes = 0;
};

DupCheck run_dup(const Fixture& f, const char* schema_text, const char* args, const std::string& user,
                 std::function<bool(const std::string&)> truth, const std::string& favoured) {
  auto schema = base::Schema::compile(*Json::parse(schema_text));
  EXPECT_TRUE(schema.ok()) << schema.status().message();
  const std::vector<int32_t> prompt = f.tok->encode(
      "<|im_start|>system\nTools: Lyon 99<|im_end|>\n<|im_start|>user\n" + user + "<|im_end|>\n<|im_start|>assistant\n",
      true);
  const VocabInfo vocab = VocabInfo::build(*f.tok, f.tok->mask_id());
  TruthForwarder fwd(*f.tok, f.model->config().n_vocab, std::move(truth), f.tok->encode(favoured, false));
  const InfillContext ctx{*f.model, fwd, *f.tok, vocab, f.tok->eos_id()};
  auto res = check_duplicates(ctx, prompt, book_spec(*schema), *Json::parse(args));
  EXPECT_TRUE(res.ok()) << res.status().message();
  return DupCheck{res.ok() ? *res : DuplicateCheckResult{}, fwd.passes};
}

// The truth, looking only at the call (the prompt holds the same words) and at its values (the
// keys are masked when it is scored): these values, in this order, and no others.
std::function<bool(const std::string&)> values_are(std::vector<std::string> want) {
  return [want](const std::string& text) {
    size_t at = text.find("\"arguments\": ");
    if (at == std::string::npos) return false;
    for (const std::string& v : want) {
      at = text.find("\": " + v, at);
      if (at == std::string::npos) return false;
      at += v.size();
    }
    return text.find("\": ", at) == std::string::npos;
  };
}

// The model reading the right call best, the span it favours replaces the repeated value; reading
// the duplicate best, the call stays as decoded.
TEST(DuplicateCheck, AValueUnderTwoKeysGetsTheSpanTheModelReadsBest) {
  Fixture f;
  for (bool duplicate_wins : {false, true}) {
    SCOPED_TRACE(duplicate_wins);
    const char* second = duplicate_wins ? "\"Paris\"" : "\"Zed\"";
    DupCheck c = run_dup(f, kTwoStrings, R"({"city": "Paris", "person": "Paris"})", "Book it in Paris for Zed.",
                         values_are({"\"Paris\"", second}), "Zed");
    EXPECT_EQ(c.result.arguments.dump(), std::string(R"({"city":"Paris","person":)") + second + "}");
    EXPECT_EQ(c.result.changed, !duplicate_wins);
    EXPECT_TRUE(c.result.assigned);
    // The decoded call, "Zed" under city (and its swap, the right call), "Zed" under person (the
    // same right call): 3 distinct calls scored, after one value pick per key.
    EXPECT_EQ(c.result.candidates, 3);
    EXPECT_EQ(c.result.forward_passes, c.passes);
    EXPECT_EQ(c.passes, 2 + 3);
  }
}

TEST(DuplicateCheck, NumbersAndTheRightKeyThroughTheAssignments) {
  Fixture f;
  const char* schema = R"({"type": "object", "properties": {"guests": {"type": "integer"},
      "nights": {"type": "integer", "maximum": 9}}})";
  // 4 guests, 2 nights; decoded 2 and 2. Replacing guests gives {4, 2}; nights can only take 4
  // (12 is over its maximum, "99" is in the system turn only), giving {2, 4}, whose swap is right too.
  DupCheck c = run_dup(f, schema, R"({"guests": 2, "nights": 2})", "4 guests, 2 nights, room 12.",
                       values_are({"4", "2"}), "4");
  EXPECT_EQ(c.result.arguments.dump(), R"({"guests":4,"nights":2})");
  EXPECT_TRUE(c.result.changed);
}

TEST(DuplicateCheck, NothingToDoWithoutDuplicatesOrWithoutOtherSpans) {
  Fixture f;
  auto never = [](const std::string&) { return false; };
  DupCheck c = run_dup(f, kTwoStrings, R"({"city": "Paris", "person": "Zed"})", "Book it in Paris for Zed.", never, "Zed");
  EXPECT_EQ(c.passes, 0);
  EXPECT_EQ(c.result.candidates, 0);
  // The only span of the conversation is the duplicated value itself (the system turn's words
  // are not candidates).
  c = run_dup(f, kTwoStrings, R"({"city": "Paris", "person": "Paris"})", "Paris!", never, "Lyon");
  EXPECT_EQ(c.passes, 0);
  EXPECT_FALSE(c.result.changed);
  EXPECT_EQ(c.result.arguments.dump(), R"({"city":"Paris","person":"Paris"})");
}

TEST(DuplicateCheck, ACallThatCannotFitTheContextIsLeftAsItIs) {
  Fixture f;
  std::string user = "Book it in Paris for Zed.";
  for (int i = 0; i < 190; ++i) user += " word";
  DupCheck c = run_dup(f, kTwoStrings, R"({"city": "Paris", "person": "Paris"})", user,
                       values_are({"\"Paris\"", "\"Zed\""}), "Zed");
  EXPECT_EQ(c.passes, 0);
  EXPECT_FALSE(c.result.changed);
  EXPECT_EQ(c.result.arguments.dump(), R"({"city":"Paris","person":"Paris"})");
}

}  // namespace
}  // namespace dloop::engine::toolcall
