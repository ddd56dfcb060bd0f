// What the request states outright; see stated.h.
#include "stated.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <set>
#include <vector>

#include "array_trim.h"
#include "member_order.h"
#include "spans.h"

namespace dloop::engine::toolcall {
namespace {

constexpr std::string_view kLinkWords[] = {"is", "set", "to", "as", "of", "at", "equals"};
constexpr size_t kMaxGap = 16;

bool gap_char(char c) { return c == ' ' || c == ':' || c == '='; }

// The end of the connecting text after a key name that ends at `at` (the closing quote of a
// JSON key, then spaces, `:`, `=`, link words each followed by one of those); `at` itself when
// there is none.
size_t skip_gap(std::string_view text, size_t at) {
  size_t j = at;
  if (j < text.size() && text[j] == '"') ++j;  // "city": "Oslo" in a tool result
  for (;;) {
    while (j < text.size() && gap_char(text[j])) ++j;
    size_t k = j;
    while (k < text.size() && text[k] >= 'a' && text[k] <= 'z') ++k;
    const std::string_view word = text.substr(j, k - j);
    if (k == j || k == text.size() || !gap_char(text[k]) ||
        std::find(std::begin(kLinkWords), std::end(kLinkWords), word) == std::end(kLinkWords)) {
      return j;
    }
    j = k;
  }
}

// Where each mention of `key` in `text` ends.
std::vector<size_t> mention_ends(std::string_view text, std::string_view key) {
  std::vector<size_t> ends;
  for (size_t at : all_mentions(text, key)) ends.push_back(at + key.size());
  return ends;
}

// Whether the text between a key name ending at `end` and a value starting at `at` connects them:
// what skip_gap passes over, then at most one opening quote.
bool connects(std::string_view text, size_t end, size_t at) {
  if (end >= at || at - end > kMaxGap) return false;
  size_t j = skip_gap(text, end);
  if (j < at && (text[j] == '"' || text[j] == '\'')) ++j;
  return j == at;
}

bool equal_but_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

struct Member {
  base::Json* value;
  std::string key;
  const base::SchemaNode* node;
  bool literal;  // an enum/const literal: counted for repeats, never replaced
};

// The string and number members of `v` under `schema` (nested objects too); members without a
// declared schema left out.
void collect_members(base::Json& v, const base::SchemaNode& schema, std::vector<Member>& out) {
  if (!v.is_object()) return;
  for (auto& [key, member] : v.as_object()) {
    const base::SchemaNode* child = schema.property(key);
    if (!child) continue;
    if (member.is_object()) {
      collect_members(member, *child, out);
    } else if (member.is_string() || member.is_number()) {
      out.push_back({&member, key, child, child->enum_values || child->const_value});
    }
  }
}

std::string copy_text(const base::Json& v) { return v.is_string() ? v.as_string() : v.dump(); }

// Whether a schema node takes strings only / numbers (integers or any) only.
bool string_type(const base::SchemaNode& node) { return node.types == base::kSchemaString; }
bool number_type(const base::SchemaNode& node) {
  return node.types != 0 && (node.types & ~(base::kSchemaInteger | base::kSchemaNumber)) == 0;
}

// `text` as a number under `node` (an integer's grammar unless the node takes any number): a
// plain JSON number (spans.h plain_number); none otherwise.
std::optional<base::Json> plain_json_number(std::string_view text, const base::SchemaNode& node) {
  if (!plain_number(text, !(node.types & base::kSchemaNumber))) return std::nullopt;
  base::Result<base::Json> n = base::Json::parse(text);
  if (!n.ok()) return std::nullopt;
  return std::move(*n);
}

// The copy texts of the string and number items of the arrays in `v` (nested objects too).
void collect_array_items(const base::Json& v, std::vector<std::string>& out) {
  if (!v.is_object()) return;
  for (const auto& [key, member] : v.as_object()) {
    if (member.is_object()) collect_array_items(member, out);
    if (!member.is_array()) continue;
    for (const base::Json& item : member.as_array()) {
      if (item.is_string() || item.is_number()) out.push_back(copy_text(item));
    }
  }
}

// `v` without the connecting text it starts with and the sentence punctuation it ends with
// ("is Vikram" -> "Vikram", "Munich." -> "Munich"); `v` itself when nothing would be left.
std::string_view bare(std::string_view v) {
  const size_t at = skip_gap(v, 0);
  std::string_view b = at < v.size() ? v.substr(at) : v;
  while (b.size() > 1 && std::strchr(".,;:!?)]", b.back())) b.remove_suffix(1);
  return b;
}

// Whether `value` occurs in `text` in double or single quotes.
bool quoted_in(std::string_view text, std::string_view value) {
  for (char q : {'"', '\''}) {
    const std::string quoted = q + std::string(value) + q;
    if (text.find(quoted) != std::string_view::npos) return true;
  }
  return false;
}

// Whether `vt` is `stated` run on into the text that connects it to what follows: a comma or
// semicolon, or a joining word (`Tomas Mansour and`, `Ismael Larsen and time`).
bool runs_on(std::string_view vt, std::string_view stated) {
  static constexpr std::string_view kJoins[] = {",", ";", " and", " or", " then", " with", " using", " where"};
  if (vt.size() <= stated.size() || vt.substr(0, stated.size()) != stated) return false;
  const std::string_view rest = vt.substr(stated.size());
  for (std::string_view join : kJoins) {
    if (rest.substr(0, join.size()) == join && (rest.size() == join.size() || rest[join.size()] == ' ')) return true;
  }
  return false;
}

// Every property name under `schema` (nested objects and array items too).
void key_names(const base::SchemaNode& schema, std::vector<std::string>& out) {
  for (const auto& [key, node] : schema.properties) {
    out.push_back(key);
    key_names(*node, out);
  }
  if (schema.items) key_names(*schema.items, out);
}

// Whether every whole occurrence of `vt` in `conversation` lies inside a mention of one of
// `keys`: a key's name copied as a value (`renew` of "auto renew").
bool only_in_key_names(std::string_view conversation, std::string_view vt, const std::vector<std::string>& keys) {
  std::vector<std::pair<size_t, size_t>> names;
  for (const std::string& k : keys) {
    for (size_t at : all_mentions(conversation, k)) names.emplace_back(at, at + k.size());
  }
  bool any = false;
  for (size_t at = conversation.find(vt); at != std::string_view::npos; at = conversation.find(vt, at + 1)) {
    if (!span_start(conversation, at) || !span_end(conversation, at + vt.size())) continue;
    any = true;
    const bool inside = std::any_of(names.begin(), names.end(),
                                    [&](const auto& n) { return n.first <= at && at + vt.size() <= n.second; });
    if (!inside) return false;
  }
  return any;
}

// Whether `vt` is a whole unit of another member's (longer) value: `Carvalho` next to `Una Carvalho`.
bool part_of_other(const std::vector<Member>& members, const Member& self, std::string_view vt) {
  return std::any_of(members.begin(), members.end(), [&](const Member& m) {
    if (&m == &self) return false;
    const std::string other = copy_text(*m.value);
    return other.size() > vt.size() && whole_occurrences(other, vt) > 0;
  });
}

// What a round of repair_stated_values reads besides the members.
struct RoundInput {
  std::vector<std::string> array_items;  // the string and number items of array members
  std::vector<std::string> keys;         // every key name of the schema
  std::string_view text, conversation;
  bool scoped = false;
};

// One round of repair_stated_values over `members`; the number of values replaced.
size_t repair_round(std::vector<Member>& members, const RoundInput& in) {
  const std::string_view text = in.text, conversation = in.conversation;
  std::map<std::string, size_t, std::less<>> counts;
  for (const Member& m : members) ++counts[std::string(bare(copy_text(*m.value)))];
  for (const std::string& item : in.array_items) ++counts[item];
  size_t replaced = 0;
  for (const Member& m : members) {
    if (m.literal) continue;
    const std::string vt = copy_text(*m.value);
    const std::optional<std::string> stated = stated_value(text, m.key);
    if (!stated || *stated == vt) continue;
    const bool number = !(m.node->types & base::kSchemaString);
    const bool repeat = counts.find(bare(vt))->second > 1;
    const bool copy = !vt.empty() && whole_occurrences(conversation, vt) > 0;
    // A copy of what the request says for another call (outside the call's scope).
    const bool elsewhere = in.scoped && copy && whole_occurrences(text, vt) == 0;
    if (!repeat && !elsewhere) {
      if (copy) {
        // A copy stays, unless it is a part of the value stated for its key (`Berg` of `Una Berg`,
        // `is Vikram` of `Vikram Fontaine`), that value run on into the connecting text after it
        // (`Tomas Mansour and`), a part of another member's value or a key's name (no copy of
        // this member's value), or the stated value is quoted (the plainest statement there is).
        if (whole_occurrences(*stated, bare(vt)) == 0 && !runs_on(vt, *stated) && !quoted_in(text, *stated) &&
            !part_of_other(members, m, vt) && !only_in_key_names(conversation, vt, in.keys)) {
          continue;
        }
      } else if (equal_but_case(vt, *stated)) {
        continue;
      }
    }
    if (number) {
      std::optional<base::Json> n = plain_json_number(*stated, *m.node);
      if (!n || !m.node->accepts(*n)) continue;
      *m.value = std::move(*n);
    } else if (m.value->is_string()) {
      // A value the model wrote in other words ("2026-12-07" for "tomorrow") stays when the
      // member's schema refuses the stated one (a pattern).
      if (!m.node->accepts(base::Json(*stated))) continue;
      *m.value = base::Json(*stated);
    } else {
      continue;  // a number under a schema that also takes strings: left as it is
    }
    ++replaced;
  }
  return replaced;
}

// What the mentions of a key state, agreed: the one value when all agree; when they disagree,
// the one value the mentions on the first line of the text agree on (the request's own statement
// wins over a tool result's field of the same name, on the lines after it); none otherwise.
template <typename T>
class Agreement {
 public:
  explicit Agreement(std::string_view text) : line_end_(text.find('\n')) {}

