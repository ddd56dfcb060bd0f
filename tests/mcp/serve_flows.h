// Test fixtures for `dloop mcp serve`: two small workflows without agent steps, and a tool that
// forwards any arguments (no schema check on our side) so the server's own validation shows.
#pragma once

#include "../tools/test_util.h"
#include "dloop/tools/mcp_client.h"

namespace dloop::tools::testing {

// Harness::run for results that are not default-constructible (base::Result<T>).
template <typename T>
T await_in(Harness& h, asio::awaitable<T> aw) {
  auto wrap = [](asio::awaitable<T> a) -> asio::awaitable<std::optional<T>> {
    auto r = co_await std::move(a);
    co_return std::optional<T>(std::move(r));
  };
  return std::move(*h.run(wrap(std::move(aw))));
}

inline void write_serve_flows(const TempDir& dir) {
  dir.write("flows/add.yaml", R"(name: add-numbers
description: Adds two numbers with the calculator.
inputs:
  a: {type: number, required: true, description: first addend}
  b: {type: number, default: 2}
tools:
  - use: calculator
steps:
  - id: sum
    tool: calculator
    args: {expression: "${{ inputs.a }} + ${{ inputs.b }}"}
outputs:
  sum: ${{ steps.sum.output.result }}
  label: "sum of ${{ inputs.a }} and ${{ inputs.b }}"
)");
  dir.write("flows/shout.yml", R"(name: shout
inputs:
  word: {type: string, required: true}
steps:
  - id: s
    set: {loud: "${{ upper(inputs.word) }}!"}
outputs:
  loud: ${{ steps.s.output.loud }}
)");
  dir.write("flows/notes.txt", "not a workflow: ignored\n");
}

class McpLooseTool final : public Tool {
 public:
  McpLooseTool(std::shared_ptr<McpClient> client, std::string name)
      : Tool(name, "", builtin_schema(R"({"type": "object"})")), client_(std::move(client)) {}
  asio::awaitable<ToolResult> invoke(Json args, ToolContext ctx) override {
    auto call = client_->call_tool(name(), std::move(args), ctx.deadline);
    co_return co_await std::move(call);
  }

 private:
  std::shared_ptr<McpClient> client_;
};

}  // namespace dloop::tools::testing
