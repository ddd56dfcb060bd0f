// Private: the MCP servers of one run. start() turns a workflow's `mcp:` tool entry into a
// running McpClient and its tools (arguments and env evaluated like other tool configuration;
// a relative command path or cwd resolves against the workflow file's directory; the default
// working directory is the run's workspace). Server stderr lines go to dloop's log at info level
// and are kept (up to 64 KiB per server) for one `mcp_log` event per server at the end of the
// run; stop() shuts every server down gracefully. Used from the run's executor only.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "dloop/memory/records.h"
#include "dloop/tools/mcp_client.h"
#include "dloop/workflows/workflow.h"

namespace dloop::runtime {

class McpServers {
 public:
  McpServers();
  boost::asio::awaitable<base::Result<std::vector<std::shared_ptr<tools::Tool>>>> start(
      const workflows::ToolSpec& spec, const workflows::EvalContext& ctx, std::filesystem::path base_dir,
      std::filesystem::path workspace);
  // One `mcp_log` event per server that wrote to stderr, then clears the buffers.
  std::vector<memory::NewEvent> take_log_events();
  boost::asio::awaitable<void> stop();
  bool empty() const { return clients_.empty(); }

 private:
  struct Log;
  std::shared_ptr<Log> log_;
  std::vector<std::shared_ptr<tools::McpClient>> clients_;
};

}  // namespace dloop::runtime
