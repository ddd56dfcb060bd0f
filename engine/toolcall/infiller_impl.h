// Private to engine/toolcall/: the Infiller class shared by infiller.cpp (canvas, passes, slot
// commits) and layout.cpp (the schema walk that grows the layout). See infiller.h.
// Not thread-safe: one Infiller per request.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <tuple>

#include "infiller.h"
#include "schema_support.h"

namespace dloop::engine::toolcall::detail {

using base::SchemaNode;
using Clock = std::chrono::steady_clock;
inline double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

inline const SchemaNode& any_node() {
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
  double log_prior = 0;            // added to the candidate's score (copy repair's copies)
};

struct Slot {
  std::shared_ptr<const SlotAutomaton> aut;
  std::vector<int32_t> tokens;  // kMasked or committed
  bool is_number = false;
  bool integer = false;
  uint64_t min_length = 0;  // string slots: the schema's minLength (trailing spaces are dropped above it)
  int64_t max_length = -1;  // string slots: the schema's maxLength, -1 = none
  NumberRange range;
  bool grounded = false;  // only spans of the conversation (ground_values or x-dloop-grounded)
};

struct Piece {
  enum Kind { kText, kSpecial, kSlot, kChoice } kind = kText;
  std::string text;
  int32_t token = -1;
  int slot = -1;
  std::vector<Candidate> cands;  // kChoice
  bool blocking = false;         // kChoice: its candidates extend the layout
  // kChoice: another array item or the end; scored only once everything before it is committed,
  // at the first token where the candidates differ.
  bool array_continuation = false;
  // kChoice: candidates scored by the sum of their tokens' log-probabilities (plus log_prior)
  // instead of the mean (copy repair: candidates of nearly equal length).
  bool score_sum = false;
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
  void push_choice(std::vector<Candidate> cands, bool blocking, bool array_continuation = false);
  void push_text(const std::string& t);
  std::string lookahead() const;
  base::Result<int> make_string_slot(const SchemaNode& n);
  int64_t number_slot_width(bool integer, const NumberRange& range) const;
  // Canvas tokens that running w adds at the least (its text, slots at their widths, required
  // members, minItems items): what a choice's candidate needs to fit the context.
  int64_t min_tokens(const Work& w) const;
  int64_t text_tokens(const std::string& text) const;
  int64_t min_value_tokens(const SchemaNode& n, uint8_t types, bool skip_any_of, int depth) const;
  // Decoding
  void build_canvas();
  base::Status pass();
  // One masked slot position's best token and its renormalised confidence.
  struct Pred { size_t piece; size_t pos; int32_t token; double conf; };
  void commit_slots();
  void close_if_padding(const Slot& s, const SlotDp& dp, std::vector<Pred>& preds) const;
  std::vector<bool> candidates_fit(size_t piece) const;
  void resolve_choice(size_t piece, size_t cand);
  void propagate_and_finalize();
  void finalize_slot(size_t piece);
  bool offer_copies(size_t piece, const Slot& s, std::string& value);
  std::vector<std::string> near_spans(const Slot& s, const std::string& value);
  std::vector<std::string> completions(const Slot& s, const std::string& value);
  const std::string& prompt_text();
  const std::string& ground_text();
  void ground(const Slot& s, std::span<const int32_t> before, std::vector<int32_t>& allowed);
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
  size_t layout_end_ = 0;                     // canvas_ size before the padding of this pass
  std::vector<int64_t> piece_start_;          // canvas position of each piece (slot/choice regions)
  std::vector<std::vector<std::vector<int32_t>>> choice_tokens_;  // per piece, per candidate text
  std::vector<int8_t> choice_scored_;
  std::vector<int32_t> rows_;                 // canvas positions whose logits are computed
  std::vector<int32_t> row_of_;               // canvas position -> row, -1
  std::vector<float> logits_;                 // [rows x n_vocab]
  std::vector<double> lse_;                   // [rows] log-sum-exp without the mask token
  std::string prompt_text_;                   // the prompt's text (copy repair), built on first use
  std::string ground_text_;                   // its non-system turns (ground_values), built on first use
  bool ground_built_ = false;
  InfillResult result_;
  bool trace_ = std::getenv("DLOOP_TOOLCALL_TRACE") != nullptr;  // each pass's canvas on stderr
};

}  // namespace dloop::engine::toolcall::detail
