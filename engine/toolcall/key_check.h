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

}  // namespace dloop::engine::toolcall