  void add(size_t mention_end, T value) { found_.push_back({mention_end < line_end_, std::move(value)}); }

  std::optional<T> result() const {
    if (found_.empty()) return std::nullopt;
    if (agree(false)) return found_.front().second;
    if (line_end_ != std::string_view::npos && found_.front().first && agree(true)) return found_.front().second;
    return std::nullopt;
  }

 private:
  // Whether the values found (on the first line only) are all the same.
  bool agree(bool first_line_only) const {
    for (const auto& [first_line, value] : found_) {
      if ((first_line || !first_line_only) && value != found_.front().second) return false;
    }
    return true;
  }

  size_t line_end_;
  std::vector<std::pair<bool, T>> found_;  // (on the first line, value) per mention, in text order
};

}  // namespace

std::optional<std::string> stated_value(std::string_view text, std::string_view key, bool plainly) {
  Agreement<std::string> stated(text);
  for (size_t end : mention_ends(text, key)) {
    const size_t at = skip_gap(text, end);
    if (at == end || at - end > kMaxGap) continue;
    const std::string_view unit = unit_at(text, at);
    if (unit.empty()) continue;
    if (plainly) {
      const std::string_view gap = text.substr(end, at - end);
      const bool marked = gap.find_first_of(":=") != std::string_view::npos || gap.find(" set ") != std::string_view::npos ||
                          text[at] == '"' || text[at] == '\'';
      const bool looks = (unit[0] >= 'A' && unit[0] <= 'Z') || unit.find_first_of("0123456789") != std::string_view::npos;
      if (!marked && !looks) continue;
    }
    stated.add(end, std::string(unit));
  }
  return stated.result();
}

std::optional<std::vector<std::string>> stated_list(std::string_view text, std::string_view key,
                                                    const std::vector<std::string>& keys) {
  std::vector<size_t> key_starts;  // where a mention of some key name starts
  for (const std::string& k : keys) {
    for (size_t at : all_mentions(text, k)) key_starts.push_back(at);
  }
  Agreement<std::vector<std::string>> stated(text);
  for (size_t end : mention_ends(text, key)) {
    const size_t at = skip_gap(text, end);
    if (at == end || at - end > kMaxGap) continue;
    const TextList list = list_at(text, at);
    static constexpr std::string_view kLinks[] = {"with", "where", "using", "then", "and", "or"};
    size_t n = list.units.size();
    for (size_t u = 1; u < list.units.size(); ++u) {
      const bool link = std::find(std::begin(kLinks), std::end(kLinks), list.units[u]) != std::end(kLinks);
      if (link || std::find(key_starts.begin(), key_starts.end(), list.starts[u]) != key_starts.end()) {
        n = u;  // the list ends before the next key's name or a linking word
        break;
      }
    }
    bool ended = n < list.units.size() || list.closed;
    if (!ended && n > 0) {  // nothing but punctuation and spaces after it up to the line's end
      size_t j = list.end;
      while (j < text.size() && text[j] != '\n' && std::strchr(" ,.;:!?", text[j])) ++j;
      ended = j == text.size() || text[j] == '\n';
    }
    if (!ended || n == 0) continue;
    stated.add(end, std::vector<std::string>(list.units.begin(), list.units.begin() + static_cast<std::ptrdiff_t>(n)));
  }
  return stated.result();
}

std::optional<base::Json> stated_assignment(const base::Schema& schema, const base::Json& arguments,
                                            std::string_view text) {
  if (!arguments.is_object()) return std::nullopt;
  base::Json out = arguments;
  std::vector<Member> all, members;
  collect_members(out, schema.root(), all);
  for (const Member& m : all) {
    if (!m.literal) members.push_back(m);
  }
  if (members.size() < 2) return std::nullopt;
  std::vector<std::vector<size_t>> key_ends(members.size());
  std::vector<base::Json> values;
  for (size_t k = 0; k < members.size(); ++k) {
    key_ends[k] = mention_ends(text, members[k].key);
    values.push_back(*members[k].value);
  }
  constexpr size_t kFree = static_cast<size_t>(-1);
  std::vector<size_t> owner(members.size(), kFree);
  std::vector<bool> taken(members.size(), false);
  size_t free_value = kFree;
  for (size_t j = 0; j < members.size(); ++j) {
    const std::string vt = copy_text(values[j]);
    if (vt.empty()) return std::nullopt;
    std::set<size_t> keys;
    for (size_t at = text.find(vt); at != std::string_view::npos; at = text.find(vt, at + 1)) {
      if (!span_start(text, at) || !span_end(text, at + vt.size())) continue;
      for (size_t k = 0; k < members.size(); ++k) {
        for (size_t end : key_ends[k]) {
          if (connects(text, end, at)) keys.insert(k);
        }
      }
    }
    if (keys.empty() && free_value == kFree) {  // one value stated with no key: it takes the key left
      free_value = j;
      continue;
    }
    if (keys.size() != 1 || taken[*keys.begin()]) return std::nullopt;
    owner[j] = *keys.begin();
    taken[owner[j]] = true;
  }
  if (free_value != kFree) owner[free_value] = static_cast<size_t>(std::find(taken.begin(), taken.end(), false) - taken.begin());
  for (size_t j = 0; j < members.size(); ++j) *members[owner[j]].value = values[j];
  if (!schema.validate(out).ok()) return std::nullopt;
  return out;
}

size_t repair_stated_values(base::Json& arguments, const base::SchemaNode& schema, std::string_view text,
                            std::string_view conversation, bool scoped) {
  std::vector<Member> members;
  collect_members(arguments, schema, members);
  RoundInput in{{}, {}, text, conversation, scoped};
  collect_array_items(arguments, in.array_items);
  key_names(schema, in.keys);
  size_t replaced = 0;
  // Rounds: a value replaced by a copy can make another member's value a repeat.
  for (size_t round = 0; round <= members.size(); ++round) {
    const size_t before = replaced;
    replaced += repair_round(members, in);
    if (replaced == before) break;
  }
  return replaced;
}

namespace {

// An array of what each unit reads as under an item schema of strings or of numbers; none when
// the item schema is neither or a unit is not a plain number where numbers are due.
std::optional<base::Json> list_value(const std::vector<std::string>& units, const base::SchemaNode& items) {
  const bool strings = string_type(items);
  if (!strings && !number_type(items)) return std::nullopt;
  base::Json::Array out;
  for (const std::string& unit : units) {
    if (strings) {
      out.emplace_back(unit);
      continue;
    }
    std::optional<base::Json> n = plain_json_number(unit, items);
    if (!n) return std::nullopt;
    out.push_back(std::move(*n));
  }
  return base::Json::array(std::move(out));
}

// Calls f(key, member, schema) for every member of `v` that is not an object and has a declared
// schema, nested objects walked along `schema`'s properties; the number of calls that return true.
template <typename F>
size_t walk_members(base::Json& v, const base::SchemaNode& schema, const F& f) {
  if (!v.is_object()) return 0;
  size_t n = 0;
  for (auto& [key, member] : v.as_object()) {
    const base::SchemaNode* child = schema.property(key);
    if (!child) continue;
    if (member.is_object()) {
      n += walk_members(member, *child, f);
    } else if (f(key, member, *child)) {
      ++n;
    }
  }
  return n;
}

// The literal `stated` reads as under `node`: one of its enum values (a string, exactly), or for
// a boolean member true for true/on/yes/enabled and false for false/off/no/disabled; none otherwise.
std::optional<base::Json> stated_literal(const base::SchemaNode& node, std::string_view stated) {
  if (node.enum_values) {
    for (const base::Json& v : *node.enum_values) {
      if (v.is_string() && v.as_string() == stated) return v;
    }
    return std::nullopt;
  }
  if (node.types != base::kSchemaBoolean || node.const_value) return std::nullopt;
  for (std::string_view yes : {"true", "on", "yes", "enabled"}) {
    if (stated == yes) return base::Json(true);
  }
  for (std::string_view no : {"false", "off", "no", "disabled"}) {
    if (stated == no) return base::Json(false);
  }
  return std::nullopt;
}

// `member` becomes `value` when that is a change the member's schema accepts; whether it did.
bool replace_with(base::Json& member, const base::SchemaNode& node, std::optional<base::Json> value) {
  if (!value || *value == member || !node.accepts(*value)) return false;
  member = std::move(*value);
  return true;
}

}  // namespace

size_t repair_stated_literals(base::Json& arguments, const base::SchemaNode& schema, std::string_view text) {
  return walk_members(arguments, schema, [&](const std::string& key, base::Json& member, const base::SchemaNode& node) {
    const std::optional<std::string> stated = stated_value(text, key);
    return stated && replace_with(member, node, stated_literal(node, *stated));
  });
}

size_t repair_stated_lists(base::Json& arguments, const base::SchemaNode& schema, std::string_view text) {
  std::vector<std::string> keys;
  key_names(schema, keys);
  return walk_members(arguments, schema, [&](const std::string& key, base::Json& member, const base::SchemaNode& node) {
    if (!member.is_array() || !node.items) return false;
    const std::optional<std::vector<std::string>> stated = stated_list(text, key, keys);
    return stated && replace_with(member, node, list_value(*stated, *node.items));
  });
}

namespace {

bool letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Whether a clause boundary word starts at byte i of `text`: then, afterwards, after that, next,
// finally (any case, whole words).
size_t boundary_word(std::string_view text, size_t i) {
  static constexpr std::string_view kWords[] = {"after that", "afterwards", "then", "next", "finally"};
  if (i > 0 && letter(text[i - 1])) return 0;
  for (std::string_view w : kWords) {
    if (text.size() - i < w.size()) continue;
    bool same = true;
    for (size_t k = 0; k < w.size() && same; ++k) same = std::tolower(static_cast<unsigned char>(text[i + k])) == w[k];
    if (same && (i + w.size() == text.size() || !letter(text[i + w.size()]))) return w.size();
  }
  return 0;
}

// The clauses of `text`: cut at sentence ends and before boundary words.
std::vector<std::string_view> clauses(std::string_view text) {
  std::vector<std::string_view> out;
  size_t begin = 0;
  auto cut = [&](size_t end) {
    if (end > begin) out.push_back(text.substr(begin, end - begin));
    begin = end;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    if (std::strchr(".?!", text[i]) && i + 1 < text.size() && std::isspace(static_cast<unsigned char>(text[i + 1]))) {
      cut(i + 1);
    } else if (boundary_word(text, i) > 0) {
      cut(i);
      i += boundary_word(text, i) - 1;
    }
  }
  cut(text.size());
  return out;
}

}  // namespace

std::optional<std::string> call_scope(const std::vector<ChatMessage>& messages, std::string_view tool_name) {
  size_t last = messages.size();
  for (size_t i = 0; i < messages.size(); ++i) {
    if (messages[i].role == "user") last = i;
  }
  if (last == messages.size()) return std::nullopt;
  const std::vector<std::string_view> parts = clauses(messages[last].content);
  if (parts.empty()) return std::nullopt;
  std::vector<std::string> words;
  for (size_t at = 0; at <= tool_name.size();) {
    size_t end = tool_name.find('_', at);
    if (end == std::string_view::npos) end = tool_name.size();
    if (end - at >= 3) words.emplace_back(tool_name.substr(at, end - at));
    at = end + 1;
  }
  size_t best = 0, best_score = 0;
  bool tie = false;
  for (size_t c = 0; c < parts.size(); ++c) {
    size_t score = 0;
    for (const std::string& w : words) score += first_mention(parts[c], w) != kNotMentioned ? 1 : 0;
    if (score > best_score) {
      best = c;
      best_score = score;
      tie = false;
    } else if (score == best_score) {
      tie = true;
    }
  }
  if (parts.size() > 1 && (best_score == 0 || tie)) return std::nullopt;
  std::string scope(parts[best]);
  for (size_t i = last + 1; i < messages.size(); ++i) {
    if (messages[i].role == "tool") scope += "\n" + messages[i].content;
  }
  return scope;
}

size_t add_stated_arguments(base::Json& arguments, const base::SchemaNode& schema, std::string_view scope) {
  if (!arguments.is_object()) return 0;
  size_t added = 0;
  for (const auto& [key, node] : schema.properties) {
    if (arguments.find(key) || node->const_value) continue;
    std::optional<base::Json> value;
    if (node->enum_values || node->types == base::kSchemaBoolean) {  // a literal: the vocabulary is the evidence
      const std::optional<std::string> stated = stated_value(scope, key);
      if (stated) value = stated_literal(*node, *stated);
    } else if (string_type(*node) || number_type(*node)) {
      const std::optional<std::string> stated = stated_value(scope, key, true);
      if (stated) value = string_type(*node) ? std::optional<base::Json>(base::Json(*stated)) : plain_json_number(*stated, *node);
    }
    if (!value) continue;
    arguments.set(key, std::move(*value));
    ++added;
  }
  return added;
}

size_t drop_other_calls_arguments(base::Json& arguments, const base::SchemaNode& schema, std::string_view scope,
                                  std::string_view text) {
  if (!arguments.is_object()) return 0;
  base::Json::Object& members = arguments.as_object();
  const size_t before = members.size();
  std::erase_if(members, [&](const auto& m) {
    return schema.property(m.first) && !schema.is_required(m.first) && first_mention(scope, m.first) == kNotMentioned &&
           first_mention(text, m.first) != kNotMentioned;
  });
  return before - members.size();
}

}  // namespace dloop::engine::toolcall
