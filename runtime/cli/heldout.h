// Held-out tool-calling turns (tests/data/toolcall/heldout.jsonl, written by
// tests/toolcall/make_heldout.py from the bundled model's held-out split) and how a prediction is
// scored against them. Shared by `dloop eval` and `dloop bench toolcall`. Not thread-safe (CLI).
//
// One line per assistant turn:
//   {"messages": [{"role", "content"}...], "tools": [{"name", "description", "parameters"}...],
//    "gold": {"tool_call": {"name", "arguments"}} | {"content": "final answer"}}
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dloop/base/json.h"
#include "dloop/base/status.h"
#include "dloop/engine/engine.h"
#include "dloop/engine/tool_call.h"

namespace dloop::cli {

struct HeldoutTurn {
  int64_t line = 0;                           // 1-based line in the file
  std::vector<engine::ChatMessage> messages;
  std::vector<engine::ToolDefinition> tools;
  std::vector<base::Json> tool_json;          // the tool objects as written (for the chat template)
  std::optional<base::Json> gold_call;        // {"name", "arguments"} when the turn is a call
  std::string gold_answer;                    // the final answer when it is not
};

// The file shipped in the source tree.
std::string default_heldout_path();

// Reads up to `limit` turns (calls_only: only turns whose gold is a call). Errors name file:line
// and the field at fault.
base::Result<std::vector<HeldoutTurn>> load_heldout(const std::string& path, int64_t limit, bool calls_only);

// How one predicted call compares with a gold call.
struct CallMatch {
  bool name = false;   // the tool name equals the gold one
  bool exact = false;  // ... and the arguments equal the gold ones as JSON values
  bool valid = false;  // the arguments validate against the predicted tool's schema
};
CallMatch match_call(const HeldoutTurn& turn, const std::string& name, const base::Json& arguments);

// A free-decoded answer's tokens read as "<tool_call>{json}</tool_call>". `started` when the first
// token is <tool_call>; `parsed` when the body is an object with a string "name" and an object
// "arguments".
struct FreeCall {
  bool started = false;
  bool parsed = false;
  std::string name;
  base::Json arguments;
};
FreeCall read_free_call(const engine::Engine& engine, const std::vector<int32_t>& tokens);

double median(std::vector<double> values);

}  // namespace dloop::cli
