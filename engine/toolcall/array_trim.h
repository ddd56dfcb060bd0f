// Array overruns (docs/tool-calls.md "Array overruns"): a decoder that copies a list from the
// request often does not stop after its last item and goes on with junk or repeats
// (`["galaxy", "red", "daisy", "daisy", "arguments"]`, `[31, 31, 31]`). Once a call is decoded,
// an array of strings and numbers whose first items are all copies of the conversation is cut
// before the first item that is not, or that occurs more often in the array than in the
// conversation. Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <string_view>

#include "dloop/base/json.h"
#include "dloop/base/json_schema.h"

namespace dloop::engine::toolcall {

// How often `value` occurs in `text` as a whole unit: starting and ending at word boundaries
// (spans.h span_start / span_end).
size_t whole_occurrences(std::string_view text, std::string_view value);

// Cuts the overruns of every array in `value` (walked along `schema`: properties, items,
// additionalProperties; arrays under anyOf or without a schema are left alone). An array is cut at
// item k >= 1 when items 0..k-1 are strings or numbers that each occur in `text`
// (whole_occurrences, numbers as JSON writes them) at least as often as in the array so far, and
// item k is a string or number that does not; never below the schema's minItems. Returns the
// number of items dropped.
size_t trim_array_overruns(base::Json& value, const base::SchemaNode& schema, std::string_view text);

}  // namespace dloop::engine::toolcall
