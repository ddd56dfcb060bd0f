#include "member_order.h"

#include <algorithm>
#include <numeric>

namespace dloop::engine::toolcall {
namespace {

char fold(char c) {
  if (c == '_' || c == '-') return ' ';
  if (c >= 'A' && c <= 'Z') return static_cast<char>(c - 'A' + 'a');
  return c;
}

bool word_char(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

std::string folded(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = fold(c);
  return out;
}

// The mentions of `key` in a text already folded: the first only (all false) or all of them.
std::vector<size_t> mentions_in_folded(const std::string& t, std::string_view key, bool all) {
  std::vector<size_t> out;
  const std::string k = folded(key);
  if (k.find_first_not_of(' ') == std::string::npos) return out;
  for (size_t at = t.find(k); at != std::string::npos; at = t.find(k, at + 1)) {
    const size_t end = at + k.size();
    if ((at == 0 || !word_char(t[at - 1])) && (end == t.size() || !word_char(t[end]))) {
      out.push_back(at);
      if (!all) break;
    }
  }
  return out;
}

// first_mention on a text already folded.
size_t mention_in_folded(const std::string& t, std::string_view key) {
  const std::vector<size_t> at = mentions_in_folded(t, key, false);
  return at.empty() ? kNotMentioned : at.front();
}

}  // namespace

size_t first_mention(std::string_view text, std::string_view key) { return mention_in_folded(folded(text), key); }

std::vector<size_t> all_mentions(std::string_view text, std::string_view key) {
  return mentions_in_folded(folded(text), key, true);
}

std::string mention_text(const std::vector<ChatMessage>& messages) {
  size_t last = 0;
  for (size_t i = 0; i < messages.size(); ++i) {
    if (messages[i].role == "user") last = i;
  }
  std::string out;
  bool first = true;
  for (size_t i = last; i < messages.size(); ++i) {
    if (messages[i].role != "user" && messages[i].role != "tool") continue;
    if (!first) out += '\n';
    out += messages[i].content;
    first = false;
  }
  return out;
}

std::vector<std::string> mention_order(const std::vector<std::string>& keys, std::string_view text) {
  const std::string t = folded(text);
  std::vector<size_t> at(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) at[i] = mention_in_folded(t, keys[i]);
  std::vector<size_t> idx(keys.size());
  std::iota(idx.begin(), idx.end(), size_t{0});
  // kNotMentioned is the largest size_t, so keys never mentioned sort last.
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return at[a] < at[b]; });
  std::vector<std::string> out;
  out.reserve(keys.size());
  for (size_t i : idx) out.push_back(keys[i]);
  return out;
}

base::Json mention_ordered_schema(const base::Json& schema, std::string_view text) {
  const base::Json* props = schema.find("properties");
  if (!props || !props->is_object() || props->size() < 2) return schema;
  std::vector<std::string> keys;
  for (const auto& [k, v] : props->as_object()) keys.push_back(k);
  base::Json::Object ordered;
  for (const std::string& k : mention_order(keys, text)) ordered.emplace_back(k, *props->find(k));
  base::Json out = schema;
  out.set("properties", base::Json::object(std::move(ordered)));
  return out;
}

}  // namespace dloop::engine::toolcall
