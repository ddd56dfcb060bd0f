// file_write: writes (or appends to) a text file inside the workspace. The path is confined by
// workspace_path.h and opened beneath the root (open_beneath); new files are created with
// O_CREAT|O_EXCL, a file with more than one hard link is refused. Blocking IO runs on the tool pool.
// `with:` root, max_bytes (default 1 MiB), create_dirs (default true), overwrite (default true).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "builtin/builtin.h"
#include "builtin/workspace_path.h"
#include "dloop/tools/blocking.h"

namespace dloop::tools::builtin {
namespace {

struct Config {
  std::optional<std::string> root;
  int64_t max_bytes = 0;
  bool create_dirs = true;
  bool overwrite = true;
};

ToolResult write_file(const Config& cfg, const ToolContext& ctx, const std::string& path,
                      const std::string& content, bool append) {
  if (static_cast<int64_t>(content.size()) > cfg.max_bytes) {
    return fail(ToolErrorKind::kDenied, "the content is " + std::to_string(content.size()) +
                                            " bytes; this tool writes at most " + std::to_string(cfg.max_bytes));
  }
  auto root = workspace_root(ctx, cfg.root);
  if (root.error) return ToolResult::failure(root.error->kind, root.error->message);
  auto target = resolve_for_write(root.path, path, cfg.create_dirs);
  if (target.error) return ToolResult::failure(target.error->kind, target.error->message);
  if (target.exists && !cfg.overwrite) {
    return fail(ToolErrorKind::kDenied, "'" + path + "' already exists and this tool does not overwrite files");
  }
  // Opened beneath the root (a link swapped in since the checks cannot lead out), created or opened
  // in one step (two appends racing to create the file both succeed), and truncated only after the
  // open file proved to be a regular file with no other hard link (a link to a file outside the
  // workspace would otherwise be written through).
  bool created = false;
  int fd = -1;
  if (!target.exists) {
    fd = open_beneath(root.path, path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | (append ? O_APPEND : 0), 0644);
    created = fd >= 0;
    if (fd < 0 && errno == EEXIST && !cfg.overwrite && !append) {
      return fail(ToolErrorKind::kDenied, "'" + path + "' already exists and this tool does not overwrite files");
    }
  }
  if (fd < 0 && (target.exists || errno == EEXIST)) fd = open_beneath(root.path, path, O_WRONLY | O_NONBLOCK | (append ? O_APPEND : 0));
  if (fd < 0 && (errno == EXDEV || errno == ELOOP)) {
    return fail(ToolErrorKind::kDenied, "'" + path + "' resolves outside the workspace (through a symbolic link)");
  }
  if (fd < 0) return fail(ToolErrorKind::kFailed, "cannot open '" + path + "' for writing: " + strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail(ToolErrorKind::kDenied, "'" + path + "' is not a regular file");
  }
  if (st.st_nlink > 1) {
    ::close(fd);
    return fail(ToolErrorKind::kDenied, "'" + path + "' has " + std::to_string(st.st_nlink) +
                                            " hard links; this tool does not write a file that is also linked elsewhere");
  }
  if (!created && !append && ::ftruncate(fd, 0) != 0) {
    int err = errno;
    ::close(fd);
    return fail(ToolErrorKind::kFailed, "truncating '" + path + "': " + strerror(err));
  }
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return fail(ToolErrorKind::kFailed, "writing '" + path + "': " + strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) return fail(ToolErrorKind::kFailed, "closing '" + path + "': " + strerror(errno));
  Json out = Json::object();
  out.set("path", path);
  out.set("bytes_written", Json(static_cast<int64_t>(done)));
  out.set("created", created);
  return ToolResult::success(std::move(out));
}

class FileWrite final : public Tool {
 public:
  FileWrite(const BuiltinSpec& spec, Config cfg)
      : Tool(name_of(spec),
             description_of(spec, "Writes a text file in the workspace (replacing it, or appending with "
                                  "append: true). Returns {path, bytes_written, created}."),
             builtin_schema(R"({"type": "object", "properties": {
                 "path": {"type": "string", "description": "file path relative to the workspace"},
                 "content": {"type": "string", "description": "the text to write"},
                 "append": {"type": "boolean", "description": "append instead of replacing"}},
               "required": ["path", "content"], "additionalProperties": false})")),
        cfg_(std::move(cfg)) {}

  asio::awaitable<ToolResult> invoke(Json args, ToolContext ctx) override {
    std::string path = string_arg(args, "path");
    std::string content = string_arg(args, "content");
    bool append = bool_arg(args, "append", false);
    auto work = [cfg = cfg_, ctx, path = std::move(path), content = std::move(content), append](const StopFlag&) {
      return write_file(cfg, ctx, path, content, append);
    };
    auto op = run_blocking(ctx, std::move(work));
    co_return co_await std::move(op);
  }

 private:
  Config cfg_;
};

}  // namespace

base::Result<std::shared_ptr<Tool>> make_file_write(const BuiltinSpec& spec, const BuiltinEnv&) {
  DLOOP_ASSIGN_OR_RETURN(auto with, WithConfig::open(name_of(spec), spec.with,
                                                     {"root", "max_bytes", "create_dirs", "overwrite"}));
  Config cfg;
  DLOOP_ASSIGN_OR_RETURN(cfg.root, with.get_string("root"));
  DLOOP_ASSIGN_OR_RETURN(cfg.max_bytes, with.get_int("max_bytes", 1 << 20, 0, int64_t{1} << 30));
  DLOOP_ASSIGN_OR_RETURN(cfg.create_dirs, with.get_bool("create_dirs", true));
  DLOOP_ASSIGN_OR_RETURN(cfg.overwrite, with.get_bool("overwrite", true));
  return std::shared_ptr<Tool>(std::make_shared<FileWrite>(spec, std::move(cfg)));
}

}  // namespace dloop::tools::builtin
