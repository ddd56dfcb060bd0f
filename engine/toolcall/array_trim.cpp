// Array overruns; see array_trim.h.
#include "array_trim.h"

#include <map>
#include <optional>
#include <string>

#include "spans.h"

namespace dloop::engine::toolcall {

size_t whole_occurrences(std::string_view text, std::string_view value) {
  if (value.empty()) return 0;
  size_t n = 0;
  for (size_t at = text.find(value); at != std::string_view::npos; at = text.find(value, at + 1)) {
    if (span_start(text, at) && span_end(text, at + value.size())) ++n;
  }
  return n;
}

namespace {

// The text an item is copied as: a string's content, a number as JSON writes it; none otherwise.
std::optional<std::string> copy_text(const base::Json& item) {
  if (item.is_string()) return item.as_string();
  if (item.is_number()) return item.dump();
  return std::nullopt;
}

}  // namespace

size_t trim_array_overruns(base::Json& value, const base::SchemaNode& schema, std::string_view text) {
  size_t dropped = 0;
  if (value.is_object()) {
    for (auto& [key, member] : value.as_object()) {
      const base::SchemaNode* child = schema.property(key);
      if (!child && schema.additional == base::SchemaNode::Additional::kSchema) child = schema.additional_schema.get();
      if (child) dropped += trim_array_overruns(member, *child, text);
    }
    return dropped;
  }
  if (!value.is_array()) return 0;
  auto& items = value.as_array();
  if (schema.items) {
    for (base::Json& item : items) dropped += trim_array_overruns(item, *schema.items, text);
  }
  std::map<std::string, size_t> seen;
  const size_t min_items = schema.min_items.value_or(0);
  for (size_t k = 0; k < items.size(); ++k) {
    const std::optional<std::string> t = copy_text(items[k]);
    if (!t) return dropped;  // not a list of copies
    const size_t count = ++seen[*t];
    if (whole_occurrences(text, *t) >= count) continue;
    if (k == 0) return dropped;  // the first item is not a copy: a list the model composed
    const size_t keep = std::max(k, min_items);
    if (keep < items.size()) {
      dropped += items.size() - keep;
      items.resize(keep);
    }
    return dropped;
  }
  return dropped;
}

}  // namespace dloop::engine::toolcall
