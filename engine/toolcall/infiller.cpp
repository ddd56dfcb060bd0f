// The infilling decoder; see infiller.h and docs/tool-calls.md.
// The layout is a list of pieces (committed text, special tokens, masked slots, pending choices)
// grown from a work stack that walks the schema; expansion stops at a choice that changes the
// layout, which is scored once everything before it is committed, so the model scores it on the
// exact prefix. Finished slots lose their padding and become text again, so the committed prefix is
// re-tokenised as the model saw such text in training.
#include "infiller.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>

#include "schema_support.h"

namespace dloop::engine::toolcall {

using base::SchemaNode;

std::string merge_tail(const std::string& text) {
  size_t i = text.size();
  auto punct = [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x80 && u > 0x20 && !std::isalnum(u);
  };
  while (i > 0 && punct(text[i - 1])) --i;
  if (i < text.size() && i > 0 && text[i - 1] == ' ') --i;
  return text.substr(i);
}

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

const SchemaNode& any_node() {
  static const SchemaNode node;
  return node;
}

struct Work {
  enum Kind { kText, kSpecial, kValue, kMembers, kArrayNext } kind = kText;
  std::string text;
  int32_t token = -1;
  const SchemaNode* node = nullptr;
  uint8_t types = 0;      // kValue: 0 = node->types
  bool skip_any_of = false;
  size_t index = 0;       // kMembers: next member
  bool first = true;      // kMembers: no member written yet
  int64_t count = 0;      // kArrayNext: items written
};

struct Candidate {
  std::vector<std::string> texts;  // scored as tail + text; the best text scores the candidate
  std::vector<Work> then;          // run in order when chosen
};

struct Slot {
  std::shared_ptr<const SlotAutomaton> aut;
  std::vector<int32_t> tokens;  // kMasked or committed
  bool is_number = false;
  bool integer = false;
  NumberRange range;
};

struct Piece {
  enum Kind { kText, kSpecial, kSlot, kChoice } kind = kText;
  std::string text;
  int32_t token = -1;
  int slot = -1;
  std::vector<Candidate> cands;  // kChoice
  bool blocking = false;         // kChoice: its candidates extend the layout
};

class Infiller {
 public:
  Infiller(const InfillContext& ctx, std::span<const int32_t> prompt, const InfillOptions& o)
      : ctx_(ctx), prompt_(prompt.begin(), prompt.end()), o_(o) {}

  base::Result<InfillResult> run(const InfillSpec& spec);

 private:
  // Layout
  base::Status expand();
  base::Status expand_value(const Work& w);
  void expand_members(const Work& w);
  void expand_array(const Work& w);
  void push_choice(std::vector<Candidate> cands, bool blocking);
  void push_text(const std::string& t);
  std::string lookahead() const;
  base::Result<int> make_string_slot(const SchemaNode& n);
  // Decoding
  void build_canvas();
  base::Status pass();
  void commit_slots();
  void resolve_choice(size_t piece, size_t cand);
  void propagate_and_finalize();
  void finalize_slot(size_t piece);
  void merge_text();
  bool pending() const;
  double logp(size_t row, int32_t token) const;

  const InfillContext& ctx_;
  std::vector<int32_t> prompt_;
  const InfillOptions& o_;
  std::vector<Work> stack_;  // back() runs next
  bool blocked_ = false;
  std::vector<Piece> pieces_;
  std::vector<Slot> slots_;
  std::map<std::tuple<uint64_t, int64_t, int64_t>, std::shared_ptr<const SlotAutomaton>> string_auts_;
  std::shared_ptr<const SlotAutomaton> number_auts_[2][2];

