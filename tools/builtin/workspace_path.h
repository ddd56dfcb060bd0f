// Private: confinement of model-supplied paths to a workspace root, shared by file_read,
// file_write and file_list. A path argument must be relative and free of `..`; every existing
// component is resolved with realpath() and must stay under the root's real path, so a symbolic
// link that points out of the workspace is refused (with a message that says so). The checks alone
// would race with another process swapping a link in between check and open, so the open itself is
// confined too: open_beneath() resolves the path with openat2(RESOLVE_BENEATH) from a directory fd
// of the root, or, on a kernel without openat2, walks the components with openat(O_NOFOLLOW) (then
// no link is followed at all). Blocking (file system calls): run on the tool pool.
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

// Opens `arg` (already checked by the functions above) beneath `root_real` with `flags` (and
// `mode` for O_CREAT); the kernel refuses every step out of the root, whatever links the path
// meets at the time of the open. Returns the fd, or -1 with errno (EXDEV or ELOOP: a link led out
// of the workspace, or a link was met on a kernel without openat2).
int open_beneath(const std::string& root_real, const std::string& arg, int flags, unsigned mode = 0);

}  // namespace dloop::tools::builtin
