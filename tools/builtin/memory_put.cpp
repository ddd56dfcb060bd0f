// memory_put: stores one JSON value under a key of the per-workflow KV memory (see memory_get.cpp
// for the scope). `with:` scope, max_value_bytes (default 64 KiB, compact JSON). The store is
// called on the tool pool.
#include "builtin/builtin.h"
#include "dloop/tools/blocking.h"

namespace dloop::tools::builtin {
namespace {

class MemoryPut final : public Tool {
 public:
  MemoryPut(const BuiltinSpec& spec, std::shared_ptr<KvStore> kv, std::optional<std::string> scope, int64_t max_bytes)
      : Tool(name_of(spec),
             description_of(spec, "Saves a JSON value under a key so that later steps and runs of this workflow "
                                  "can read it with memory_get. Returns {key, stored: true}."),
             builtin_schema(R"({"type": "object", "properties": {
                 "key": {"type": "string", "minLength": 1, "maxLength": 256},
                 "value": {"description": "any JSON value"}},
               "required": ["key", "value"], "additionalProperties": false})")),
        kv_(std::move(kv)),
        scope_(std::move(scope)),
        max_bytes_(max_bytes) {}

  asio::awaitable<ToolResult> invoke(Json args, ToolContext ctx) override {
    std::string scope = scope_ ? *scope_ : ctx.scope.empty() ? "default" : ctx.scope;
    std::string key = string_arg(args, "key");
    Json value = args.find("value") ? *args.find("value") : Json();
    size_t size = value.dump().size();
    if (static_cast<int64_t>(size) > max_bytes_) {
      co_return fail(ToolErrorKind::kDenied, "the value is " + std::to_string(size) + " bytes of JSON; memory "
                                             "values are limited to " + std::to_string(max_bytes_));
    }
    auto work = [kv = kv_, scope, key, value = std::move(value)](const StopFlag&) {
      base::Status st = kv->put(scope, key, value);
      if (!st.ok()) return fail(ToolErrorKind::kFailed, "memory is unavailable: " + st.message());
      Json out = Json::object();
      out.set("key", key);
      out.set("stored", true);
      return ToolResult::success(std::move(out));
    };
    auto op = run_blocking(ctx, std::move(work));
    co_return co_await std::move(op);
  }

 private:
  std::shared_ptr<KvStore> kv_;
  std::optional<std::string> scope_;
  int64_t max_bytes_;
};

}  // namespace

base::Result<std::shared_ptr<Tool>> make_memory_put(const BuiltinSpec& spec, const BuiltinEnv& env) {
  DLOOP_ASSIGN_OR_RETURN(auto with, WithConfig::open(name_of(spec), spec.with, {"scope", "max_value_bytes"}));
  DLOOP_ASSIGN_OR_RETURN(auto scope, with.get_string("scope"));
  DLOOP_ASSIGN_OR_RETURN(int64_t max_bytes, with.get_int("max_value_bytes", 64 * 1024, 1, int64_t{1} << 30));
  if (!env.kv) return base::invalid_argument(name_of(spec) + ": no KV memory store is available");
  return std::shared_ptr<Tool>(std::make_shared<MemoryPut>(spec, env.kv, std::move(scope), max_bytes));
}

}  // namespace dloop::tools::builtin
