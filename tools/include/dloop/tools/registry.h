// Registry: the tools a workflow (or an agent step) may call, by unique name, in registration
// order; and invoke_validated(), the one way the runtime runs a tool call: schema validation
// before the tool runs, the deadline, the output cap, and exceptions turned into tool errors.
// A Registry is filled once and then only read: concurrent reads (find, list, invoke) are safe,
// add() is not safe concurrently with anything. Copies share the Tool objects.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dloop/tools/tool.h"

namespace dloop::tools {

struct InvokeLimits {
  // Cap on the result's compact JSON size; a larger result is an `output_too_large` error.
  size_t max_output_bytes = 256 * 1024;
  // At most this many schema problems are listed in an `invalid_arguments` message.
  size_t max_argument_errors = 8;
};

class Registry {
 public:
  // Errors (invalid_argument): a name that is not [A-Za-z0-9_-]{1,64}, a parameters schema whose
  // root is not `type: object`, or a name already taken ("tool 'search' is already registered").
  base::Status add(std::shared_ptr<Tool> tool);

  // nullptr when absent.
  std::shared_ptr<Tool> find(std::string_view name) const;
  const std::vector<std::shared_ptr<Tool>>& list() const { return tools_; }
  std::vector<std::string> names() const;
  size_t size() const { return tools_.size(); }

  // A registry with only `names`, in that order (an agent step's `tools:` list). not_found names
  // the first unknown tool, with a did-you-mean suggestion.
  base::Result<Registry> subset(const std::vector<std::string>& names) const;

  // [{"name", "description", "parameters"}] in registration order.
  Json describe() const;
  // The OpenAI chat-completions `tools` array: [{"type": "function", "function": {...}}].
  Json openai_tools() const;

  // invoke_validated() on the tool called `name`; an unknown name is an `invalid_arguments`
  // error that lists the available tools.
  asio::awaitable<ToolResult> invoke(std::string name, Json args, ToolContext ctx, InvokeLimits limits = {}) const;

 private:
  std::vector<std::shared_ptr<Tool>> tools_;
  std::unordered_map<std::string, size_t> index_;
};

// Validates `args` against tool->parameters() (invalid_arguments listing the JSON paths of the
// problems, without running the tool), then runs the tool until ctx.deadline (a `timeout` error;
// the tool is cancelled and awaited, so its process is dead when this returns), then checks the
// output cap. Never throws; an exception from the tool becomes a `crashed` error.
asio::awaitable<ToolResult> invoke_validated(std::shared_ptr<Tool> tool, Json args, ToolContext ctx,
                                             InvokeLimits limits = {});

}  // namespace dloop::tools
