// Array overruns and gaps (docs/tool-calls.md "Array overruns"): a decoder that copies a list
// from the request often does not stop after its last item and goes on with junk or repeats
// (`["galaxy", "red", "daisy", "daisy", "arguments"]`, `[31, 31, 31]`), or skips an item in the
// middle. Once a call is decoded, an array of strings and numbers whose first items are all copies
// of the conversation is cut before the first item that is not, or that occurs more often in the
// array than in the conversation; then a list of copies that skipped units of the list it was
// copied from gets them back. Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "dloop/base/json.h"
#include "dloop/base/json_schema.h"

namespace dloop::engine::toolcall {

// A list of `text` (docs/tool-calls.md "Array gaps and list ends"): units (spans that start and
// end at word boundaries, spans.h, without a separator inside) joined by ", ", ending at the first
// unit joined by " and " or " or " (", and " / ", or " too): "a, b and c" is closed. Without that
// last join it is not closed: its units up to where no join follows ("a, b, city Oslo" gives a, b,
// city), and where it really ends is not known.
struct TextList {
  std::vector<std::string_view> units;
  std::vector<size_t> starts;  // where each unit starts in the text
  size_t end = 0;              // where the last unit ends
  bool closed = false;
};

// The list of `text` whose first unit starts at `at` (no units at a separator or the end).
TextList list_at(std::string_view text, size_t at);

// Cuts the overruns of every array in `value` (walked along `schema`: properties, items,
// additionalProperties; arrays under anyOf or without a schema are left alone). An array is cut at
// item k >= 1 when items 0..k-1 are strings or numbers that each occur in `text`
// (spans.h whole_occurrences, numbers as JSON writes them) at least as often as in the array so far, and
// item k is a string or number that does not; never below the schema's minItems. Returns the
// number of items dropped.
size_t trim_array_overruns(base::Json& value, const base::SchemaNode& schema, std::string_view text);

// Fills the items a copied list skipped or stopped short of (`["piano", "red"]` and `["piano"]`
// for "tags piano, secret and red"): an array (walked as above) of strings or numbers, each one
// unit copied from `text`, whose items appear in this order in one list of `text` that starts with
// its first item (units joined by ", " up to one joined by " and " / " or ") becomes that whole
// list; when the list does not end with an "and" / "or" join (where it ends is not known), only
// the units between its first item and its last are filled. Left alone when two such lists
// disagree, when the filled array would pass maxItems, or when an added unit of a number array is
// not a number. Returns the number of items added.
size_t fill_array_gaps(base::Json& value, const base::SchemaNode& schema, std::string_view text);

}  // namespace dloop::engine::toolcall
