// file_read: reads a UTF-8 text file inside the workspace (workspace_path.h confines the path),
// from an optional byte offset, up to a byte cap. Blocking IO runs on the tool pool.
// `with:` root (a subdirectory of the workspace), max_bytes (default 256 KiB).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "builtin/builtin.h"
#include "builtin/workspace_path.h"
#include "dloop/base/strings.h"
#include "dloop/tools/blocking.h"

namespace dloop::tools::builtin {
namespace {

struct Config {
  std::optional<std::string> root;
  int64_t max_bytes = 0;
};

// Cuts s back to the last complete UTF-8 sequence (a cap may split one).
void trim_partial_utf8(std::string& s) {
  size_t n = s.size();
  size_t i = n;
  while (i > 0 && n - i < 4 && (static_cast<unsigned char>(s[i - 1]) & 0xC0) == 0x80) --i;
  if (i == 0) return;
  auto lead = static_cast<unsigned char>(s[i - 1]);
  size_t want = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  if (n - (i - 1) < want) s.resize(i - 1);
}

ToolResult read_file(const Config& cfg, const ToolContext& ctx, const std::string& path, int64_t offset,
                     int64_t length) {
  auto root = workspace_root(ctx, cfg.root);
  if (root.error) return ToolResult::failure(root.error->kind, root.error->message);
  auto target = resolve_existing(root.path, path);
  if (target.error) return ToolResult::failure(target.error->kind, target.error->message);
  // O_NONBLOCK: opening a FIFO must not hang; regular files ignore it.
  // Opened beneath the root, not at the path checked above: a link swapped in since cannot lead out.
  int fd = open_beneath(root.path, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0 && (errno == EXDEV || errno == ELOOP)) {
    return fail(ToolErrorKind::kDenied, "'" + path + "' resolves outside the workspace (through a symbolic link)");
  }
  if (fd < 0) return fail(ToolErrorKind::kFailed, "cannot open '" + path + "': " + strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    bool dir = S_ISDIR(st.st_mode);
    ::close(fd);
    return fail(ToolErrorKind::kFailed, "'" + path + "' is " + (dir ? "a directory (use file_list)" : "not a regular file"));
  }
  int64_t size = st.st_size;
  int64_t want = std::min<int64_t>(length, cfg.max_bytes);
  std::string content;
  if (offset < size) {
    content.resize(static_cast<size_t>(std::min(want, size - offset)));
    size_t got = 0;
    while (got < content.size()) {
      ssize_t n = ::pread(fd, content.data() + got, content.size() - got, offset + static_cast<off_t>(got));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        int err = errno;
        ::close(fd);
        return fail(ToolErrorKind::kFailed, "reading '" + path + "': " + strerror(err));
      }
      if (n == 0) break;
      got += static_cast<size_t>(n);
    }
    content.resize(got);
  }
  ::close(fd);
  bool truncated = offset + static_cast<int64_t>(content.size()) < size;
  if (truncated) trim_partial_utf8(content);
  if (auto bad = base::find_invalid_utf8(content)) {
    return fail(ToolErrorKind::kFailed, "'" + path + "' is not UTF-8 text (invalid byte at offset " +
                                            std::to_string(offset + static_cast<int64_t>(*bad)) + ")");
  }
  Json out = Json::object();
  out.set("path", path);
  out.set("size", Json(size));
  out.set("offset", Json(offset));
  out.set("content", std::move(content));
  out.set("truncated", truncated);
  return ToolResult::success(std::move(out));
}

class FileRead final : public Tool {
 public:
  FileRead(const BuiltinSpec& spec, Config cfg)
      : Tool(name_of(spec),
             description_of(spec, "Reads a UTF-8 text file in the workspace. Returns {path, size, offset, "
                                  "content, truncated}; read further with offset when truncated."),
             builtin_schema(R"({"type": "object", "properties": {
                 "path": {"type": "string", "description": "file path relative to the workspace"},
                 "offset": {"type": "integer", "minimum": 0, "description": "byte offset to start at"},
                 "length": {"type": "integer", "minimum": 1, "description": "bytes to read at most"}},
               "required": ["path"], "additionalProperties": false})")),
        cfg_(std::move(cfg)) {}

  asio::awaitable<ToolResult> invoke(Json args, ToolContext ctx) override {
    std::string path = string_arg(args, "path");
    int64_t offset = int_arg(args, "offset", 0);
    int64_t length = int_arg(args, "length", cfg_.max_bytes);
    auto work = [cfg = cfg_, ctx, path, offset, length](const StopFlag&) {
      return read_file(cfg, ctx, path, offset, length);
    };
    auto op = run_blocking(ctx, std::move(work));
    co_return co_await std::move(op);
  }

 private:
  Config cfg_;
};

}  // namespace

base::Result<std::shared_ptr<Tool>> make_file_read(const BuiltinSpec& spec, const BuiltinEnv&) {
  DLOOP_ASSIGN_OR_RETURN(auto with, WithConfig::open(name_of(spec), spec.with, {"root", "max_bytes"}));
  Config cfg;
  DLOOP_ASSIGN_OR_RETURN(cfg.root, with.get_string("root"));
  DLOOP_ASSIGN_OR_RETURN(cfg.max_bytes, with.get_int("max_bytes", 256 * 1024, 1, int64_t{1} << 30));
  return std::shared_ptr<Tool>(std::make_shared<FileRead>(spec, std::move(cfg)));
}

}  // namespace dloop::tools::builtin
