// The key check: after infilling, the call's string and number arguments may be re-assigned among
// their keys by the reverse question. Infilling asks "which value goes under this key" (values
// masked, keys given); a small model answers it worst when a request states several values. The
// key check writes the finished call once per assignment of those values to their keys (each valid
// for the schema), masks the keys instead, and keeps the assignment under which the model
// predicts the keys best ("which key does this value belong to"). See docs/tool-calls.md "Key
// check". Not thread-safe (one per request, like the infiller).
#pragma once

#include <span>
#include <vector>

#include "dloop/base/json.h"
#include "dloop/base/json_schema.h"
#include "dloop/base/status.h"
#include "infiller.h"

namespace dloop::engine::toolcall {

constexpr size_t kMaxKeyCheckValues = 4;  // at most 4! = 24 assignments (one forward pass each)

struct KeyCheckSpec {
  std::vector<FixedPiece> prefix;  // before the arguments: <tool_call>, {"name": "x", "arguments": 
  std::vector<FixedPiece> suffix;  // after them: }, </tool_call>, <|im_end|>
  const base::Schema* schema = nullptr;  // the arguments' schema: every assignment must validate
  int64_t answer_length = 0;       // the call is padded with end-of-text to this many tokens
};

struct KeyCheckResult {
  base::Json arguments;      // the best assignment (the arguments given when none is better)
  bool changed = false;      // arguments differ from the ones given
  int assignments = 0;       // assignments scored (0: the check did not apply)
  int64_t forward_passes = 0;
  double forward_ms = 0;
};

// The arguments' top-level string and number members (values not fixed by enum/const) are
// permuted among themselves; with fewer than 2 or more than kMaxKeyCheckValues such members, or a
// call that does not fit the context, the arguments come back unchanged with assignments 0.
base::Result<KeyCheckResult> check_keys(const InfillContext& ctx, std::span<const int32_t> prompt,
                                        const KeyCheckSpec& spec, const base::Json& arguments);

// The duplicate check, run before the key check: when two or more of those members hold the same
// value (a value written under a second key, where the request's own value for that key was
// missed), each of them in turn gets the value the model picks for it among the short spans of
// the conversation (spans.h: 1 to kDuplicateSpanWords words) that no other member holds and the
// schema accepts, in one pass with the rest of the call written out (a literal choice, as for an
// enum); then the call as decoded and each call with one member replaced are scored by the key
// check's reverse question, and the best is kept (ties keep the call as decoded). With
// with_assignments (the key check is on, and at most kMaxKeyCheckValues such members), every
// assignment of each of those calls' values to their keys is scored too, which does the key
// check's work (DuplicateCheckResult::assigned).
constexpr size_t kDuplicateSpanWords = 3;
constexpr size_t kDuplicateSpanBytes = 64;

struct DuplicateCheckResult {
  base::Json arguments;   // the arguments given, or with duplicated values replaced
  bool changed = false;   // a value was replaced
  int candidates = 0;     // calls scored by the reverse question (0: no duplicates, or no spans)
  bool assigned = false;  // the candidates included every assignment of the values to their keys
                          // (with at most kMaxKeyCheckValues members): the key check is done
  int64_t forward_passes = 0;
  double forward_ms = 0;
};

base::Result<DuplicateCheckResult> check_duplicates(const InfillContext& ctx, std::span<const int32_t> prompt,
                                                    const KeyCheckSpec& spec, const base::Json& arguments,
                                                    bool with_assignments = true);

}  // namespace dloop::engine::toolcall
