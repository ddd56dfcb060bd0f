// Member order (docs/tool-calls.md "Member order"): a model whose GGUF sets
// dloop.tool_call.member_order = "mention" was trained on tool calls that list their top-level
// arguments in the order the request first mentions each parameter's name, so the schema-guided
// decoder lays the call's members out in that order too (a JSON object's member order carries no
// meaning: the call is the same). The rules here are the training recipe's (models/recipe/train.py,
// mention_order): both must agree byte for byte. Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "dloop/base/json.h"
#include "dloop/engine/chat.h"

namespace dloop::engine::toolcall {

inline constexpr size_t kNotMentioned = static_cast<size_t>(-1);

// Byte offset of the first mention of the parameter name `key` in `text`, or kNotMentioned. Both
// are compared with ASCII letters lower-cased and '_' and '-' read as spaces (`order_id` is
// mentioned by "Order ID" and "order-id"); a mention is bounded by the ends of the text or by
// characters that are not ASCII letters or digits.
size_t first_mention(std::string_view text, std::string_view key);

// The byte offsets of every mention of `key` in `text` (as first_mention compares them), in order;
// each is key.size() bytes long.
std::vector<size_t> all_mentions(std::string_view text, std::string_view key);

// The text the order reads: the contents of the last user message and of the tool results after
// it, joined by newlines (the system message, earlier turns and assistant turns are not read).
std::string mention_text(const std::vector<ChatMessage>& messages);

// `keys` (in the schema's order) sorted by their first mention in `text`; keys never mentioned
// follow in the schema's order. Two keys mentioned at the same offset keep the schema's order.
std::vector<std::string> mention_order(const std::vector<std::string>& keys, std::string_view text);

// A copy of an object schema with its top-level `properties` in mention_order over `text`;
// anything else (no properties, not an object) is returned unchanged.
base::Json mention_ordered_schema(const base::Json& schema, std::string_view text);

}  // namespace dloop::engine::toolcall
