// Command tools: a program declared in the workflow file becomes a tool. The arguments go to the
// program's stdin as one line of compact JSON; the program prints one JSON value (its result) on
// stdout and exits 0. A non-zero exit, invalid JSON, no output, a timeout, death by a signal, or
// stdout over the cap each become a tool error the model sees, with the end of stderr. Processes
// run through run_process() (own process group; killed on timeout or cancellation; always reaped).
//
//   tools:
//     - name: lookup_order
//       description: Looks up an order by id.
//       command: [./lookup_order.sh, --db, orders.db]
//       parameters: {type: object, properties: {order_id: {type: string}}, required: [order_id]}
//       timeout: 10s
//       env: {API_BASE: "http://localhost:8080"}
//       cwd: scripts
//
// Thread-safe: the tool holds only its configuration.
#pragma once

#include <filesystem>
#include <memory>

#include "dloop/base/json.h"
#include "dloop/base/status.h"
#include "dloop/tools/tool.h"

namespace dloop::tools {

// `decl` is the tool's entry from the workflow, as JSON: name and command (an argv list) and
// parameters (an object schema) are required; description, timeout (default 30s), env (a mapping
// added to the inherited environment), inherit_env (default true), cwd, max_output_bytes (stdout
// cap, default 1 MiB) are optional; any other key is an error. A relative command path containing
// a '/' (./x.sh) and a relative cwd resolve against `base_dir` (the workflow file's directory);
// without cwd the program runs in the call's workspace. Errors: invalid_argument naming the key.
base::Result<std::shared_ptr<Tool>> make_command_tool(const Json& decl, const std::filesystem::path& base_dir);

}  // namespace dloop::tools
