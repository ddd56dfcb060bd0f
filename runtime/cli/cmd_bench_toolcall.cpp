// `dloop bench toolcall`: the held-out tool calls of the bundled model (tests/data/toolcall/
// heldout.jsonl), decoded three ways in one run with the same model: skeleton infilling
// (Engine::tool_call, tool_choice auto), left-to-right decoding with one token per forward pass
// (block length 1), and free threshold decoding (blocks of 32, threshold 0.9, as the recipe's
// eval.py). Reports per method the median forward passes and wall time per call, and accuracy
// over all calls: a call started (parsing or not), tool choice, arguments exactly equal to the gold
// ones (as JSON values), and a call valid for the tool's schema. Not thread-safe (CLI).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>

#include "args.h"
#include "commands.h"
#include "dloop/base/json.h"
#include "dloop/base/json_schema.h"
#include "dloop/base/strings.h"
#include "dloop/engine/engine.h"
#include "dloop/engine/tool_call.h"
#include "model_path.h"

namespace dloop::cli {
namespace {

using base::Json;

struct Case {
  std::vector<engine::ChatMessage> messages;
  std::vector<engine::ToolDefinition> tools;
  std::vector<Json> tool_json;
  Json gold;  // {"name", "arguments"}
};

struct Tally {
  std::vector<double> passes, wall_ms;
  int n = 0, called = 0, choice = 0, exact = 0, valid = 0;
  void add(double p, double ms) { passes.push_back(p); wall_ms.push_back(ms); ++n; }
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

base::Result<std::vector<Case>> load_cases(const std::string& path, int64_t limit) {
  std::ifstream in(path);
  if (!in) return base::not_found(path + ": cannot open");
  std::vector<Case> out;
  std::string line;
  for (int64_t ln = 1; std::getline(in, line) && static_cast<int64_t>(out.size()) < limit; ++ln) {
    auto j = Json::parse(line);
    if (!j.ok()) return base::invalid_argument(path + ":" + std::to_string(ln) + ": " + j.status().message());
    const Json* gold = j->find("gold");
    if (!gold || !gold->find("tool_call")) continue;
    Case c;
    for (const Json& m : j->find("messages")->as_array()) {
      c.messages.push_back({m.find("role")->as_string(), m.find("content")->as_string()});
    }
    for (const Json& t : j->find("tools")->as_array()) {
      c.tools.push_back({t.find("name")->as_string(), t.find("description")->as_string(), *t.find("parameters")});
      c.tool_json.push_back(t);
    }
    c.gold = *gold->find("tool_call");
    out.push_back(std::move(c));
  }
  return out;
}

// Scores one predicted call (nullptr: no call).
void score(Tally& t, const Case& c, const std::string* name, const Json* args) {
  if (!name) return;
  ++t.called;
  if (*name != c.gold.find("name")->as_string()) return;
  ++t.choice;
  if (args && *args == *c.gold.find("arguments")) ++t.exact;
}

void check_valid(Tally& t, const Case& c, const std::string* name, const Json* args) {
  if (!name || !args) return;
  for (const auto& tool : c.tools) {
    if (tool.name != *name) continue;
    auto schema = base::Schema::compile(tool.parameters);
    if (schema.ok() && schema->validate(*args).ok()) ++t.valid;
  }
}

// Free decoding: the answer tokens as <tool_call> JSON </tool_call>.
void run_free(engine::Engine& e, const Case& c, const engine::DecodeOptions& o, Tally& t) {
  engine::GenerateRequest g;
  g.messages = c.messages;
  g.tools = c.tool_json;
  g.decode = o;
  auto t0 = std::chrono::steady_clock::now();
  auto r = e.generate(g);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!r.ok()) return;
  t.add(static_cast<double>(r->forward_passes), ms);
  auto open = e.tokenizer().find_special("<tool_call>");
  auto close = e.tokenizer().find_special("</tool_call>");
  const auto& toks = r->output_tokens;
  if (!open || toks.empty() || toks[0] != *open) return;
  auto end = close ? std::find(toks.begin(), toks.end(), *close) : toks.end();
  std::vector<int32_t> body(toks.begin() + 1, end);
  auto j = Json::parse(e.tokenizer().decode(body, false));
  const Json* name = j.ok() ? j->find("name") : nullptr;
  const Json* args = j.ok() ? j->find("arguments") : nullptr;
  std::string n = name && name->is_string() ? name->as_string() : std::string();
  if (!name) ++t.called;  // a call that does not parse
  score(t, c, name ? &n : nullptr, args);
  check_valid(t, c, name ? &n : nullptr, args);
}

Json report(const char* method, const Tally& t) {
  const double n = std::max(1, t.n);
  return Json::object({{"method", method}, {"calls", t.n},
                       {"median_forward_passes", median(t.passes)}, {"median_wall_ms", median(t.wall_ms)},
                       {"call_decision", t.called / n}, {"tool_choice", t.choice / n},
                       {"args_exact", t.exact / n}, {"valid", t.valid / n}});
}

}  // namespace

int bench_toolcall(const std::vector<std::string>& args) {
  ArgParser p("bench toolcall", "[options]",
              "Held-out tool calls of the bundled model: skeleton infilling vs left-to-right one-token-per-pass\n"
              "decoding vs free threshold decoding, same model, same run. Median forward passes and wall\n"
              "time per call, tool-choice and argument accuracy.");
  p.flag({"model", "FILE", "GGUF model file", false, "the bundled model"})
      .flag({"data", "FILE", "held-out turns (JSONL)", false, "tests/data/toolcall/heldout.jsonl"})
      .flag({"limit", "N", "tool calls to decode", false, "60"})
      .flag({"effort", "LIST", "reasoning efforts for infilling: instant, low, medium, high", false, "low"})
      .flag({"no-baselines", "", "skip the left-to-right and free decoding baselines"})
      .flag({"threads", "N", "compute threads", false, "physical cores"})
      .flag({"json", "", "print JSON"});
  auto a = p.parse(args, 0, 0);
  if (p.help_requested()) { std::fputs(p.usage().c_str(), stdout); return kExitOk; }
  auto usage_error = [](const base::Status& s) {
    std::fprintf(stderr, "dloop bench toolcall: %s\n", s.message().c_str());
    return kExitUsage;
  };
  if (!a.ok()) return usage_error(a.status());
  auto limit = a->get_int("limit", 60, 1, 100000);
  auto threads = a->get_int("threads", 0, 0, 256);
  if (!limit.ok()) return usage_error(limit.status());
  if (!threads.ok()) return usage_error(threads.status());
  auto model = resolve_model_path(a->get("model").value_or("default"));
  if (!model.ok()) return usage_error(model.status());
  const std::string data = a->get("data").value_or(std::string(DLOOP_SOURCE_MODELS_DIR) + "/../tests/data/toolcall/heldout.jsonl");
  auto cases = load_cases(data, *limit);
  if (!cases.ok()) return usage_error(cases.status());
  std::vector<engine::ReasoningEffort> efforts;
  for (const std::string& s : base::split(a->get("effort").value_or("low"), ',')) {
    auto e = engine::parse_reasoning_effort(s);
    if (!e) return usage_error(base::invalid_argument("--effort: unknown effort '" + s + "'"));
    efforts.push_back(*e);
  }
  auto opened = engine::Engine::open({*model, static_cast<int>(*threads), {}});
  if (!opened.ok()) {
    std::fprintf(stderr, "dloop bench toolcall: %s\n", opened.status().message().c_str());
    return kExitFailed;
  }
  engine::Engine& e = **opened;
  Json results = Json::array();
  for (engine::ReasoningEffort effort : efforts) {
    Tally t;
    for (const Case& c : *cases) {
      engine::ToolCallRequest r;
      r.messages = c.messages;
      r.tools = c.tools;
      r.effort = effort;
      auto t0 = std::chrono::steady_clock::now();
      auto res = e.tool_call(r);
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (!res.ok()) {
        std::fprintf(stderr, "dloop bench toolcall: %s\n", res.status().message().c_str());
        return kExitFailed;
      }
      t.add(static_cast<double>(res->forward_passes), ms);
      if (res->is_call) {
        score(t, c, &res->name, &res->arguments_json);
        check_valid(t, c, &res->name, &res->arguments_json);
      }
    }
    results.push_back(report((std::string("infill-") + engine::reasoning_effort_name(effort)).c_str(), t));
  }
  if (!a->has("no-baselines")) {
    engine::DecodeOptions ltr;
    ltr.gen_length = 96;
    ltr.block_length = 1;
    ltr.steps = 96;
    Tally t_ltr, t_free;
    for (const Case& c : *cases) run_free(e, c, ltr, t_ltr);
    results.push_back(report("left-to-right", t_ltr));
    engine::DecodeOptions fr;
    fr.gen_length = 96;
    fr.block_length = 32;
    fr.threshold = 0.9;
    for (const Case& c : *cases) run_free(e, c, fr, t_free);
    results.push_back(report("free-threshold-0.9", t_free));
  }
  if (a->has("json")) {
    std::printf("%s\n", results.dump(Json::Style::kPretty).c_str());
    return kExitOk;
  }
  std::printf("%zu held-out tool calls, model %s\n\n", cases->size(), model->c_str());
  std::printf("%-20s %10s %10s %8s %8s %8s %8s\n", "method", "passes", "wall ms", "called", "choice", "args", "valid");
  for (const Json& r : results.as_array()) {
    std::printf("%-20s %10.1f %10.1f %7.1f%% %7.1f%% %7.1f%% %7.1f%%\n", r.find("method")->as_string().c_str(),
                r.find("median_forward_passes")->as_double(), r.find("median_wall_ms")->as_double(),
                100 * r.find("call_decision")->as_double(), 100 * r.find("tool_choice")->as_double(),
                100 * r.find("args_exact")->as_double(), 100 * r.find("valid")->as_double());
  }
  return kExitOk;
}

}  // namespace dloop::cli