  // Canvas of the current pass.
  std::vector<int32_t> canvas_;
  std::vector<int64_t> piece_start_;          // canvas position of each piece (slot/choice regions)
  std::vector<std::vector<std::vector<int32_t>>> choice_tokens_;  // per piece, per candidate text
  std::vector<int8_t> choice_scored_;
  std::vector<int32_t> rows_;                 // canvas positions whose logits are computed
  std::vector<int32_t> row_of_;               // canvas position -> row, -1
  std::vector<float> logits_;                 // [rows x n_vocab]
  std::vector<double> lse_;                   // [rows] log-sum-exp without the mask token
  InfillResult result_;
  bool trace_ = std::getenv("DLOOP_TOOLCALL_TRACE") != nullptr;  // each pass's canvas on stderr
};

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

void Infiller::push_choice(std::vector<Candidate> cands, bool blocking) {
  if (cands.size() == 1) {  // nothing to choose
    for (auto it = cands[0].then.rbegin(); it != cands[0].then.rend(); ++it) stack_.push_back(*it);
    return;
  }
  Piece p;
  p.kind = Piece::kChoice;
  p.cands = std::move(cands);
  p.blocking = blocking;
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
  push_choice(std::move(cands), true);
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

void Infiller::build_canvas() {
  canvas_ = prompt_;
  piece_start_.assign(pieces_.size(), -1);
  choice_tokens_.assign(pieces_.size(), {});
  choice_scored_.assign(pieces_.size(), 0);
  rows_.clear();
  bool clean = true;  // every piece so far is committed
  for (size_t i = 0; i < pieces_.size(); ++i) {
    Piece& p = pieces_[i];
    if (p.kind == Piece::kText) {
      std::string text = p.text;
      if (i + 1 < pieces_.size() && pieces_[i + 1].kind == Piece::kChoice) {
        Piece& c = pieces_[i + 1];
        if (!c.blocking || clean || !o_.exact_prefix_choices) {
          c.text = merge_tail(text);  // the choice's tail for this pass
          text.resize(text.size() - c.text.size());
        }
      }
      for (int32_t t : ctx_.tokenizer.encode(text, false)) canvas_.push_back(t);
    } else if (p.kind == Piece::kSpecial) {
      canvas_.push_back(p.token);
    } else if (p.kind == Piece::kSlot) {
      piece_start_[i] = static_cast<int64_t>(canvas_.size());
      for (int32_t t : slots_[static_cast<size_t>(p.slot)].tokens) {
        if (t == kMasked) rows_.push_back(static_cast<int32_t>(canvas_.size()));
        canvas_.push_back(t == kMasked ? ctx_.vocab.mask : t);
      }
      clean = false;
    } else {  // choice
      const bool scored = !p.blocking || clean || !o_.exact_prefix_choices;
      const std::string tail = (i > 0 && pieces_[i - 1].kind == Piece::kText && scored) ? p.text : std::string();
      if (!scored) { clean = false; continue; }
      size_t len = 0;
      for (const Candidate& c : p.cands) {
        std::vector<std::vector<int32_t>> per_text;
        for (const std::string& t : c.texts) {
          per_text.push_back(ctx_.tokenizer.encode(tail + t, false));
          len = std::max(len, per_text.back().size());
        }
        for (auto& v : per_text) choice_tokens_[i].push_back(std::move(v));
      }
      piece_start_[i] = static_cast<int64_t>(canvas_.size());
      choice_scored_[i] = 1;
      for (size_t k = 0; k < len; ++k) {
        rows_.push_back(static_cast<int32_t>(canvas_.size()));
        canvas_.push_back(ctx_.vocab.mask);
      }
      clean = false;
    }
  }
  const auto answer = static_cast<int64_t>(canvas_.size() - prompt_.size());
  if (blocked_) {
    const int64_t target = std::max<int64_t>(o_.min_answer_length, answer + 16);
    canvas_.resize(prompt_.size() + static_cast<size_t>(target), ctx_.vocab.mask);
  } else if (answer < o_.min_answer_length) {
    canvas_.resize(prompt_.size() + static_cast<size_t>(o_.min_answer_length), ctx_.eos);
  }
  row_of_.assign(canvas_.size(), -1);
  for (size_t r = 0; r < rows_.size(); ++r) row_of_[static_cast<size_t>(rows_[r])] = static_cast<int32_t>(r);
}

double Infiller::logp(size_t row, int32_t token) const {
  const size_t V = static_cast<size_t>(ctx_.vocab.n_vocab);
  return static_cast<double>(logits_[row * V + static_cast<size_t>(token)]) - lse_[row];
}

base::Status Infiller::pass() {
  build_canvas();
  const ModelConfig& c = ctx_.model.config();
  if (static_cast<int64_t>(canvas_.size()) > c.n_ctx) {
    return base::invalid_argument("the prompt plus the tool-call canvas (" + std::to_string(canvas_.size()) +
                                  " tokens) exceeds the model's context length " + std::to_string(c.n_ctx));
  }
  const size_t V = static_cast<size_t>(c.n_vocab);
  if (rows_.empty()) return base::internal_error("tool-call infilling: a pass with nothing to decode");
  std::vector<int32_t> model_rows;
  for (int32_t p : rows_) model_rows.push_back(c.shift_logits ? std::max<int32_t>(p - 1, 0) : p);
  logits_.resize(rows_.size() * V);
  auto t0 = Clock::now();
  DLOOP_RETURN_IF_ERROR(ctx_.model.forward(ctx_.pool, canvas_, model_rows, logits_.data(), ctx_.state));
  result_.forward_ms += ms_since(t0);
  ++result_.forward_passes;
  if (trace_) {
    std::string shown;
    for (size_t p = prompt_.size(); p < canvas_.size(); ++p) {
      shown += canvas_[p] == ctx_.vocab.mask ? std::string("_") : "[" + ctx_.vocab.text[static_cast<size_t>(canvas_[p])] + "]";
    }
    std::fprintf(stderr, "pass %lld: %s\n", static_cast<long long>(result_.forward_passes), shown.c_str());
  }
  auto t1 = Clock::now();
  lse_.assign(rows_.size(), 0);
  for (size_t r = 0; r < rows_.size(); ++r) {
    const float* l = logits_.data() + r * V;
    double mx = -INFINITY, s = 0;
    for (size_t v = 0; v < V; ++v) if (static_cast<int32_t>(v) != ctx_.vocab.mask) mx = std::max(mx, static_cast<double>(l[v]));
    for (size_t v = 0; v < V; ++v) if (static_cast<int32_t>(v) != ctx_.vocab.mask) s += std::exp(static_cast<double>(l[v]) - mx);
    lse_[r] = mx + std::log(s);
  }
  commit_slots();
  // Choices: the best candidate by mean log-probability of its tokens at the region's positions.
  for (size_t i = pieces_.size(); i-- > 0;) {
    if (!choice_scored_[i]) continue;
    const Piece& p = pieces_[i];
    size_t k = 0, best = 0;
    double best_score = -INFINITY;
    for (size_t ci = 0; ci < p.cands.size(); ++ci) {
      for (size_t ti = 0; ti < p.cands[ci].texts.size(); ++ti, ++k) {
        const auto& toks = choice_tokens_[i][k];
        double s = 0;
        for (size_t j = 0; j < toks.size(); ++j) {
          s += logp(static_cast<size_t>(row_of_[static_cast<size_t>(piece_start_[i]) + j]), toks[j]);
        }
        s /= static_cast<double>(std::max<size_t>(toks.size(), 1));
        if (s > best_score) { best_score = s; best = ci; }
      }
    }
    resolve_choice(i, best);
  }
  result_.sampling_ms += ms_since(t1);
  DLOOP_RETURN_IF_ERROR(expand());
  propagate_and_finalize();
  return base::Status();
}

void Infiller::commit_slots() {
  struct Pred { size_t piece; size_t pos; int32_t token; double conf; };
  // Per slot, the predictions of its masked positions in order (left to right).
  std::vector<std::vector<Pred>> per_slot;
  for (size_t i = 0; i < pieces_.size(); ++i) {
    if (pieces_[i].kind != Piece::kSlot) continue;
    Slot& s = slots_[static_cast<size_t>(pieces_[i].slot)];
    SlotDp dp = slot_dp(*s.aut, s.tokens);
    per_slot.emplace_back();
    for (size_t j = 0; j < s.tokens.size(); ++j) {
      if (s.tokens[j] != kMasked) {
        if (o_.slot_left_to_right && !per_slot.back().empty()) break;  // only the first masked run
        continue;
      }
      const auto row = static_cast<size_t>(row_of_[static_cast<size_t>(piece_start_[i]) + j]);
      std::vector<int32_t> allowed = slot_allowed(*s.aut, dp, j);
      DLOOP_ASSERT(!allowed.empty());
      int32_t best = allowed[0];
      double best_l = -INFINITY, sum = 0;
      for (int32_t t : allowed) {
        const double l = logp(row, t);
        if (l > best_l) { best_l = l; best = t; }
      }
      for (int32_t t : allowed) sum += std::exp(logp(row, t) - best_l);
      per_slot.back().push_back({i, j, best, allowed.size() == 1 ? 1.0 : 1.0 / sum});
    }
  }
  auto commit = [&](const Pred& p) {
    Slot& s = slots_[static_cast<size_t>(pieces_[p.piece].slot)];
    SlotDp dp = slot_dp(*s.aut, s.tokens);
    if (!slot_allows(*s.aut, dp, p.pos, p.token)) return false;
    s.tokens[p.pos] = p.token;
    return true;
  };
  if (o_.slot_left_to_right) {
    // Each slot commits its leftmost masked positions while they are confident; the most
    // confident leftmost position overall is committed when no slot has one.
    size_t committed = 0;
    const Pred* fallback = nullptr;
    for (const auto& preds : per_slot) {
      if (preds.empty()) continue;
      if (!fallback || preds[0].conf > fallback->conf) fallback = &preds[0];
      for (const Pred& p : preds) {
        if (p.conf < o_.threshold || !commit(p)) break;
        ++committed;
      }
    }
    if (committed == 0 && fallback) commit(*fallback);
    return;
  }
  std::vector<Pred> preds;
  for (const auto& v : per_slot) preds.insert(preds.end(), v.begin(), v.end());
  if (preds.empty()) return;
  std::stable_sort(preds.begin(), preds.end(), [](const Pred& a, const Pred& b) { return a.conf > b.conf; });
  size_t take = 0;
  while (take < preds.size() && preds[take].conf >= o_.threshold) ++take;
  take = std::max<size_t>(take, 1);
  if (o_.max_commits_per_pass > 0) take = std::min<size_t>(take, static_cast<size_t>(o_.max_commits_per_pass));
  for (size_t k = 0; k < take; ++k) commit(preds[k]);
}

void Infiller::resolve_choice(size_t i, size_t cand) {
  Piece& p = pieces_[i];
  if (!p.blocking) {
    // A literal: its single text work becomes committed text in place.
    const std::string text = p.cands[cand].then[0].text;
    p.kind = Piece::kText;
    p.text = text;
    p.cands.clear();
    merge_text();
    return;
  }
  std::vector<Work> then = std::move(p.cands[cand].then);
  pieces_.erase(pieces_.begin() + static_cast<long>(i));
  blocked_ = false;
  for (auto it = then.rbegin(); it != then.rend(); ++it) stack_.push_back(*it);
}

void Infiller::propagate_and_finalize() {
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < pieces_.size(); ++i) {
      if (pieces_[i].kind != Piece::kSlot) continue;
      Slot& s = slots_[static_cast<size_t>(pieces_[i].slot)];
      for (size_t j = 0; j < s.tokens.size(); ++j) {
        if (s.tokens[j] != kMasked) continue;
        SlotDp dp = slot_dp(*s.aut, s.tokens);
        auto allowed = slot_allowed(*s.aut, dp, j, 2);
        if (allowed.size() == 1) { s.tokens[j] = allowed[0]; changed = true; }
      }
      if (std::find(s.tokens.begin(), s.tokens.end(), kMasked) == s.tokens.end()) {
        finalize_slot(i);
        changed = true;
        break;
      }
    }
  }
}

