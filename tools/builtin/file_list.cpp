// file_list: lists a directory inside the workspace (optionally recursively), without following
// symbolic links (they are listed as "symlink"). Blocking IO runs on the tool pool.
// `with:` root, max_entries (default 1000).
#include <algorithm>
#include <filesystem>
#include <system_error>

#include "builtin/builtin.h"
#include "builtin/workspace_path.h"
#include "dloop/tools/blocking.h"

namespace dloop::tools::builtin {
namespace {

namespace fs = std::filesystem;

struct Config {
  std::optional<std::string> root;
  int64_t max_entries = 0;
};

const char* type_name(const fs::file_status& st) {
  switch (st.type()) {
    case fs::file_type::regular: return "file";
    case fs::file_type::directory: return "dir";
    case fs::file_type::symlink: return "symlink";
    default: return "other";
  }
}

template <typename Iterator>
bool collect(Iterator it, const fs::path& base, size_t max, std::vector<Json>& entries, std::error_code& ec) {
  for (; !ec && it != Iterator(); it.increment(ec)) {
    if (entries.size() >= max) return true;
    std::error_code st_ec;
    fs::file_status st = it->symlink_status(st_ec);
    Json e = Json::object();
    e.set("name", it->path().lexically_relative(base).string());
    e.set("type", type_name(st));
    if (st.type() == fs::file_type::regular) {
      auto size = it->file_size(st_ec);
      if (!st_ec) e.set("size", Json(static_cast<int64_t>(size)));
    }
    entries.push_back(std::move(e));
  }
  return false;
}

ToolResult list_dir(const Config& cfg, const ToolContext& ctx, const std::string& path, bool recursive) {
  auto root = workspace_root(ctx, cfg.root);
  if (root.error) return ToolResult::failure(root.error->kind, root.error->message);
  auto target = resolve_existing(root.path, path);
  if (target.error) return ToolResult::failure(target.error->kind, target.error->message);
  std::error_code ec;
  if (!fs::is_directory(target.path, ec)) return fail(ToolErrorKind::kFailed, "'" + path + "' is not a directory");
  std::vector<Json> entries;
  auto max = static_cast<size_t>(cfg.max_entries);
  bool truncated =
      recursive ? collect(fs::recursive_directory_iterator(target.path, fs::directory_options::skip_permission_denied, ec),
                          target.path, max, entries, ec)
                : collect(fs::directory_iterator(target.path, ec), target.path, max, entries, ec);
  if (ec) return fail(ToolErrorKind::kFailed, "listing '" + path + "': " + ec.message());
  std::sort(entries.begin(), entries.end(), [](const Json& a, const Json& b) {
    return a.find("name")->as_string() < b.find("name")->as_string();
  });
  Json out = Json::object();
  out.set("path", path);
  out.set("entries", Json::array(std::move(entries)));
  out.set("truncated", truncated);
  return ToolResult::success(std::move(out));
}

class FileList final : public Tool {
 public:
  FileList(const BuiltinSpec& spec, Config cfg)
      : Tool(name_of(spec),
             description_of(spec, "Lists a directory in the workspace. Returns {path, entries: [{name, type, "
                                  "size}], truncated}; type is file, dir, symlink or other."),
             builtin_schema(R"({"type": "object", "properties": {
                 "path": {"type": "string", "description": "directory relative to the workspace; default \".\""},
                 "recursive": {"type": "boolean", "description": "include subdirectories"}},
               "additionalProperties": false})")),
        cfg_(std::move(cfg)) {}

  asio::awaitable<ToolResult> invoke(Json args, ToolContext ctx) override {
    std::string path = string_arg(args, "path", ".");
    bool recursive = bool_arg(args, "recursive", false);
    auto work = [cfg = cfg_, ctx, path, recursive](const StopFlag&) {
      return list_dir(cfg, ctx, path, recursive);
    };
    auto op = run_blocking(ctx, std::move(work));
    co_return co_await std::move(op);
  }

 private:
  Config cfg_;
};

}  // namespace

base::Result<std::shared_ptr<Tool>> make_file_list(const BuiltinSpec& spec, const BuiltinEnv&) {
  DLOOP_ASSIGN_OR_RETURN(auto with, WithConfig::open(name_of(spec), spec.with, {"root", "max_entries"}));
  Config cfg;
  DLOOP_ASSIGN_OR_RETURN(cfg.root, with.get_string("root"));
  DLOOP_ASSIGN_OR_RETURN(cfg.max_entries, with.get_int("max_entries", 1000, 1, 1'000'000));
  return std::shared_ptr<Tool>(std::make_shared<FileList>(spec, std::move(cfg)));
}

}  // namespace dloop::tools::builtin
