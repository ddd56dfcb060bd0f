// Array overruns; see array_trim.h.
#include "array_trim.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "spans.h"

namespace dloop::engine::toolcall {

namespace {

// The text an item is copied as: a string's content, a number as JSON writes it; none otherwise.
std::optional<std::string> copy_text(const base::Json& item) {
  if (item.is_string()) return item.as_string();
  if (item.is_number()) return item.dump();
  return std::nullopt;
}

}  // namespace

TextList list_at(std::string_view text, size_t at) {
  static constexpr std::string_view kJoins[] = {", and ", ", or ", ", ", " and ", " or "};
  TextList list;
  bool last = false;  // the unit at `begin` follows an "and" / "or" join
  size_t begin = at;
  while (begin < text.size() && !span_separator(text[begin])) {
    size_t end = begin + 1;
    while (!span_end(text, end)) ++end;
    list.units.push_back(text.substr(begin, end - begin));
    list.starts.push_back(begin);
    list.end = end;
    if (last) {
      list.closed = true;
      break;
    }
    size_t next = std::string_view::npos;
    for (std::string_view join : kJoins) {
      if (text.substr(end, join.size()) != join) continue;
      next = end + join.size();
      last = join != ", ";
      break;
    }
    if (next == std::string_view::npos) break;
    begin = next;
  }
  return list;
}

namespace {

// The items a copied list skipped: `items` (their copy texts) in the order of the units of one
// list of `text` that starts with items[0]; that whole list when it is closed, else its units
// up to the last item; none when no list holds them or two lists disagree.
std::optional<std::vector<std::string>> list_with_gaps(std::string_view text, const std::vector<std::string>& items) {
  std::optional<std::vector<std::string>> found;
  const std::string& first = items.front();
  for (size_t at = text.find(first); at != std::string_view::npos; at = text.find(first, at + 1)) {
    if (!span_start(text, at) || !span_end(text, at + first.size())) continue;
    const TextList list = list_at(text, at);
    size_t k = 1, u = 1;
    for (; k < items.size() && u < list.units.size(); ++u) {
      if (list.units[u] == items[k]) ++k;
    }
    if (k < items.size()) continue;  // not all of the items, in this order
    if (list.closed) u = list.units.size();
    std::vector<std::string> filled(list.units.begin(), list.units.begin() + static_cast<std::ptrdiff_t>(u));
    if (found && *found != filled) return std::nullopt;
    found = std::move(filled);
  }
  return found;
}

// Calls f(items, schema) for every array of `value` walked along `schema` (properties,
// additionalProperties, items), inner arrays first; the sum of what f returns.
template <typename F>
size_t walk_arrays(base::Json& value, const base::SchemaNode& schema, const F& f) {
  size_t n = 0;
  if (value.is_object()) {
    for (auto& [key, member] : value.as_object()) {
      const base::SchemaNode* child = schema.property(key);
      if (!child && schema.additional == base::SchemaNode::Additional::kSchema) child = schema.additional_schema.get();
      if (child) n += walk_arrays(member, *child, f);
    }
    return n;
  }
  if (!value.is_array()) return 0;
  if (schema.items) {
    for (base::Json& item : value.as_array()) n += walk_arrays(item, *schema.items, f);
  }
  return n + f(value.as_array(), schema);
}

// fill_array_gaps on one array.
size_t fill_gaps(base::Json::Array& items, const base::SchemaNode& schema, std::string_view text) {
  if (items.empty()) return 0;
  std::vector<std::string> copies;
  const bool numbers = items.front().is_number();
  for (const base::Json& item : items) {
    const std::optional<std::string> t = copy_text(item);
    if (!t || item.is_number() != numbers || t->empty() || whole_occurrences(text, *t) == 0) return 0;
    for (char c : *t) {
      if (span_separator(c)) return 0;  // one unit each
    }
    copies.push_back(*t);
  }
  const std::optional<std::vector<std::string>> filled = list_with_gaps(text, copies);
  if (!filled || filled->size() == items.size()) return 0;
  if (schema.max_items && filled->size() > *schema.max_items) return 0;
  std::vector<base::Json> out;
  for (const std::string& unit : *filled) {
    if (!numbers) {
      out.emplace_back(unit);
      continue;
    }
    base::Result<base::Json> n = base::Json::parse(unit);
    if (!n.ok() || !n->is_number() || n->dump() != unit) return 0;  // an added unit is not a number
    out.push_back(std::move(*n));
  }
  const size_t added = out.size() - items.size();
  items = std::move(out);
  return added;
}

// trim_array_overruns on one array.
size_t trim_overruns(base::Json::Array& items, const base::SchemaNode& schema, std::string_view text) {
  std::map<std::string, size_t> seen;
  const size_t min_items = schema.min_items.value_or(0);
  for (size_t k = 0; k < items.size(); ++k) {
    const std::optional<std::string> t = copy_text(items[k]);
    if (!t) return 0;  // not a list of copies
    const size_t count = ++seen[*t];
    if (whole_occurrences(text, *t) >= count) continue;
    if (k == 0) return 0;  // the first item is not a copy: a list the model composed
    const size_t keep = std::max(k, min_items);
    if (keep >= items.size()) return 0;
    const size_t dropped = items.size() - keep;
    items.resize(keep);
    return dropped;
  }
  return 0;
}

}  // namespace

size_t fill_array_gaps(base::Json& value, const base::SchemaNode& schema, std::string_view text) {
  return walk_arrays(value, schema, [&](base::Json::Array& items, const base::SchemaNode& s) { return fill_gaps(items, s, text); });
}

size_t trim_array_overruns(base::Json& value, const base::SchemaNode& schema, std::string_view text) {
  return walk_arrays(value, schema,
                     [&](base::Json::Array& items, const base::SchemaNode& s) { return trim_overruns(items, s, text); });
}

}  // namespace dloop::engine::toolcall
