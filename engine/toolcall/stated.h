// What the request states outright (docs/tool-calls.md "Stated keys", "Stated values"): a value
// right after the name of its key ("start time 22:50", "birthday is 2027-06-21",
// `notes: "bring cake"`, "full name Una Carvalho"). Between the key's name and the value only
// spaces, `:`, `=` and the words is, set, to, as, of, at, equals (at most 16 bytes); a key's name
// is found as the member order finds it (member_order.h: case folded, `_` and `-` as spaces,
// whole words; the closing quote of a JSON key in a tool result is passed over: `"city": "Oslo"`).
// Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <vector>

#include "dloop/base/json.h"
#include "dloop/base/json_schema.h"
#include "dloop/engine/chat.h"

namespace dloop::engine::toolcall {

// The value `text` states for `key`: at every mention of the key's name followed by connecting
// text, the unit that starts there (spans.h unit_at: a quoted string's content, a word, or a
// name's capitalised words). Returned when all such mentions state the same one; nullopt when
// none does or two disagree, unless the mentions on the text's first line (the request, before
// tool results on lines of their own) agree: then theirs.
// plainly: only values stated plainly (a quoted string, a `:`, `=` or "set" between the name and
// the value, or a value that starts with a capital or holds a digit): "content set to alpha",
// "city Quito", not "city like".
std::optional<std::string> stated_value(std::string_view text, std::string_view key, bool plainly = false);

// The key check's reading of the request ("Stated keys"): the assignment of the call's string
// and number values (at any depth; enum/const literals stay) to their keys that `text` (the
// request: member_order.h mention_text, or the call's scope) states, each value (as a whole unit,
// spans.h) right after its key's name. Returned when every value but at most one occurs so after
// exactly one of those members' key names, the values' keys are all different (a value stated
// after none takes the key left), and the schema accepts the result; nullopt otherwise (fewer
// than 2 such members too). The result may be `arguments` itself.
std::optional<base::Json> stated_assignment(const base::Schema& schema, const base::Json& arguments,
                                            std::string_view text);

// Copy repair's stated values ("Stated values"): each string or number member of `arguments`
// (nested objects included; enum/const literals, booleans and arrays left alone) gets the value
// `text` states for its key (stated_value), when there is one that the member's type holds (a
// number member: a plain JSON number), and the member's value is
// - the same value as another string or number member's (literals included; compared as text), or
// - with `scoped` (`text` is the call's scope, call_scope), a whole unit of `conversation` that
//   `text` does not hold (a value the request gives another call), or
// - not a whole unit of `conversation`, differing from the stated value in more than letter case,
//   and for a string, sharing a run of at least min(3, stated length) bytes with it or being a
//   garbled copy of another member's value (a run of 4 bytes or more, longer than the one shared
//   with its own stated value): `Carvalho_name_name_` -> `Una Carvalho`, `2-22-25` ->
//   `2020-02-25`; a value the model wrote in other words, "2026-12-07" for "tomorrow", stays;
//   a number that is not a copy always takes a stated number, or
// - a whole unit of `conversation` that, without connecting text it starts with, is a whole unit
//   of the stated value too (`Berg` -> `Una Berg`, `is Vikram` -> `Vikram Fontaine`).
// Repeated in rounds while values change (a value replaced by a copy can make another a repeat).
// Returns the number of values replaced; the caller validates the result.
size_t repair_stated_values(base::Json& arguments, const base::SchemaNode& schema, std::string_view text,
                            std::string_view conversation, bool scoped = false);

// The list `text` states for `key` ("Stated lists"): at every mention of the key's name followed
// by connecting text (as stated_value), the list that starts there (array_trim.h list_at: units
// joined by ", " up to one joined by "and" / "or"), cut before a unit where a mention of one of
// `keys` (the tool's key names) starts; taken when it is closed, cut so, or followed by nothing
// but punctuation up to the end of its line: "attendees: galaxy, red and daisy", "keywords secret
// and morning", "categories warm and content orchid" (["warm"]). Mentions agree as in
// stated_value (the first line's statement wins over a tool result's); nullopt otherwise.
std::optional<std::vector<std::string>> stated_list(std::string_view text, std::string_view key,
                                                    const std::vector<std::string>& keys);

// Copy repair's stated lists: each array member of `arguments` (nested objects included) whose
// items are strings or numbers (by the item schema's type) and for whose key `text` states a
// list (stated_list; the keys are every property name under `schema`) becomes that list, unless
// a unit is not a plain JSON number where numbers are due (`["red and", "daisy"]` -> `["galaxy",
// "red", "daisy"]`, `["secret and morning"]` -> `["secret", "morning"]`). Returns the number of
// arrays replaced; the caller validates the result.
size_t repair_stated_lists(base::Json& arguments, const base::SchemaNode& schema, std::string_view text);

// Copy repair's stated literals: each enum or boolean member of `arguments` (nested objects
// included) for whose key `text` states a literal (stated_value: one of the enum's string values
// exactly; for a boolean true/on/yes/enabled or false/off/no/disabled) takes it: `"verbose":
// false` for "set verbose to true", `"visibility": "low"` for "visibility set to medium".
// Returns the number of members changed; the caller validates the result.
size_t repair_stated_literals(base::Json& arguments, const base::SchemaNode& schema, std::string_view text);

// The call's scope ("Call scope"): a request that asks for several actions ("archive my expense
// with content "pixel". After that, search for library loan author: Emil Lund, then convert the
// password using rating 13.6") states each call's values in its own clause. The last user
// message is cut into clauses at sentence ends (`.`, `?`, `!` before whitespace) and before the
// words then, afterwards, after that, next, finally (whole words, any case); the clause that
// names the most words of `tool_name` (its `_`-separated words of 3 letters or more, found as
// member_order.h finds key names) is the call's, when exactly one names the most and at least
// one word. The scope is that clause and, after it, each tool result after the last user
// message on a line of its own; nullopt when the message is one clause or no clause stands out.
std::optional<std::string> call_scope(const std::vector<ChatMessage>& messages, std::string_view tool_name);

// Adds the optional top-level string and number members (not enum/const literals) that the call
// left out but `scope` states plainly (stated_value with plainly; a number member: a plain JSON
// number): `"content": "soccer"` for `... find my taxi for city Beirut and content set to
// "soccer"`. Returns the number added; the caller validates the result.
size_t add_stated_arguments(base::Json& arguments, const base::SchemaNode& schema, std::string_view scope);

// Drops the optional top-level members of `arguments` whose key `scope` does not mention but
// `text` (the whole mention text) does: an argument the request gives another call
// (`"limit": 1498` for "... and afterwards show me my contact using limit 1498"). Returns the
// number dropped; the caller validates the result.
size_t drop_other_calls_arguments(base::Json& arguments, const base::SchemaNode& schema, std::string_view scope,
                                  std::string_view text);

}  // namespace dloop::engine::toolcall
