// retrieve: the k chunks of the document index (dloop index add) that best match a query, with
// BM25 scores, file paths and line ranges so the model can cite them. The index is a DocSearch
// from BuiltinEnv (the runtime backs it with the state database's FTS5 tables); with.db names
// another database (relative to the workspace). The search runs on the tool pool.
#include "builtin/builtin.h"
#include "dloop/tools/blocking.h"

namespace dloop::tools::builtin {
namespace {

class Retrieve final : public Tool {
 public:
  Retrieve(const BuiltinSpec& spec, std::shared_ptr<DocSearch> docs, std::string db, int64_t max_k)
      : Tool(name_of(spec),
             description_of(spec, "Searches the indexed documents. Returns {query, results: [{citation, path, "
                                  "start_line, end_line, score, best_line, best_text, text}]}, best first; cite "
                                  "answers as path:line."),
             builtin_schema(R"({"type": "object", "properties": {
                 "query": {"type": "string", "minLength": 1, "maxLength": 1000},
                 "k": {"type": "integer", "minimum": 1, "maximum": 50}},
               "required": ["query"], "additionalProperties": false})")),
        docs_(std::move(docs)),
        db_(std::move(db)),
        max_k_(max_k) {}

  asio::awaitable<ToolResult> invoke(Json args, ToolContext ctx) override {
    const std::string query = string_arg(args, "query");
    const int k = static_cast<int>(std::min(int_arg(args, "k", 5), max_k_));
    std::string db = db_;
    if (!db.empty() && db[0] != '/' && !ctx.workspace.empty()) db = (ctx.workspace / db).string();
    auto work = [docs = docs_, query, k, db](const StopFlag&) {
      auto hits = docs->search(query, k, db);
      if (!hits.ok()) {
        const bool bad_query = hits.status().code() == base::Code::kInvalidArgument;
        return fail(bad_query ? ToolErrorKind::kInvalidArguments : ToolErrorKind::kFailed,
                    "retrieve: " + hits.status().message());
      }
      Json out = Json::object();
      out.set("query", query);
      out.set("results", std::move(hits).value());
      return ToolResult::success(std::move(out));
    };
    auto op = run_blocking(ctx, std::move(work));
    co_return co_await std::move(op);
  }

 private:
  std::shared_ptr<DocSearch> docs_;
  std::string db_;
  int64_t max_k_;
};

}  // namespace

base::Result<std::shared_ptr<Tool>> make_retrieve(const BuiltinSpec& spec, const BuiltinEnv& env) {
  DLOOP_ASSIGN_OR_RETURN(auto with, WithConfig::open(name_of(spec), spec.with, {"db", "max_k"}));
  DLOOP_ASSIGN_OR_RETURN(auto db, with.get_string("db"));
  DLOOP_ASSIGN_OR_RETURN(auto max_k, with.get_int("max_k", 20, 1, 50));
  if (!env.docs) return base::invalid_argument(name_of(spec) + ": no document index is available");
  return std::shared_ptr<Tool>(std::make_shared<Retrieve>(spec, env.docs, db.value_or(""), max_k));
}

}  // namespace dloop::tools::builtin
