// Spans of the conversation (spans.h): the text without the system turn, word boundaries, and the
// short spans the duplicate check offers as replacement values.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "spans.h"

namespace dloop::engine::toolcall {
namespace {

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

TEST(Spans, ConversationTextDropsTheSystemTurnAndTheRoleLines) {
  const std::string prompt =
      "<|im_start|>system\nTools: city Lyon<|im_end|>\n<|im_start|>user\nBook Paris.<|im_end|>\n"
      "<|im_start|>tool\n{\"eta\": \"02:15\"}<|im_end|>\n<|im_start|>assistant\n";
  EXPECT_EQ(conversation_text(prompt), "\nBook Paris.\n{\"eta\": \"02:15\"}\n");
  EXPECT_EQ(conversation_text("plain text, no turns"), "plain text, no turns");
}

TEST(Spans, WordBoundaries) {
  EXPECT_TRUE(span_start("a b", 2));
  EXPECT_FALSE(span_start("ab", 1));
  EXPECT_TRUE(span_end("Paris. Then", 5));   // sentence punctuation that ends a word
  EXPECT_FALSE(span_end("3.14 m", 1));       // a decimal point inside a number
  EXPECT_TRUE(span_end("3.14 m", 4));
  EXPECT_TRUE(plain_number("-12.5", false));
  EXPECT_FALSE(plain_number("12.5", true));
  EXPECT_FALSE(plain_number("012", true));
}

TEST(Spans, ShortSpansFirstEachOnceWithoutTrailingPunctuation) {
  const auto s = conversation_spans("Book Una Carvalho at 21:00, room 4. Thanks, Una!", 3, 64);
  // One word first, in order of appearance; each span once.
  ASSERT_GE(s.size(), 4u);
  EXPECT_EQ(s[0], "Book");
  EXPECT_EQ(s[1], "Una");
  EXPECT_EQ(std::count(s.begin(), s.end(), "Una"), 1);
  EXPECT_TRUE(has(s, "21:00"));  // a separator inside a span
  EXPECT_TRUE(has(s, "4"));
  EXPECT_TRUE(has(s, "Una Carvalho"));
  EXPECT_TRUE(has(s, "Book Una Carvalho"));
  EXPECT_FALSE(has(s, "Book Una Carvalho at"));  // 4 words
  EXPECT_FALSE(has(s, "4."));                     // trailing punctuation
  EXPECT_FALSE(has(s, "21:00,"));
  EXPECT_FALSE(has(s, "21:00, room"));            // a comma ends a span
  EXPECT_FALSE(has(s, "room 4. Thanks"));         // and so does a full stop before a space
  EXPECT_TRUE(has(s, "at 21"));                   // before a separator
  EXPECT_FALSE(has(s, "Carvalho at 2"));          // not at a word end
  const size_t one = static_cast<size_t>(std::find(s.begin(), s.end(), "Thanks") - s.begin());
  const size_t two = static_cast<size_t>(std::find(s.begin(), s.end(), "Una Carvalho") - s.begin());
  EXPECT_LT(one, two);
}

TEST(Spans, LineBreaksQuotesAndLengthEndSpans) {
  const auto s = conversation_spans("order \"A-1\"\nnext line", 3, 8);
  EXPECT_TRUE(has(s, "A-1"));
  EXPECT_TRUE(has(s, "next"));
  EXPECT_FALSE(has(s, "A-1\"\nnext"));
  EXPECT_FALSE(has(s, "order \"A-1"));
  EXPECT_FALSE(has(s, "next line"));  // 9 bytes, over max_bytes
  EXPECT_TRUE(conversation_spans("", 3, 64).empty());
  EXPECT_TRUE(conversation_spans(" ,. ", 3, 64).empty());
}

using Strings = std::vector<std::string>;

TEST(Spans, WholeOccurrences) {
  EXPECT_EQ(whole_occurrences("red, red and redder", "red"), 2u);
  EXPECT_EQ(whole_occurrences("rating 431.3", "431"), 0u);
  EXPECT_EQ(whole_occurrences("rating 431.3", "431.3"), 1u);
  EXPECT_EQ(whole_occurrences("x", ""), 0u);
}

TEST(SpanCompletions, TheRestOfAWordAndANamesFollowingCapitalisedWords) {
  EXPECT_EQ(span_completions("Book for Tariq Fontaine, at 9.", "Tari", 64), Strings{"Tariq Fontaine"});
  EXPECT_EQ(span_completions("verify printer with full name Vikram Fontaine, using birthday", "Vikram", 64),
            Strings{"Vikram Fontaine"});
  EXPECT_EQ(span_completions("rating 431.3 and start", "431", 64), Strings{"431.3"});
  EXPECT_EQ(span_completions("guests set to 44), city", "4", 64), Strings{"44"});
  EXPECT_EQ(span_completions("assignee: Omar Ahmed And Co", "Omar", 64), Strings{"Omar Ahmed And Co"});
  // Lower-case values complete to the end of their word only; a sentence ends a name.
  EXPECT_EQ(span_completions("content kitchenware today", "kitchen", 64), Strings{"kitchenware"});
  EXPECT_TRUE(span_completions("send it to Bergen. Then Oslo", "Bergen", 64).empty());
  EXPECT_EQ(span_completions("send it to Bergenhus. Then Oslo", "Bergen", 64), Strings{"Bergenhus"});
}

TEST(SpanCompletions, AQuotedStringIsOneUnit) {
  EXPECT_EQ(span_completions("fetch the taxi content \"soccer soccer\".", "soccer", 64), Strings{"soccer soccer"});
  EXPECT_EQ(span_completions("and content 'cedar socket socket'.", "cedar so", 64), Strings{"cedar socket socket"});
  // A place inside a quoted string but not at its start offers nothing.
  EXPECT_TRUE(span_completions("content \"warm panda alpha\"", "panda", 64).empty());
  // The quote is the whole value: nothing to complete.
  EXPECT_TRUE(span_completions("content \"warm\" please", "warm", 64).empty());
  // An apostrophe inside a word opens no quote.
  EXPECT_EQ(span_completions("Tariq's car 'red van'", "red", 64), Strings{"red van"});
}

TEST(SpanCompletions, NoneWhenTheValueIsAWholeUnitSomewhere) {
  EXPECT_TRUE(span_completions("guests 4 and limit 44", "4", 64).empty());
  EXPECT_TRUE(span_completions("Vikram Fontaine and Vikram, please", "Vikram", 64).empty());
  EXPECT_TRUE(span_completions("no such value here", "Oslo", 64).empty());
  EXPECT_TRUE(span_completions("anything", "", 64).empty());
}

TEST(SpanCompletions, DistinctCleanAndBounded) {
  // Two places, two different completions, in order of appearance; a repeat once.
  EXPECT_EQ(span_completions("Una Berg met Una Carvalho and Una Berg", "Una", 64), (Strings{"Una Berg", "Una Carvalho"}));
  EXPECT_EQ(span_completions("Una Berg met Una Carvalho", "Una", 8), Strings{"Una Berg"});  // max_bytes
  EXPECT_TRUE(span_completions("path C\\dir", "C", 64).empty());  // a backslash in the word
}

}  // namespace
}  // namespace dloop::engine::toolcall
