// Spans of the conversation: where a value copied from what the user or a tool said may start and
// end, the conversation's text without the system turn (which holds the tool schemas), and the
// list of its short spans. Shared by copy repair and grounding (infiller.cpp) and the duplicate
// check (key_check.cpp). Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace dloop::engine::toolcall {

// Whitespace, quotes, brackets and separators: a copied value starts after and ends before one.
bool span_separator(char c);
// Whether a span of `text` may start at byte i / end before byte j: after or before a separator,
// or before sentence punctuation (.?!) that ends a word.
bool span_start(std::string_view text, size_t i);
bool span_end(std::string_view text, size_t j);

// How often `value` occurs in `text` as a whole unit: starting and ending at word boundaries
// (span_start / span_end); 0 for an empty value.
size_t whole_occurrences(std::string_view text, std::string_view value);

// A JSON number as a number slot writes it: -?digits(.digits)?, no leading zero before digits
// (an integer slot: no fraction).
bool plain_number(std::string_view t, bool integer);

// The text of each ChatML turn of `prompt_text` (after `<|im_start|>` and its role line, up to
// `<|im_end|>`) whose role is not `system`, each after a newline; the whole text when it has no
// ChatML markers.
std::string conversation_text(std::string_view prompt_text);

// The distinct spans of `text` of 1 to max_words words (separated by single spaces, no line
// breaks) that start and end at word boundaries and do not end in `.?!,;:`, at most max_bytes
// long; shorter spans (fewer words) first, then in order of appearance.
std::vector<std::string> conversation_spans(std::string_view text, size_t max_words, size_t max_bytes);

// Copy repair's completions of `value` (docs/tool-calls.md "Copy repair"): for each place where
// `value` occurs in `text` at a word start, the longer unit it begins there:
// - a quoted string it begins (`"` or `'` after a separator and before a word, the same quote
//   after a word's end on the same line): `soccer` in `"soccer soccer"`, `cedar so` in
//   `'cedar socket socket'`; places inside a quoted string but not at its start are skipped;
// - otherwise the rest of a word it stops inside of (`Tari` in `Tariq`, `431` in `431.3`), then,
//   for a value starting with an ASCII capital, the capitalised words that follow in the same
//   sentence (`Vikram` in `Vikram Fontaine, using`: a name's first word).
// None when some place holds `value` as a whole unit (`4` in `guests 4 and limit 44`: the value
// was copied). Distinct, without `"`, `\` or control characters, at most max_bytes long, in order
// of appearance.
std::vector<std::string> span_completions(std::string_view text, std::string_view value, size_t max_bytes);

// The unit of `text` that starts at byte `at`: when a quote (`"` or `'`) opens there, the quoted
// text up to the same quote on the same line (empty when it is not closed); otherwise the span
// from `at` to its end (span_end; a colon between digits stays inside: `22:50`), and when it starts with an ASCII capital, the capitalised
// words after it in the same sentence (a name: `Una Carvalho`). Empty at a separator or the end.
std::string_view unit_at(std::string_view text, size_t at);

}  // namespace dloop::engine::toolcall
