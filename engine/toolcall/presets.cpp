// The reasoning-effort presets of tool_call() (one table; measured figures in docs/tool-calls.md)
// and the small parsers of the tool-call API. Thread-safe (constant data).
#include <array>

#include "dloop/engine/tool_call.h"

namespace dloop::engine {
namespace {

// effort, threshold, max commits per pass, separate name pass, exact-prefix choices, slots left to
// right, thinking tokens, answer block length, K/V cache, prompt reuse, key check.
// instant trades accuracy for speed (the prefix cache: about 2x fewer rows computed); the others
// decode without that K/V approximation, which costs the bundled model exact arguments. Every
// preset reuses only the system turn (tool schemas), which measured no loss; reuse across turns
// (kTurns) cost the bundled model 25 points of stop decisions for 5% speed (docs/tool-calls.md).
// The key check costs one pass per assignment (2 for two values of one type): all but instant.
constexpr std::array<ReasoningPreset, 4> kPresets = {{
    {ReasoningEffort::kInstant, 0.5, 0, false, false, true, 0, 96, CacheMode::kPrefix, PromptReuse::kSystem, false},
    {ReasoningEffort::kLow, 0.9, 0, false, false, true, 0, 32, CacheMode::kNone, PromptReuse::kSystem, true},
    {ReasoningEffort::kMedium, 0.99, 0, false, false, false, 0, 32, CacheMode::kNone, PromptReuse::kSystem, true},
    {ReasoningEffort::kHigh, 0.99, 0, true, false, false, 0, 8, CacheMode::kNone, PromptReuse::kSystem, true},
}};

}  // namespace

const ReasoningPreset& reasoning_preset(ReasoningEffort effort) {
  for (const ReasoningPreset& p : kPresets) {
    if (p.effort == effort) return p;
  }
  return kPresets[1];
}

std::optional<ReasoningEffort> parse_reasoning_effort(std::string_view name) {
  if (name == "instant") return ReasoningEffort::kInstant;
  if (name == "low") return ReasoningEffort::kLow;
  if (name == "medium") return ReasoningEffort::kMedium;
  if (name == "high") return ReasoningEffort::kHigh;
  return std::nullopt;
}

const char* reasoning_effort_name(ReasoningEffort effort) {
  switch (effort) {
    case ReasoningEffort::kInstant: return "instant";
    case ReasoningEffort::kLow: return "low";
    case ReasoningEffort::kMedium: return "medium";
    case ReasoningEffort::kHigh: return "high";
  }
  return "?";
}

std::optional<ToolChoice> parse_tool_choice(std::string_view text) {
  if (text.empty()) return std::nullopt;
  if (text == "auto") return ToolChoice{};
  if (text == "required") return ToolChoice{ToolChoice::Kind::kRequired, ""};
  if (text == "none") return ToolChoice{ToolChoice::Kind::kNone, ""};
  return ToolChoice::named(std::string(text));
}

}  // namespace dloop::engine
