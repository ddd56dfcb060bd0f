// Private: confinement of model-supplied paths to a workspace root, shared by file_read,
// file_write and file_list. A path argument must be relative and free of `..`; every existing
// component is resolved with realpath() and must stay under the root's real path, so a symbolic
// link that points out of the workspace is refused. Final opens use O_NOFOLLOW. The remaining gap
// is a race (a link swapped in between the check and the open by another process); the model
// cannot create links through these tools. Blocking (file system calls): run on the tool pool.
#pragma once

#include <optional>
#include <string>

#include "dloop/tools/tool.h"

namespace dloop::tools::builtin {

struct ResolvedPath {
  std::string path;                // absolute, symlinks resolved, inside the root
  bool exists = false;             // resolve_for_write: the file is already there
  std::optional<ToolError> error;  // set on refusal or failure
};

// The real path of the confinement root: ctx.workspace (or the current directory when empty),
// joined with `subdir` (a `with: {root: ...}` option) when given.
ResolvedPath workspace_root(const ToolContext& ctx, const std::optional<std::string>& subdir);

// An existing file or directory named by `arg` (relative to root_real).
ResolvedPath resolve_existing(const std::string& root_real, const std::string& arg);

// A file to create or replace: its directory must resolve inside the root (missing directories
// are created when create_dirs); an existing final component that is a link must point inside.
ResolvedPath resolve_for_write(const std::string& root_real, const std::string& arg, bool create_dirs);

}  // namespace dloop::tools::builtin
