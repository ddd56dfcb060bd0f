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

#include "args.h"
#include "commands.h"
#include "dloop/base/json.h"
#include "dloop/base/strings.h"
#include "dloop/engine/engine.h"
#include "dloop/engine/tool_call.h"
#include "heldout.h"
#include "model_path.h"

namespace dloop::cli {
namespace {

using base::Json;

struct Tally {
  std::vector<double> passes, wall_ms;
  int n = 0, called = 0, choice = 0, exact = 0, valid = 0;
  void add(double p, double ms) { passes.push_back(p); wall_ms.push_back(ms); ++n; }
  // One predicted call (name == nullptr: no call).
  void score(const HeldoutTurn& c, const std::string* name, const Json& args) {
    if (!name) return;
    ++called;
    CallMatch m = match_call(c, *name, args);
    choice += m.name;
    exact += m.exact;
    valid += m.valid;
  }
};

// Free decoding: the answer tokens as <tool_call> JSON </tool_call>.
void run_free(engine::Engine& e, const HeldoutTurn& c, const engine::DecodeOptions& o, Tally& t) {
  engine::GenerateRequest g;
  g.messages = c.messages;
  g.tools = c.tool_json;
  g.decode = o;
  auto t0 = std::chrono::steady_clock::now();
  auto r = e.generate(g);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!r.ok()) return;
  t.add(static_cast<double>(r->forward_passes), ms);
  FreeCall f = read_free_call(e, r->output_tokens);
  if (f.started && !f.parsed) ++t.called;  // a call that does not parse
  if (f.parsed) t.score(c, &f.name, f.arguments);
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
  auto cases = load_heldout(a->get("data").value_or(default_heldout_path()), *limit, true);
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
    for (const HeldoutTurn& c : *cases) {
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
      if (res->is_call) t.score(c, &res->name, res->arguments_json);
    }
    results.push_back(report((std::string("infill-") + engine::reasoning_effort_name(effort)).c_str(), t));
  }
  if (!a->has("no-baselines")) {
    engine::DecodeOptions ltr;
    ltr.gen_length = 96;
    ltr.block_length = 1;
    ltr.steps = 96;
    Tally t_ltr, t_free;
    for (const HeldoutTurn& c : *cases) run_free(e, c, ltr, t_ltr);
    results.push_back(report("left-to-right", t_ltr));
    engine::DecodeOptions fr;
    fr.gen_length = 96;
    fr.block_length = 32;
    fr.threshold = 0.9;
    for (const HeldoutTurn& c : *cases) run_free(e, c, fr, t_free);
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