void Infiller::finalize_slot(size_t i) {
  const Slot& s = slots_[static_cast<size_t>(pieces_[i].slot)];
  std::string text;
  for (int32_t t : s.tokens) text += ctx_.vocab.text[static_cast<size_t>(t)];
  if (s.is_number) {
    while (!text.empty() && text.back() == ' ') text.pop_back();
    text = clamp_number_text(text, s.range, s.integer);
  } else {
    const size_t q = text.rfind('"');
    DLOOP_ASSERT(q != std::string::npos);
    text.resize(q + 1);
  }
  pieces_[i].kind = Piece::kText;
  pieces_[i].text = text;
  pieces_[i].slot = -1;
  merge_text();
}

void Infiller::merge_text() {
  std::vector<Piece> out;
  for (Piece& p : pieces_) {
    if (p.kind == Piece::kText && !out.empty() && out.back().kind == Piece::kText) {
      out.back().text += p.text;
    } else {
      out.push_back(std::move(p));
    }
  }
  pieces_ = std::move(out);
}

base::Result<InfillResult> Infiller::run(const InfillSpec& spec) {
  std::vector<Work> init;
  auto add_fixed = [&](const FixedPiece& f) {
    Work w;
    if (f.special >= 0) { w.kind = Work::kSpecial; w.token = f.special; } else { w.text = f.text; }
    init.push_back(w);
  };
  for (const FixedPiece& f : spec.prefix) add_fixed(f);
  Work root;
  root.kind = Work::kValue;
  root.node = spec.root;
  root.types = spec.root_types;
  init.push_back(root);
  for (const FixedPiece& f : spec.suffix) add_fixed(f);
  for (auto it = init.rbegin(); it != init.rend(); ++it) stack_.push_back(*it);
  DLOOP_RETURN_IF_ERROR(expand());
  propagate_and_finalize();
  for (int guard = 0; pending(); ++guard) {
    if (guard > 100000) return base::internal_error("tool-call infilling did not converge");
    DLOOP_RETURN_IF_ERROR(pass());
  }
  for (const Piece& p : pieces_) {
    if (p.kind == Piece::kText) {
      result_.text += p.text;
      for (int32_t t : ctx_.tokenizer.encode(p.text, false)) result_.answer.push_back(t);
    } else {
      result_.answer.push_back(p.token);
    }
  }
  return std::move(result_);
}

}  // namespace

base::Result<InfillResult> infill(const InfillContext& ctx, std::span<const int32_t> prompt, const InfillSpec& spec,
                                  const InfillOptions& options) {
  if (ctx.vocab.mask < 0) return base::invalid_argument("the model has no mask token");
  Infiller f(ctx, prompt, options);
  return f.run(spec);
}

}  // namespace dloop::engine::toolcall
