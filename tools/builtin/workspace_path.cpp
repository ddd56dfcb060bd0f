// Workspace path confinement. See workspace_path.h.
#include "builtin/workspace_path.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "dloop/base/strings.h"

namespace dloop::tools::builtin {
namespace {

ResolvedPath refuse(ToolErrorKind kind, std::string message) {
  ResolvedPath r;
  r.error = ToolError{kind, std::move(message)};
  return r;
}

std::optional<std::string> real_path(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) return std::nullopt;
  return std::string(buf);
}

bool inside(const std::string& root, const std::string& path) {
  if (path == root) return true;
  if (root == "/") return true;
  return path.size() > root.size() && path.compare(0, root.size(), root) == 0 && path[root.size()] == '/';
}

// Rules for a model-supplied path. nullopt when acceptable.
std::optional<ToolError> check_argument(const std::string& arg) {
  if (arg.empty()) return ToolError{ToolErrorKind::kInvalidArguments, "the path is empty"};
  if (arg.find('\0') != std::string::npos) return ToolError{ToolErrorKind::kInvalidArguments, "the path contains a NUL byte"};
  if (arg[0] == '/') {
    return ToolError{ToolErrorKind::kDenied, "absolute paths are not allowed ('" + arg +
                                                 "'); use a path relative to the workspace"};
  }
  for (const auto& part : base::split(arg, '/')) {
    if (part == "..") {
      return ToolError{ToolErrorKind::kDenied, "'..' is not allowed in paths ('" + arg + "'); stay inside the workspace"};
    }
  }
  return std::nullopt;
}

ResolvedPath escape_error(const std::string& arg) {
  return refuse(ToolErrorKind::kDenied, "'" + arg + "' resolves outside the workspace (through a symbolic link)");
}

}  // namespace

ResolvedPath workspace_root(const ToolContext& ctx, const std::optional<std::string>& subdir) {
  std::string root = ctx.workspace.empty() ? std::string(".") : ctx.workspace.string();
  if (subdir) root = (*subdir)[0] == '/' ? *subdir : root + "/" + *subdir;
  auto real = real_path(root);
  if (!real) return refuse(ToolErrorKind::kFailed, "the workspace root '" + root + "' is not accessible: " + strerror(errno));
  struct stat st;
  if (::stat(real->c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return refuse(ToolErrorKind::kFailed, "the workspace root '" + root + "' is not a directory");
  }
  ResolvedPath r;
  r.path = *real;
  r.exists = true;
  return r;
}

ResolvedPath resolve_existing(const std::string& root_real, const std::string& arg) {
  if (auto bad = check_argument(arg)) return refuse(bad->kind, bad->message);
  auto real = real_path(root_real + "/" + arg);
  if (!real) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR) {
      // A dangling link pointing out is still an escape attempt; say so rather than "not found".
      return refuse(ToolErrorKind::kFailed, "no such file or directory: '" + arg + "'");
    }
    return refuse(ToolErrorKind::kFailed, "cannot resolve '" + arg + "': " + strerror(err));
  }
  if (!inside(root_real, *real)) return escape_error(arg);
  ResolvedPath r;
  r.path = *real;
  r.exists = true;
  return r;
}

ResolvedPath resolve_for_write(const std::string& root_real, const std::string& arg, bool create_dirs) {
  if (auto bad = check_argument(arg)) return refuse(bad->kind, bad->message);
  std::vector<std::string> parts;
  for (auto& p : base::split(arg, '/')) {
    if (!p.empty() && p != ".") parts.push_back(std::move(p));
  }
  if (parts.empty() || arg.back() == '/') {
    return refuse(ToolErrorKind::kInvalidArguments, "'" + arg + "' names a directory, not a file");
  }
  std::string dir = root_real;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    std::string next = dir + "/" + parts[i];
    struct stat st;
    if (::lstat(next.c_str(), &st) != 0) {
      if (errno != ENOENT) return refuse(ToolErrorKind::kFailed, "cannot access '" + parts[i] + "': " + strerror(errno));
      if (!create_dirs) return refuse(ToolErrorKind::kFailed, "directory '" + parts[i] + "' does not exist");
      if (::mkdir(next.c_str(), 0755) != 0 && errno != EEXIST) {
        return refuse(ToolErrorKind::kFailed, "cannot create directory '" + parts[i] + "': " + strerror(errno));
      }
    }
    auto real = real_path(next);  // follows a link, which must stay inside
    if (!real) return refuse(ToolErrorKind::kFailed, "cannot resolve '" + parts[i] + "': " + strerror(errno));
    if (!inside(root_real, *real)) return escape_error(arg);
    if (::stat(real->c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return refuse(ToolErrorKind::kFailed, "'" + parts[i] + "' is not a directory");
    }
    dir = *real;
  }
  ResolvedPath r;
  r.path = dir + "/" + parts.back();
  struct stat st;
  if (::lstat(r.path.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) {
      auto real = real_path(r.path);
      if (!real) return refuse(ToolErrorKind::kDenied, "'" + arg + "' is a symbolic link to a missing file");
      if (!inside(root_real, *real)) return escape_error(arg);
      r.path = *real;
      if (::stat(r.path.c_str(), &st) != 0) return refuse(ToolErrorKind::kFailed, "cannot access '" + arg + "'");
    }
    if (S_ISDIR(st.st_mode)) return refuse(ToolErrorKind::kFailed, "'" + arg + "' is a directory");
    if (!S_ISREG(st.st_mode)) return refuse(ToolErrorKind::kDenied, "'" + arg + "' is not a regular file");
    r.exists = true;
  }
  return r;
}

namespace {

// The fallback: every directory component opened with O_NOFOLLOW from the one before, the last
// with the caller's flags plus O_NOFOLLOW. No link is followed, so none can lead out.
int open_walking(int root_fd, const std::string& arg, int flags, unsigned mode) {
  std::vector<std::string> parts;
  for (auto& p : base::split(arg, '/')) {
    if (!p.empty() && p != ".") parts.push_back(std::move(p));
  }
  if (parts.empty()) return ::openat(root_fd, ".", flags, mode);
  int dir = ::dup(root_fd);
  for (size_t i = 0; i + 1 < parts.size() && dir >= 0; ++i) {
    int next = ::openat(dir, parts[i].c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int err = errno;
    ::close(dir);
    errno = err;
    dir = next;
  }
  if (dir < 0) return -1;
  int fd = ::openat(dir, parts.back().c_str(), flags | O_NOFOLLOW, mode);
  int err = errno;
  ::close(dir);
  errno = err;
  return fd;
}

}  // namespace

int open_beneath(const std::string& root_real, const std::string& arg, int flags, unsigned mode) {
  int root_fd = ::open(root_real.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0) return -1;
  struct open_how how {};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
  how.mode = (flags & O_CREAT) != 0 ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  int fd = static_cast<int>(::syscall(SYS_openat2, root_fd, arg.c_str(), &how, sizeof how));
  if (fd < 0 && (errno == ENOSYS || errno == EPERM)) fd = open_walking(root_fd, arg, flags | O_CLOEXEC, mode);
  int err = errno;
  ::close(root_fd);
  errno = err;
  return fd;
}

}  // namespace dloop::tools::builtin
