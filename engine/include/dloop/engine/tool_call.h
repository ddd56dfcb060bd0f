// Tool calls and schema-constrained answers by infilling (docs/tool-calls.md). The answer canvas
// after the prompt holds the call's JSON skeleton as committed tokens (tool-call markers, braces,
// keys, punctuation, chosen enum/boolean literals); only value slots are masked, each with a token
// budget and a per-position allowed-token set kept completable by a dynamic program over the
// slot's positions. Choices among alternatives (call or answer, which tool, enum values, optional
// properties, array length, anyOf branches) are scored by the model over the candidates. The
// returned arguments always parse and validate against the chosen tool's schema.
// Not a general JSON Schema engine: the decodable subset is docs/json-schema.md minus `pattern`
// and minus `anyOf` next to other constraints (both rejected with the schema path).
// Thread-safety: Engine::tool_call() serialises on the engine like generate().
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dloop/base/json.h"
#include "dloop/base/status.h"
#include "dloop/engine/engine.h"

namespace dloop::engine {

enum class ReasoningEffort { kInstant, kLow, kMedium, kHigh };
std::optional<ReasoningEffort> parse_reasoning_effort(std::string_view name);
const char* reasoning_effort_name(ReasoningEffort effort);

// One row of the preset table (engine/toolcall/presets.cpp, documented in docs/tool-calls.md).
struct ReasoningPreset {
  ReasoningEffort effort;
  double threshold;                // commit every slot position whose renormalised confidence >= this
  int64_t max_commits_per_pass;    // 0 = no limit (threshold only)
  bool separate_name_pass;         // score tool names on a canvas with "<tool_call>{"name": "" committed
  bool exact_prefix_choices;       // score optional properties etc. only after the slots before them are filled
  bool slots_left_to_right;        // fill each value slot from its left end; false: the most confident
                                   // masked position of any slot first (slower, more exact values)
  int64_t thinking_tokens;         // thinking span before the call (0: the bundled model was not trained to think)
  int64_t answer_block_length;     // free-text answers: threshold decoding in blocks of this length
  CacheMode cache;                 // K/V cache of the passes (forwarder.h)
  PromptReuse prompt_reuse;        // prompt segments kept in the Engine's PromptCache
  bool key_check;                  // re-assign string/number values among their keys (ToolCallRequest::key_check)
};
const ReasoningPreset& reasoning_preset(ReasoningEffort effort);

struct ToolDefinition {
  std::string name;
  std::string description;
  base::Json parameters = base::Json::object();  // JSON Schema of the arguments (an object schema)
};

struct ToolChoice {
  enum class Kind { kAuto, kRequired, kNone, kNamed };
  Kind kind = Kind::kAuto;
  std::string name;  // kNamed only
  static ToolChoice named(std::string n) { return {Kind::kNamed, std::move(n)}; }
};
std::optional<ToolChoice> parse_tool_choice(std::string_view text);  // auto|required|none|<tool name>

// ToolCallRequest::mention_log_prior's default: log 9 (an optional parameter the request names is
// an argument of the call about 9 times out of 10 on the bundled model's held-out turns: 67 of 73).
inline constexpr double kMentionLogPrior = 2.1972245773362196;

struct ToolCallRequest {
  std::vector<ChatMessage> messages;   // system, user, assistant (earlier calls as their text), tool
  std::string raw_prompt;              // when messages is empty: the whole prompt, used verbatim
                                       // (special tokens parsed; the tools are then not rendered)
  std::vector<ToolDefinition> tools;
  ToolChoice tool_choice;
  ReasoningEffort effort = ReasoningEffort::kLow;
  std::optional<base::Json> output_schema;  // a final answer is JSON valid for this schema
  int64_t answer_length = 96;          // canvas of a free-text answer; the call canvas is padded to it
  // Positions of a string value slot (more when minLength needs them); 0: the model's
  // dloop.tool_call.string_slot_tokens when its GGUF has one, else 24.
  int64_t string_slot_tokens = 0;
  int64_t number_slot_tokens = 12;     // positions of a number value slot
  std::optional<CacheMode> cache;          // unset: the effort preset's
  std::optional<PromptReuse> prompt_reuse; // unset: the effort preset's
  // Copy repair (docs/tool-calls.md "Copy repair"): a decoded string or number value that stops
  // short of the unit of the conversation it begins (a word, a name, a quoted string) is completed
  // to it; one not found in the conversation but within a small edit distance of spans of it
  // becomes a choice among them, scored by the model; an array of copies is cut before the first
  // item that is not one, and gets the items of the list it was copied from that it skipped
  // ("Array gaps and list ends"); a broken or repeated value takes the value the request states
  // right after its key's name ("Stated values"); an optional argument the request gives another
  // call is dropped ("Call scope").
  bool copy_repair = true;
  // String and number values may only be spans of the conversation outside the system turn
  // (docs/tool-calls.md "Grounded values"): for extraction-style tools whose values must come from
  // what the user or a tool said, never made up.
  bool ground_values = false;
  // Mention prior (docs/tool-calls.md "Mention prior"): when the decoder asks the model which
  // optional argument comes next (or none), a candidate that writes one whose name the request
  // mentions (the last user message and the tool results after it, as member order reads them)
  // gains this log-odds, and one that leaves such arguments out loses it for each; among enum
  // values, a string the request states gains it. Default log 9; 0 turns it off.
  double mention_log_prior = kMentionLogPrior;
  // After infilling, the call's top-level string and number values (2-4 of them) are re-assigned
  // among their keys by the model's reading of the keys given the values (docs/tool-calls.md "Key
  // check"): one forward pass per assignment the schema accepts. Unset: the effort preset's.
  std::optional<bool> key_check;
  // Before the key check, top-level string and number members that hold the same value get, in
  // turn, the span of the conversation the model picks for them, and the call is kept as decoded
  // or with one replaced by the same reverse question (docs/tool-calls.md "Duplicate check"): a
  // few passes, only when values repeat. Unset: on wherever the key check is.
  std::optional<bool> duplicate_check;
  // Before the key check's passes, values the request states right after their keys' names
  // ("start time 22:50") take those keys (docs/tool-calls.md "Stated keys"); no pass. Unset: on
  // wherever the key check is.
  std::optional<bool> stated_keys;
};

struct ToolCallResult {
  bool is_call = false;
  std::string name;                    // the tool, when is_call
  std::string arguments;               // JSON text (Python json.dumps style), valid for the schema
  base::Json arguments_json;
  std::string answer;                  // the final answer (JSON text with output_schema)
  std::string canvas_text;             // the decoded answer region as the model saw it (debugging)
  std::string prompt_text;             // the rendered prompt (chat template applied), as tokenized
  double call_probability = -1;        // p(call) at the first answer position (auto only; else -1)
  std::vector<std::pair<std::string, double>> name_scores;  // mean log-probability per offered tool
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t steps = 0;
  int64_t string_slot_tokens = 0;      // the string slot width it decoded with (string_slot_tokens())
  int64_t forward_passes = 0;           // all of them, the key check's included
  int key_check_assignments = 0;        // assignments the key check scored (0: it did not apply,
                                        // or the duplicate check scored them)
  bool keys_reassigned = false;         // the key check moved values among keys
  bool keys_stated = false;             // the request stated each value after its key's name:
                                        // the key check read the assignment without a pass
  int duplicate_check_candidates = 0;   // calls the duplicate check scored (0: no repeated values)
  bool values_replaced = false;         // the duplicate check changed the call
  int array_items_dropped = 0;          // items cut as array overruns (copy_repair)
  int array_items_added = 0;            // items a copied list skipped, filled (copy_repair)
  int stated_lists = 0;                 // arrays that took the list the request states (copy_repair)
  int stated_literals = 0;              // enum/boolean members that took the literal the request states (copy_repair)
  int stated_values = 0;                // broken values replaced by the ones the request states
                                        // after their keys' names (copy_repair)
  int stated_arguments_added = 0;       // optional arguments the call's scope states plainly, added
                                        // (copy_repair; docs/tool-calls.md "Copy repair")
  int other_calls_arguments_dropped = 0;  // optional arguments the request gives another call
                                          // (copy_repair; docs/tool-calls.md "Copy repair")
  Timings timings;
  ForwardStats forward_stats;          // rows computed vs full passes, prompt rows reused
};

// Checks a request without running the model: tool names (non-empty, distinct), schemas inside the
// decodable subset, tool_choice naming an offered tool, enum sizes. Errors name the tool and the
// JSON path ("tools[1] 'get_x': #/properties/d: unsupported keyword 'format'").
base::Status validate_tool_call_request(const ToolCallRequest& request);

// The string slot width a request decodes with on `model`: request.string_slot_tokens, or when it
// is 0 the model's dloop.tool_call.string_slot_tokens, else 24.
int64_t string_slot_tokens(const ToolCallRequest& request, const ModelConfig& model);

}  // namespace dloop::engine
