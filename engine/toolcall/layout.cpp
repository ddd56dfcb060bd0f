// The layout half of the infilling decoder: the work stack that walks the schema and appends
// committed text, masked slots and pending choices (optional members, array items, alternatives,
// literals). See infiller.h and docs/tool-calls.md "Layout". Not thread-safe (one per request).
#include "infiller_impl.h"

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
    for (std::string& lit : literal_candidates(n, t)) {
      Work text;
      text.text = lit;
      cands.push_back({{lit}, {text}});
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
    int64_t budget = o_.number_budget;
    if (integer && range->lo > -1e15 && range->hi < 1e15) {
      const auto digits = static_cast<int64_t>(std::max(std::to_string(static_cast<int64_t>(range->lo)).size(),
                                                        std::to_string(static_cast<int64_t>(range->hi)).size()));
      budget = std::min<int64_t>(budget, digits);
    }
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
    cands.push_back({{key}, {text, value, next}});
    if (n.is_required(members[j].first)) { closed_by_required = true; break; }
  }
  if (!closed_by_required) {
    Work close;
    close.text = "}";
    cands.push_back({{"}" + lookahead()}, {close}});
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
