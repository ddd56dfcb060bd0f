// The layout half of the infilling decoder: the work stack that walks the schema and appends
// committed text, masked slots and pending choices (optional members, array items, alternatives,
// literals). See infiller.h and docs/tool-calls.md "Layout". Not thread-safe (one per request).
#include "infiller_impl.h"
#include "member_order.h"

#include <algorithm>
#include <limits>

namespace dloop::engine::toolcall::detail {

void Infiller::push_text(const std::string& t) {
  if (t.empty()) return;
  if (!pieces_.empty() && pieces_.back().kind == Piece::kText) {
    pieces_.back().text += t;
  } else {
    Piece p;
    p.text = t;
    pieces_.push_back(std::move(p));
  }
}

void Infiller::push_choice(std::vector<Candidate> cands, bool blocking, bool array_continuation) {
  if (cands.size() == 1) {  // nothing to choose
    for (auto it = cands[0].then.rbegin(); it != cands[0].then.rend(); ++it) stack_.push_back(*it);
    return;
  }
  Piece p;
  p.kind = Piece::kChoice;
  p.cands = std::move(cands);
  p.blocking = blocking;
  p.array_continuation = array_continuation;
  pieces_.push_back(std::move(p));
  blocked_ = blocking;
}

std::string Infiller::lookahead() const {
  std::string out;
  for (auto it = stack_.rbegin(); it != stack_.rend() && it->kind == Work::kText; ++it) out += it->text;
  return out;
}

base::Result<int> Infiller::make_string_slot(const SchemaNode& n) {
  const uint64_t min_len = n.min_length.value_or(0);
  int64_t budget = o_.string_budget;
  if (n.max_length) budget = std::min<int64_t>(budget, static_cast<int64_t>(*n.max_length) + 1);
  budget = std::max<int64_t>(budget, 1);
  for (;;) {
    auto key = std::make_tuple(min_len, n.max_length ? static_cast<int64_t>(*n.max_length) : -1, budget);
    auto& aut = string_auts_[key];
    if (!aut) aut = SlotAutomaton::string(ctx_.vocab, min_len, n.max_length, budget);
    std::vector<int32_t> masks(static_cast<size_t>(budget), kMasked);
    if (slot_dp(*aut, masks).feasible) {
      Slot s;
      s.aut = aut;
      s.tokens = std::move(masks);
      s.min_length = min_len;
      s.max_length = n.max_length ? static_cast<int64_t>(*n.max_length) : -1;
      s.grounded = o_.ground_values || n.grounded;
      slots_.push_back(std::move(s));
      return static_cast<int>(slots_.size() - 1);
    }
    if (budget > 8192) return base::invalid_argument("no string of the required length fits the vocabulary");
    budget *= 2;
  }
}

int64_t Infiller::number_slot_width(bool integer, const NumberRange& range) const {
  int64_t budget = o_.number_budget;
  if (integer && range.lo > -1e15 && range.hi < 1e15) {
    const auto digits = static_cast<int64_t>(std::max(std::to_string(static_cast<int64_t>(range.lo)).size(),
                                                      std::to_string(static_cast<int64_t>(range.hi)).size()));
    budget = std::min<int64_t>(budget, digits);
  }
  return std::max<int64_t>(budget, 1);
}

int64_t Infiller::min_value_tokens(const SchemaNode& n, uint8_t types, bool skip_any_of, int depth) const {
  if (depth > 16) return 0;  // deeper than any layout that fits a context; not worth counting
  if (!n.any_of.empty() && !skip_any_of) {
    int64_t best = std::numeric_limits<int64_t>::max();
    for (const auto& alt : n.any_of) best = std::min(best, min_value_tokens(*alt, alt->types, false, depth + 1));
    return best;
  }
  const uint8_t t = types ? types : n.types;
  if (n.enum_values || n.const_value || (count_types(t) == 1 && (t & base::kSchemaBoolean))) {
    int64_t best = std::numeric_limits<int64_t>::max();  // the shortest literal
    for (const std::string& lit : literal_candidates(n, t)) best = std::min(best, text_tokens(lit));
    return best == std::numeric_limits<int64_t>::max() ? 1 : best;
  }
  if (count_types(t) != 1 || (t & base::kSchemaNull)) return 1;  // a choice of types: the cheapest is a literal
  if (t & base::kSchemaString) {
    int64_t budget = o_.string_budget;
    if (n.max_length) budget = std::min<int64_t>(budget, static_cast<int64_t>(*n.max_length) + 1);
    return 1 + std::max<int64_t>(budget, 1);  // the opening quote and the slot
  }
  if (t & (base::kSchemaNumber | base::kSchemaInteger)) {
    const bool integer = !(t & base::kSchemaNumber);
    auto range = number_range(n, integer);
    return range ? number_slot_width(integer, *range) : 1;
  }
  if (t & base::kSchemaObject) {
    int64_t total = 2;  // { }
    for (const std::string& r : n.required) {
      total += static_cast<int64_t>(ctx_.tokenizer.encode(", " + base::json_quote(r) + ": ", false).size());
      const SchemaNode* child = n.property(r);
      if (child) total += min_value_tokens(*child, child->types, false, depth + 1);
    }
    return total;
  }
  const SchemaNode* items = n.items ? n.items.get() : &any_node();
  const auto k = static_cast<int64_t>(n.min_items.value_or(0));
  return 2 + k * (1 + min_value_tokens(*items, items->types, false, depth + 1));  // [ ], items and commas
}

int64_t Infiller::text_tokens(const std::string& text) const {
  return static_cast<int64_t>(ctx_.tokenizer.encode(text, false).size());
}

int64_t Infiller::min_tokens(const Work& w) const {
  switch (w.kind) {
    case Work::kText: return text_tokens(w.text);
    case Work::kSpecial: return 1;
    case Work::kValue: return min_value_tokens(*w.node, w.types, w.skip_any_of, 0);
    case Work::kMembers: {
      int64_t total = 1;  // }
      const SchemaNode& n = *w.node;
      size_t j = 0;
      for (const auto& [name, child] : n.properties) {
        if (j++ >= w.index && n.is_required(name)) {
          total += static_cast<int64_t>(ctx_.tokenizer.encode(", " + base::json_quote(name) + ": ", false).size()) +
                   min_value_tokens(*child, child->types, false, 1);
        }
      }
      return total;
    }
    case Work::kArrayNext: {
      const SchemaNode& n = *w.node;
      const SchemaNode* items = n.items ? n.items.get() : &any_node();
      const int64_t left = std::max<int64_t>(0, static_cast<int64_t>(n.min_items.value_or(0)) - w.count);
      // ], items and commas; and while the next item is still to be decided, the masked region of
      // that choice, as long as its longest candidate (", " and how an item starts)
      int64_t region = 1;
      for (const std::string& st : start_texts(*items, items->any_of.empty() ? items->types
                                                                              : static_cast<uint8_t>(base::kSchemaAnyType))) {
        region = std::max(region, text_tokens(", " + st));
      }
      return std::max<int64_t>(1, region - 1) + left * (1 + min_value_tokens(*items, items->types, false, 1));
    }
  }
  return 0;
}

base::Status Infiller::expand_value(const Work& w) {
  const SchemaNode& n = *w.node;
  if (!n.any_of.empty() && !w.skip_any_of) {
    std::vector<Candidate> cands;
    for (const auto& alt : n.any_of) {
      Work v;
      v.kind = Work::kValue;
      v.node = alt.get();
      cands.push_back({start_texts(*alt, alt->types), {v}});
    }
    push_choice(std::move(cands), true);
    return base::Status();
  }
  const uint8_t t = w.types ? w.types : n.types;
  if (n.enum_values || n.const_value || (count_types(t) == 1 && (t & base::kSchemaBoolean))) {
    std::vector<Candidate> cands;
    const bool prior = o_.mention_log_prior > 0 && !o_.mention_text.empty();
    for (std::string& lit : literal_candidates(n, t)) {
      Work text;
      text.text = lit;
      // The mention prior: a string literal the request states (as whole words) gains it.
      double log_prior = 0;
      if (prior && lit.size() > 2 && lit.front() == '"') {
        auto v = base::Json::parse(lit);
        if (v.ok() && v->is_string() && first_mention(o_.mention_text, v->as_string()) != kNotMentioned) {
          log_prior = o_.mention_log_prior;
        }
      }
      cands.push_back({{lit}, {text}, log_prior});
    }
    if (cands.empty()) return base::invalid_argument("no enum/const value satisfies the schema");
    if (cands.size() == 1) {
      push_text(cands[0].texts[0]);
    } else {
      push_choice(std::move(cands), false);
    }
    return base::Status();
  }
  if (count_types(t) > 1) {
    std::vector<Candidate> cands;
    for (uint8_t bit : {base::kSchemaString, base::kSchemaNumber, base::kSchemaInteger, base::kSchemaBoolean,
                        base::kSchemaNull, base::kSchemaObject, base::kSchemaArray}) {
      if (!(t & bit)) continue;
      if (bit == base::kSchemaInteger && (t & base::kSchemaNumber)) continue;
      Work v = w;
      v.types = bit;
      v.skip_any_of = true;
      cands.push_back({start_texts(n, bit), {v}});
    }
    push_choice(std::move(cands), true);
    return base::Status();
  }
  if (t & base::kSchemaString) {
    push_text("\"");
    DLOOP_ASSIGN_OR_RETURN(int id, make_string_slot(n));
    Piece p;
    p.kind = Piece::kSlot;
    p.slot = id;
    pieces_.push_back(std::move(p));
  } else if (t & (base::kSchemaNumber | base::kSchemaInteger)) {
    const bool integer = !(t & base::kSchemaNumber);
    auto range = number_range(n, integer);
    if (!range) return base::invalid_argument("the bounds admit no number");
    auto& aut = number_auts_[integer][range->allow_minus()];
    if (!aut) aut = SlotAutomaton::number(ctx_.vocab, integer, range->allow_minus());
    const int64_t budget = number_slot_width(integer, *range);
    Slot s;
    s.aut = aut;
    s.tokens.assign(static_cast<size_t>(std::max<int64_t>(budget, 1)), kMasked);
    s.is_number = true;
    s.integer = integer;
    s.range = *range;
    s.grounded = o_.ground_values || n.grounded;
    if (!slot_dp(*aut, s.tokens).feasible) return base::invalid_argument("the vocabulary cannot spell a number");
    slots_.push_back(std::move(s));
    Piece p;
    p.kind = Piece::kSlot;
    p.slot = static_cast<int>(slots_.size() - 1);
    pieces_.push_back(std::move(p));
  } else if (t & base::kSchemaNull) {
    push_text("null");
  } else if (t & base::kSchemaObject) {
    push_text("{");
    Work m;
    m.kind = Work::kMembers;
    m.node = &n;
    stack_.push_back(m);
  } else if (t & base::kSchemaArray) {
    push_text("[");
    Work a;
    a.kind = Work::kArrayNext;
    a.node = &n;
    stack_.push_back(a);
  } else {
    return base::invalid_argument("no type admitted");
  }
  return base::Status();
}

void Infiller::expand_members(const Work& w) {
  const SchemaNode& n = *w.node;
  std::vector<std::pair<std::string, const SchemaNode*>> members;
  for (const auto& [name, child] : n.properties) members.emplace_back(name, child.get());
  for (const std::string& r : n.required) {
    if (!n.property(r)) {
      members.emplace_back(r, n.additional == SchemaNode::Additional::kSchema ? n.additional_schema.get() : &any_node());
    }
  }
  // The mention prior: a candidate that writes a member the request names next gains the prior; it
  // loses the prior for each such member it leaves out (those before it; all that remain: `}`).
  const bool prior = o_.mention_log_prior > 0 && !o_.mention_text.empty();
  std::vector<bool> named(members.size(), false);
  std::vector<double> left_out(members.size() + 1, 0.0);
  for (size_t j = w.index; j < members.size(); ++j) {
    named[j] = prior && first_mention(o_.mention_text, members[j].first) != kNotMentioned;
    left_out[j + 1] = left_out[j] - (named[j] ? o_.mention_log_prior : 0.0);
  }
  std::vector<Candidate> cands;
  bool closed_by_required = false;
  for (size_t j = w.index; j < members.size(); ++j) {
    const std::string key = (w.first ? "" : ", ") + base::json_quote(members[j].first) + ":";
    Work text, value, next;
    text.text = key + " ";
    value.kind = Work::kValue;
    value.node = members[j].second;
    next.kind = Work::kMembers;
    next.node = &n;
    next.index = j + 1;
    next.first = false;
    cands.push_back({{key}, {text, value, next}, left_out[j] + (named[j] ? o_.mention_log_prior : 0.0)});
    if (n.is_required(members[j].first)) { closed_by_required = true; break; }
  }
  if (!closed_by_required) {
    Work close;
    close.text = "}";
    cands.push_back({{"}" + lookahead()}, {close}, left_out[members.size()]});
  }
  push_choice(std::move(cands), true);
}

void Infiller::expand_array(const Work& w) {
  const SchemaNode& n = *w.node;
  const SchemaNode* items = n.items ? n.items.get() : &any_node();
  const auto min_items = static_cast<int64_t>(n.min_items.value_or(0));
  int64_t cap = std::max<int64_t>(kMaxArrayItems, min_items);
  if (n.max_items) cap = std::min<int64_t>(cap, static_cast<int64_t>(*n.max_items));
  std::vector<Candidate> cands;
  const std::string sep = w.count > 0 ? ", " : "";
  if (w.count < cap) {
    Candidate c;
    for (const std::string& s : start_texts(*items, items->any_of.empty() ? items->types : static_cast<uint8_t>(base::kSchemaAnyType))) {
      c.texts.push_back(sep + s);
    }
    Work text, value, next;
    text.text = sep;
    value.kind = Work::kValue;
    value.node = items;
    next = w;
    next.count = w.count + 1;
    c.then = {text, value, next};
    cands.push_back(std::move(c));
  }
  if (w.count >= min_items) {
    Work close;
    close.text = "]";
    cands.push_back({{"]" + lookahead()}, {close}});
  }
  // Another item or the end: decided once the items before are committed, at the first token
  // where the candidates differ (`,` or `]`), not by their mean log-probability (which favours
  // the longer candidate when its later tokens are predictable).
  push_choice(std::move(cands), true, /*array_continuation=*/true);
}

base::Status Infiller::expand() {
  while (!blocked_ && !stack_.empty()) {
    Work w = std::move(stack_.back());
    stack_.pop_back();
    switch (w.kind) {
      case Work::kText: push_text(w.text); break;
      case Work::kSpecial: {
        Piece p;
        p.kind = Piece::kSpecial;
        p.token = w.token;
        pieces_.push_back(std::move(p));
        break;
      }
      case Work::kValue: DLOOP_RETURN_IF_ERROR(expand_value(w)); break;
      case Work::kMembers: expand_members(w); break;
      case Work::kArrayNext: expand_array(w); break;
    }
  }
  return base::Status();
}

bool Infiller::pending() const {
  if (blocked_ || !stack_.empty()) return true;
  for (const Piece& p : pieces_) {
    if (p.kind == Piece::kSlot || p.kind == Piece::kChoice) return true;
  }
  return false;
}

}  // namespace dloop::engine::toolcall::detail
