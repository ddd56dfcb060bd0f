// `dloop bench cache`: the K/V caches and prompt reuse on the bundled model's held-out turns
// (tests/data/toolcall/heldout.jsonl), decoded by Engine::tool_call at each reasoning effort under
// several cache configurations in one run. Reports per configuration the accuracy (call or answer
// decided right, tool name, arguments exactly equal to the gold ones), forward passes, wall time
// per turn, the share of canvas rows computed, and prompt-cache hits, each next to the cache-off
// configuration of the same effort. The turns of one conversation run in order, as an agent's
// turns would, so prompt reuse sees the previous turn's prompt.
// Not thread-safe (CLI).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>

#include "args.h"
#include "commands.h"
#include "dloop/base/json.h"
#include "dloop/base/strings.h"
#include "dloop/engine/engine.h"
#include "dloop/engine/tool_call.h"
#include "model_path.h"

namespace dloop::cli {
namespace {

using base::Json;

struct Turn {
  std::vector<engine::ChatMessage> messages;
  std::vector<engine::ToolDefinition> tools;
  const Json* gold_call = nullptr;  // into `line`
  Json line;
};

base::Result<std::vector<Turn>> load_turns(const std::string& path, int64_t limit) {
  std::ifstream in(path);
  if (!in) return base::not_found(path + ": cannot open");
  std::vector<Turn> out;
  std::string text;
  for (int64_t ln = 1; std::getline(in, text) && static_cast<int64_t>(out.size()) < limit; ++ln) {
    const std::string where = path + ":" + std::to_string(ln);
    auto j = Json::parse(text);
    if (!j.ok()) return base::invalid_argument(where + ": " + j.status().message());
    Turn t;
    t.line = std::move(j).value();
    const Json* messages = t.line.find("messages");
    const Json* tools = t.line.find("tools");
    const Json* gold = t.line.find("gold");
    if (!messages || !messages->is_array() || !tools || !tools->is_array() || !gold || !gold->is_object()) {
      return base::invalid_argument(where + ": expected the fields messages, tools and gold");
    }
    for (const Json& m : messages->as_array()) {
      const Json* role = m.find("role");
      const Json* content = m.find("content");
      if (!role || !role->is_string() || !content || !content->is_string()) {
        return base::invalid_argument(where + ": messages: each needs a string role and content");
      }
      t.messages.push_back({role->as_string(), content->as_string()});
    }
    for (const Json& tool : tools->as_array()) {
      const Json* name = tool.find("name");
      const Json* params = tool.find("parameters");
      if (!name || !name->is_string() || !params) return base::invalid_argument(where + ": tools: each needs a name and parameters");
      const Json* desc = tool.find("description");
      t.tools.push_back({name->as_string(), desc && desc->is_string() ? desc->as_string() : "", *params});
    }
    t.gold_call = gold->find("tool_call");
    out.push_back(std::move(t));
  }
  // gold_call points into `line`, which moved with the Turn: look it up again.
  for (Turn& t : out) t.gold_call = t.line.find("gold")->find("tool_call");
  return out;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

struct Config {
  engine::CacheMode cache;
  engine::PromptReuse reuse;
};

struct Tally {
  int turns = 0, decided = 0, calls = 0, name = 0, exact = 0;
  std::vector<double> passes;
  double wall_ms = 0;
  int64_t rows = 0, rows_full = 0, reused = 0;
};

Json report(const char* effort, const Config& c, const Tally& t, const Tally* base) {
  Json j = Json::object();
  j.set("effort", effort);
  j.set("cache", engine::cache_mode_name(c.cache));
  j.set("prompt_reuse", engine::prompt_reuse_name(c.reuse));
  j.set("turns", t.turns);
  j.set("decided", double(t.decided) / std::max(1, t.turns));
  j.set("name", double(t.name) / std::max(1, t.calls));
  j.set("exact", double(t.exact) / std::max(1, t.calls));
  j.set("median_passes", median_of(t.passes));
  j.set("ms_per_turn", t.wall_ms / std::max(1, t.turns));
  j.set("rows_computed_fraction", double(t.rows) / double(std::max<int64_t>(t.rows_full, 1)));
  j.set("prompt_rows_reused", t.reused);
  j.set("speedup_vs_cache_off", base ? base->wall_ms / std::max(t.wall_ms, 1e-9) : 1.0);
  j.set("exact_change_vs_cache_off", base ? double(t.exact - base->exact) / std::max(1, t.calls) : 0.0);
  return j;
}

}  // namespace

int bench_cache(const std::vector<std::string>& args) {
  ArgParser p("bench cache", "[options]",
              "The K/V caches and prompt reuse on held-out tool-calling turns: accuracy, forward passes, wall\n"
              "time and rows computed per cache configuration and reasoning effort, next to the cache-off\n"
              "configuration measured in the same run.");
  p.flag({"model", "FILE", "GGUF model file", false, "the bundled model"})
      .flag({"data", "FILE", "held-out turns (JSONL)", false, "tests/data/toolcall/heldout.jsonl"})
      .flag({"limit", "N", "turns to decode", false, "80"})
      .flag({"effort", "LIST", "reasoning efforts: instant, low, medium, high", false, "instant,low,medium,high"})
      .flag({"configs", "LIST", "cache/reuse pairs, e.g. none/off,prefix/turns", false,
             "none/off,prefix/off,dual/off,none/system,prefix/system,prefix/turns,dual/turns"})
      .flag({"threads", "N", "compute threads", false, "physical cores"})
      .flag({"json", "", "print JSON"});
  auto a = p.parse(args, 0, 0);
  if (p.help_requested()) { std::fputs(p.usage().c_str(), stdout); return kExitOk; }
  auto fail = [](const base::Status& s, int code) {
    std::fprintf(stderr, "dloop bench cache: %s\n", s.message().c_str());
    return code;
  };
  if (!a.ok()) return fail(a.status(), kExitUsage);
  auto limit = a->get_int("limit", 80, 1, 100000);
  auto threads = a->get_int("threads", 0, 0, 256);
  if (!limit.ok()) return fail(limit.status(), kExitUsage);
  if (!threads.ok()) return fail(threads.status(), kExitUsage);
  std::vector<engine::ReasoningEffort> efforts;
  for (const std::string& s : base::split(a->get("effort").value_or("instant,low,medium,high"), ',')) {
    auto e = engine::parse_reasoning_effort(s);
    if (!e) return fail(base::invalid_argument("--effort: unknown effort '" + s + "'"), kExitUsage);
    efforts.push_back(*e);
  }
  std::vector<Config> configs;
  for (const std::string& s : base::split(
           a->get("configs").value_or("none/off,prefix/off,dual/off,none/system,prefix/system,prefix/turns,dual/turns"), ',')) {
    const auto slash = s.find('/');
    auto cache = engine::parse_cache_mode(s.substr(0, slash));
    auto reuse = slash == std::string::npos ? std::optional<engine::PromptReuse>() : engine::parse_prompt_reuse(s.substr(slash + 1));
    if (!cache || !reuse) {
      return fail(base::invalid_argument("--configs: '" + s + "' is not CACHE/REUSE (none|prefix|dual / off|system|turns)"), kExitUsage);
    }
    configs.push_back({*cache, *reuse});
  }
  const std::string data = a->get("data").value_or(std::string(DLOOP_SOURCE_MODELS_DIR) + "/../tests/data/toolcall/heldout.jsonl");
  auto turns = load_turns(data, *limit);
  if (!turns.ok()) return fail(turns.status(), kExitUsage);
  auto model = resolve_model_path(a->get("model").value_or("default"));
  if (!model.ok()) return fail(model.status(), kExitUsage);
  engine::EngineOptions eo;
  eo.model_path = *model;
  eo.threads = static_cast<int>(*threads);
  auto opened = engine::Engine::open(eo);
  if (!opened.ok()) return fail(opened.status(), kExitFailed);
  engine::Engine& e = **opened;
  Json results = Json::array();
  for (engine::ReasoningEffort effort : efforts) {
    Tally base_tally;
    bool have_base = false;
    for (const Config& c : configs) {
      std::fprintf(stderr, "bench: %s, cache %s, prompt reuse %s...\n", engine::reasoning_effort_name(effort),
                   engine::cache_mode_name(c.cache), engine::prompt_reuse_name(c.reuse));
      e.prompt_cache().clear();  // every configuration starts cold
      Tally t;
      for (const Turn& turn : *turns) {
        engine::ToolCallRequest r;
        r.messages = turn.messages;
        r.tools = turn.tools;
        r.effort = effort;
        r.cache = c.cache;
        r.prompt_reuse = c.reuse;
        auto t0 = std::chrono::steady_clock::now();
        auto res = e.tool_call(r);
        t.wall_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (!res.ok()) return fail(res.status(), kExitFailed);
        ++t.turns;
        t.passes.push_back(static_cast<double>(res->forward_passes));
        t.rows += res->forward_stats.rows_computed;
        t.rows_full += res->forward_stats.rows_canvas;
        t.reused += res->forward_stats.prompt_rows_reused;
        const bool gold_call = turn.gold_call != nullptr;
        if (res->is_call == gold_call) ++t.decided;
        if (gold_call) {
          ++t.calls;
          const Json* name = turn.gold_call->find("name");
          const Json* args_gold = turn.gold_call->find("arguments");
          if (res->is_call && name && name->is_string() && res->name == name->as_string()) {
            ++t.name;
            if (args_gold && res->arguments_json == *args_gold) ++t.exact;
          }
        }
      }
      const bool is_base = c.cache == engine::CacheMode::kNone && c.reuse == engine::PromptReuse::kOff;
      if (is_base) {
        base_tally = t;
        have_base = true;
      }
      results.push_back(report(engine::reasoning_effort_name(effort), c, t, have_base ? &base_tally : nullptr));
    }
  }
  if (a->has("json")) {
    std::printf("%s\n", results.dump(Json::Style::kPretty).c_str());
    return kExitOk;
  }
  std::printf("model %s, %zu held-out turns, %d threads\n", model->c_str(), turns->size(), e.pool().size());
  std::printf("%-8s %-7s %-7s %8s %6s %6s %7s %9s %6s %8s %9s\n", "effort", "cache", "reuse", "decided", "name", "exact",
              "passes", "ms/turn", "rows", "speedup", "exact chg");
  for (const Json& r : results.as_array()) {
    std::printf("%-8s %-7s %-7s %7.1f%% %5.1f%% %5.1f%% %7.1f %9.1f %5.0f%% %7.2fx %8.1f%%\n",
                r.find("effort")->as_string().c_str(), r.find("cache")->as_string().c_str(),
                r.find("prompt_reuse")->as_string().c_str(), 100 * r.find("decided")->as_double(),
                100 * r.find("name")->as_double(), 100 * r.find("exact")->as_double(),
                r.find("median_passes")->as_double(), r.find("ms_per_turn")->as_double(),
                100 * r.find("rows_computed_fraction")->as_double(), r.find("speedup_vs_cache_off")->as_double(),
                100 * r.find("exact_change_vs_cache_off")->as_double());
  }
  return kExitOk;
}

}  // namespace dloop::cli
