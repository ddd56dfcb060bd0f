// The infilling decoder: lays out the JSON skeleton of one value (a call's arguments or a JSON
// answer) as committed tokens after the prompt, masks only the value slots, and fills them by
// threshold decoding with per-position allowed-token sets; choices that change the layout
// (optional properties, array length, anyOf/type alternatives) and literal choices (enum, const,
// boolean) are scored by the model over their candidates. See docs/tool-calls.md.
// Not thread-safe: one call at a time per ForwardState.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "dloop/base/json_schema.h"
#include "dloop/base/status.h"
#include "dloop/engine/forwarder.h"
#include "dloop/engine/model.h"
#include "dloop/engine/tokenizer.h"
#include "slot_automaton.h"

namespace dloop::engine::toolcall {

// A committed piece of the answer: a special token (id >= 0) or text (encoded without specials).
struct FixedPiece {
  std::string text;
  int32_t special = -1;
};

struct InfillSpec {
  std::vector<FixedPiece> prefix;  // before the value, e.g. <tool_call> and {"name": "x", "arguments": 
  const base::SchemaNode* root = nullptr;
  uint8_t root_types = 0;          // 0 = root->types
  std::vector<FixedPiece> suffix;  // after the value, e.g. } </tool_call> <|im_end|>
};

struct InfillOptions {
  double threshold = 0.9;           // commit slot positions with renormalised confidence >= this
  int64_t max_commits_per_pass = 0; // 0 = unlimited
  int64_t min_answer_length = 96;   // the answer region is padded with EOS up to this length
  int64_t string_budget = 24;       // positions of a string slot (grown when minLength needs more)
  int64_t number_budget = 12;       // positions of a number slot
  // Layout choices (optional properties, array length, alternatives) are scored only once every
  // slot before them is committed (exact prefix, one more pass per choice) when true; otherwise in
  // the first pass that shows them, with the slots before them still masked.
  bool exact_prefix_choices = false;
  // Slots are filled from the left: each pass commits, per slot, its leftmost masked positions
  // while their confidence reaches the threshold (all slots in parallel). Otherwise any masked
  // position may be committed (global threshold over all slot positions).
  bool slot_left_to_right = true;
  // Copy repair: a finished string or number value that is not found verbatim in the prompt's
  // text, while spans of the prompt within a small edit distance are (a dropped, doubled or
  // changed character of an ID, a date, a name), becomes a choice between the decoded value and
  // those spans, scored by the model in the next pass like an enum. A value found verbatim, or
  // with no near span, is kept as decoded.
  bool copy_repair = true;
  // Grounded values: string and number slots (every one with this, else those whose schema has
  // `x-dloop-grounded: true`) may only hold a span of the conversation outside the system turn
  // (user messages, earlier calls, tool results), starting and ending at word boundaries. Each
  // position's allowed tokens are those that extend the committed text along such a span (the
  // closing quote or the padding once it is a whole span). A grounded slot is decoded left to
  // right; where no span fits what is committed, its positions are decoded as without grounding.
  bool ground_values = false;
  // Mention prior (docs/tool-calls.md "Mention prior"), with "mentioned" as member_order.h's
  // first_mention over mention_text: at an object's member choice a candidate gains
  // mention_log_prior when the member it writes next is mentioned and loses it for every mentioned
  // optional member it leaves out; at an enum/const choice a mentioned string literal gains it.
  // 0 or an empty text: no prior.
  std::string mention_text;
  double mention_log_prior = 0;
};

struct InfillResult {
  std::string text;                 // the non-special pieces, padding removed (prefix + value + suffix)
  std::vector<int32_t> answer;      // the final answer tokens (padding removed, before EOS fill)
  int64_t forward_passes = 0;
  double forward_ms = 0;
  double sampling_ms = 0;
};

struct InfillContext {
  const Model& model;
  Forwarder& forwarder;  // every pass keeps the prompt's tokens: its rows may be cached
  const Tokenizer& tokenizer;
  const VocabInfo& vocab;
  int32_t eos = -1;
};

base::Result<InfillResult> infill(const InfillContext& ctx, std::span<const int32_t> prompt, const InfillSpec& spec,
                                  const InfillOptions& options);

// The suffix of `text` that BPE pre-tokenisation may merge with what follows: its trailing run of
// ASCII punctuation and the space before it (" {", "\"", ": ["). Candidates are scored as
// tail + candidate so they are tokenised as the model saw them in training.
std::string merge_tail(const std::string& text);

}  // namespace dloop::engine::toolcall
