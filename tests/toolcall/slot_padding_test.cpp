// String slots and their padding. The padding token is the single space, which is also string
// content (between words), so the decoder must tell them apart:
// - trailing spaces committed before the closing quote are read as padding and dropped, down to
//   the schema's minLength;
// - a slot committed up to a space whose masked positions all predict padding is closed there,
//   before a later pass can write junk after the padding; a space followed by a word is kept.
// Scripted forwarders (on the llada test model's vocabulary) stand in for the model.
#include <gtest/gtest.h>

#include "scripted_infill.h"

namespace dloop::engine::toolcall {
namespace {

using test::Fixture;
using test::Script;

constexpr const char* kName = R"({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})";

// "a", " ", "b" confidently at the slot's first three positions, then the space over the closing
// quote everywhere, the way the bundled model sometimes pads inside the string.
Script padded_inside(const Fixture& f) {
  const int32_t a = f.id("a"), sp = f.id(" "), b = f.id("b"), quote = f.id("\"");
  return [=](std::span<const int32_t>, int64_t, int64_t j, int) -> std::map<int32_t, float> {
    if (j == 0) return {{a, 20.0f}};
    if (j == 1) return {{sp, 20.0f}};
    if (j == 2) return {{b, 20.0f}};
    return {{sp, 20.0f}, {quote, 10.0f}};
  };
}

TEST(SlotPadding, TrailingSpacesBeforeTheClosingQuoteAreDropped) {
  Fixture f;
  EXPECT_EQ(f.decode(kName, padded_inside(f)), R"({"name": "a b"})");
}

TEST(SlotPadding, MinLengthKeepsAsManySpacesAsItNeeds) {
  Fixture f;
  EXPECT_EQ(f.decode(R"({"type": "object", "properties": {"name": {"type": "string", "minLength": 5}},
                        "required": ["name"]})", padded_inside(f)),
            R"({"name": "a b  "})");
}

// Unsure padding (space 10.5 against the quote's 10: below the threshold, one commit a pass).
// After "a" and a space, the junk token "x" shows at position 3 once position 2 holds a space:
// without closing, the value becomes "a  x".
TEST(SlotPadding, ASlotThatPredictsOnlyPaddingAfterASpaceIsClosed) {
  Fixture f;
  const int32_t a = f.id("a"), sp = f.id(" "), x = f.id("x"), quote = f.id("\"");
  Script s = [=](std::span<const int32_t> canvas, int64_t start, int64_t j, int) -> std::map<int32_t, float> {
    if (j == 0) return {{a, 20.0f}};
    if (j == 3 && canvas[static_cast<size_t>(start + 2)] == sp) return {{x, 11.0f}, {sp, 10.5f}, {quote, 10.0f}};
    return {{sp, 10.5f}, {quote, 10.0f}};
  };
  int passes = 0;
  EXPECT_EQ(f.decode(kName, s, 0.9, &passes), R"({"name": "a"})");
  EXPECT_LE(passes, 4);  // "a"; the space; closed (no pass per padding position)
}

// The same unsure padding, but the word "b" shows at position 2 once position 1 holds the space:
// the space between words is content, and the slot is not closed before the word.
TEST(SlotPadding, ASpaceBeforeTheNextWordIsKept) {
  Fixture f;
  const int32_t a = f.id("a"), sp = f.id(" "), b = f.id("b"), quote = f.id("\"");
  Script s = [=](std::span<const int32_t> canvas, int64_t start, int64_t j, int) -> std::map<int32_t, float> {
    if (j == 0) return {{a, 20.0f}};
    if (j == 2 && canvas[static_cast<size_t>(start + 1)] == sp) return {{b, 20.0f}};
    if (j == 3 && canvas[static_cast<size_t>(start + 2)] == b) return {{quote, 20.0f}};
    return {{sp, 10.5f}, {quote, 10.0f}};
  };
  EXPECT_EQ(f.decode(kName, s), R"({"name": "a b"})");
}

}  // namespace
}  // namespace dloop::engine::toolcall
