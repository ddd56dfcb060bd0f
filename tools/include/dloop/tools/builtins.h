// The built-in tools (docs/tools.md): calculator, file_read, file_write, file_list, http_request,
// sqlite_query, shell, memory_get, memory_put, retrieve. A workflow names one with `use:` and configures it
// with a `with:` mapping; unknown `with:` keys are errors. One file per tool under tools/builtin/,
// registered by one line in tools/builtin/builtins.cpp. Factories are thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dloop/base/json.h"
#include "dloop/base/status.h"
#include "dloop/tools/doc_search.h"
#include "dloop/tools/kv_store.h"
#include "dloop/tools/tool.h"

namespace dloop::tools {

// What a workflow's `tools:` entry says about a built-in.
struct BuiltinSpec {
  std::string use;          // the built-in, e.g. "sqlite_query"
  std::string name;         // the name the model sees; empty: `use`
  std::string description;  // empty: the built-in's own description
  Json with;                // null or a mapping of options
};

// Shared services some built-ins need.
struct BuiltinEnv {
  // The KV memory behind memory_get/memory_put; those two fail to configure without it.
  std::shared_ptr<KvStore> kv;
  // The document index behind `retrieve`; it fails to configure without it.
  std::shared_ptr<DocSearch> docs;
};

// The names accepted by `use:`, in registration order.
std::vector<std::string> builtin_names();

// Errors (invalid_argument): an unknown `use` (with a did-you-mean), a bad or unknown `with:` key
// ("shell: with.allow must be a list of non-empty strings"), a missing required option.
base::Result<std::shared_ptr<Tool>> make_builtin(const BuiltinSpec& spec, const BuiltinEnv& env = {});

}  // namespace dloop::tools
