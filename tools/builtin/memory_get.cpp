// memory_get: reads one key of the per-workflow KV memory (a KvStore from BuiltinEnv; the runtime
// backs it with the SQLite state store). The scope is with.scope, else the context's scope (the
// workflow name), else "default". The store is called on the tool pool.
#include "builtin/builtin.h"
#include "dloop/tools/blocking.h"

namespace dloop::tools::builtin {
namespace {

class MemoryGet final : public Tool {
 public:
  MemoryGet(const BuiltinSpec& spec, std::shared_ptr<KvStore> kv, std::optional<std::string> scope)
      : Tool(name_of(spec),
             description_of(spec, "Reads a value saved earlier with memory_put. Returns {key, found, value} "
                                  "(value is null when not found)."),
             builtin_schema(R"({"type": "object", "properties": {
                 "key": {"type": "string", "minLength": 1, "maxLength": 256}},
               "required": ["key"], "additionalProperties": false})")),
        kv_(std::move(kv)),
        scope_(std::move(scope)) {}

  asio::awaitable<ToolResult> invoke(Json args, ToolContext ctx) override {
    std::string scope = scope_ ? *scope_ : ctx.scope.empty() ? "default" : ctx.scope;
    std::string key = string_arg(args, "key");
    auto work = [kv = kv_, scope, key](const StopFlag&) {
      auto got = kv->get(scope, key);
      if (!got.ok()) return fail(ToolErrorKind::kFailed, "memory is unavailable: " + got.status().message());
      Json out = Json::object();
      out.set("key", key);
      out.set("found", got->has_value());
      out.set("value", got->has_value() ? **got : Json());
      return ToolResult::success(std::move(out));
    };
    auto op = run_blocking(ctx, std::move(work));
    co_return co_await std::move(op);
  }

 private:
  std::shared_ptr<KvStore> kv_;
  std::optional<std::string> scope_;
};

}  // namespace

base::Result<std::shared_ptr<Tool>> make_memory_get(const BuiltinSpec& spec, const BuiltinEnv& env) {
  DLOOP_ASSIGN_OR_RETURN(auto with, WithConfig::open(name_of(spec), spec.with, {"scope"}));
  DLOOP_ASSIGN_OR_RETURN(auto scope, with.get_string("scope"));
  if (!env.kv) return base::invalid_argument(name_of(spec) + ": no KV memory store is available");
  return std::shared_ptr<Tool>(std::make_shared<MemoryGet>(spec, env.kv, std::move(scope)));
}

}  // namespace dloop::tools::builtin
