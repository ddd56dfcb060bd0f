// `dloop eval`: a model's tool-calling quality on held-out turns (by default the bundled model's
// held-out split, tests/data/toolcall/heldout.jsonl). Every assistant turn is decoded twice:
//   schema-guided  Engine::tool_call (tool_choice auto, each --effort): the call-or-answer decision,
//                  tool choice, argument exact match, schema validity, forward passes per turn;
//   free           threshold decoding of the raw answer (blocks of 32, threshold 0.9): whether a
//                  call comes out as valid JSON, tool choice, exact arguments, the stop decision.
// The stop decision is right when the model calls a tool on a turn whose gold is a call and
// answers on a turn whose gold is a final answer. Not thread-safe (CLI).
#include <chrono>
#include <cstdio>
#include <optional>

#include "args.h"
#include "commands.h"
#include "dloop/base/strings.h"
#include "heldout.h"
#include "model_path.h"

namespace dloop::cli {
namespace {

using base::Json;
using Clock = std::chrono::steady_clock;

struct Tally {
  int turns = 0, call_turns = 0, answer_turns = 0;
  int stop_right = 0;                            // call vs answer decided as the gold turn did
  int started = 0, json_ok = 0;                  // free decoding: calls begun, calls that parse
  int choice = 0, exact = 0, valid = 0;          // over gold-call turns
  int errors = 0;                                // turns whose decode failed (counted as misses)
  std::vector<double> passes, wall_ms;

  Json report(const std::string& method) const {
    auto frac = [](int a, int b) { return b ? static_cast<double>(a) / b : 0.0; };
    Json r = Json::object({{"method", method}, {"turns", turns}, {"call_turns", call_turns},
                           {"answer_turns", answer_turns}, {"stop_decision", frac(stop_right, turns)},
                           {"tool_choice", frac(choice, call_turns)}, {"args_exact", frac(exact, call_turns)},
                           {"valid", frac(valid, call_turns)}, {"errors", errors},
                           {"median_forward_passes", median(passes)},
                           {"median_wall_ms", median(wall_ms)}});
    if (method == "free") r.set("valid_json", frac(json_ok, started));
    return r;
  }
};

void count_turn(Tally& t, const HeldoutTurn& turn, bool called) {
  ++t.turns;
  (turn.gold_call ? t.call_turns : t.answer_turns) += 1;
  if (called == turn.gold_call.has_value()) ++t.stop_right;
}

void count_call(Tally& t, const HeldoutTurn& turn, const std::string& name, const Json& args) {
  if (!turn.gold_call) return;
  CallMatch m = match_call(turn, name, args);
  t.choice += m.name;
  t.exact += m.exact;
  t.valid += m.valid;
}

std::string describe_miss(const HeldoutTurn& turn, const std::string& got) {
  std::string want = turn.gold_call ? turn.gold_call->dump() : "answer: " + turn.gold_answer;
  return std::string("line ").append(std::to_string(turn.line)).append(": want ").append(want)
      .append("\n          got  ").append(got);
}

// What one decoding of one turn produced, in the terms the tally needs.
struct Decoded {
  bool started = false;  // a call was begun (schema-guided: the model chose to call)
  bool parsed = false;   // the call parses (schema-guided: always, when begun)
  std::string name;
  Json arguments;
  std::string shown;     // what --verbose prints on a miss
  double forward_passes = 0;
};

// Decodes every turn with decode(turn) -> Result<Decoded> and tallies it. A turn whose decode
// fails (the model's call outgrew the context, say) is printed with its line, counted in
// t.errors and as a miss on every figure (its stop decision too), and the run goes on.
template <class Decode, class Progress>
void tally_method(const std::vector<HeldoutTurn>& turns, const std::string& method, bool verbose,
                  Progress&& progress, Decode&& decode, Tally& t) {
  for (size_t i = 0; i < turns.size(); ++i) {
    const HeldoutTurn& turn = turns[i];
    const auto t0 = Clock::now();
    base::Result<Decoded> d = decode(turn);
    if (!d.ok()) {
      std::fprintf(stderr, "%s line %lld: error: %s\n", method.c_str(), static_cast<long long>(turn.line),
                   d.status().message().c_str());
      ++t.turns;
      (turn.gold_call ? t.call_turns : t.answer_turns) += 1;
      ++t.errors;
      progress(method.c_str(), i + 1);
      continue;
    }
    t.wall_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    t.passes.push_back(d->forward_passes);
    count_turn(t, turn, d->started);
    t.started += d->started;
    t.json_ok += d->parsed;
    if (d->parsed) count_call(t, turn, d->name, d->arguments);
    const bool right = d->parsed ? turn.gold_call && match_call(turn, d->name, d->arguments).exact
                                 : !d->started && !turn.gold_call;
    if (verbose && !right) std::fprintf(stderr, "%s %s\n", method.c_str(), describe_miss(turn, d->shown).c_str());
    progress(method.c_str(), i + 1);
  }
}

}  // namespace

int cmd_eval(const std::vector<std::string>& args) {
  ArgParser p("eval", "[options]",
              "Tool-calling quality of a model on held-out turns: schema-guided decoding (tool_call) at\n"
              "each --effort and free threshold decoding, same model, same turns. Reports the stop\n"
              "decision (call vs answer), tool choice, exact arguments, schema validity, the valid-JSON\n"
              "rate of free decoding and forward passes per turn.");
  p.flag({"model", "FILE", "GGUF model file", false, "the bundled model"})
      .flag({"data", "FILE", "held-out turns, one JSON object a line (docs/cli.md, dloop eval)", false,
             "tests/data/toolcall/heldout.jsonl"})
      .flag({"limit", "N", "turns to evaluate", false, "all"})
      .flag({"effort", "LIST", "reasoning efforts for schema-guided decoding", false, "low"})
      .flag({"cache", "MODE", "K/V cache of schema-guided decoding: none, prefix, dual", false, "the effort's preset"})
      .flag({"reuse", "MODE", "prompt reuse of schema-guided decoding: off, system, turns", false,
             "the effort's preset"})
      .flag({"no-copy-repair", "", "schema-guided decoding keeps values as decoded: no near-copy repair, completion, array cut or fill, stated values, lists or literals, or call scope (docs/tool-calls.md \"Copy repair\")"})
      .flag({"ground", "", "schema-guided string and number values only as spans of the conversation "
                           "(rows grounded-EFFORT; docs/tool-calls.md \"Grounded values\")"})
      .flag({"no-key-check", "", "schema-guided decoding keeps the values under the keys infilling wrote them "
                                 "(docs/tool-calls.md \"Key check\"; default: the effort's preset)"})
      .flag({"no-duplicate-check", "", "schema-guided decoding keeps a value written under two keys "
                                       "(docs/tool-calls.md \"Duplicate check\"; default: on with the key check)"})
      .flag({"no-stated-keys", "", "schema-guided decoding does not read which key each value goes under from the "
                                   "request (docs/tool-calls.md \"Stated keys\"; default: on with the key check)"})
      .flag({"mention-prior", "LOGODDS", "schema-guided decoding: log-odds for the optional arguments and enum values "
                                         "the request names (docs/tool-calls.md \"Mention prior\"; 0: off)", false,
             "2.197 (log 9)"})
      .flag({"no-free", "", "skip free decoding"})
      .flag({"threads", "N", "compute threads", false, "physical cores"})
      .flag({"verbose", "", "print every miss"})
      .flag({"json", "", "print JSON"});
  auto a = p.parse(args, 0, 0);
  if (p.help_requested()) { std::fputs(p.usage().c_str(), stdout); return kExitOk; }
  auto usage_error = [](const base::Status& s) {
    std::fprintf(stderr, "dloop eval: %s\n", s.message().c_str());
    return kExitUsage;
  };
  if (!a.ok()) return usage_error(a.status());
  auto limit = a->get_int("limit", 1 << 30, 1, 1 << 30);
  auto threads = a->get_int("threads", 0, 0, 256);
  if (!limit.ok()) return usage_error(limit.status());
  if (!threads.ok()) return usage_error(threads.status());
  auto mention_prior = a->get_double("mention-prior", engine::ToolCallRequest{}.mention_log_prior);
  if (!mention_prior.ok()) return usage_error(mention_prior.status());
  if (!(*mention_prior >= 0 && *mention_prior <= 100)) {
    return usage_error(base::invalid_argument("--mention-prior: must be in [0, 100], got " + *a->get("mention-prior")));
  }
  std::vector<engine::ReasoningEffort> efforts;
  for (const std::string& s : base::split(a->get("effort").value_or("low"), ',')) {
    auto e = engine::parse_reasoning_effort(s);
    if (!e) return usage_error(base::invalid_argument("--effort: unknown effort '" + s + "' (instant, low, medium, high)"));
    efforts.push_back(*e);
  }
  std::optional<engine::CacheMode> cache;
  std::optional<engine::PromptReuse> reuse;
  if (auto c = a->get("cache")) {
    cache = engine::parse_cache_mode(*c);
    if (!cache) return usage_error(base::invalid_argument("--cache: unknown mode '" + *c + "' (none, prefix, dual)"));
  }
  if (auto r = a->get("reuse")) {
    reuse = engine::parse_prompt_reuse(*r);
    if (!reuse) return usage_error(base::invalid_argument("--reuse: unknown mode '" + *r + "' (off, system, turns)"));
  }
  auto model = resolve_model_path(a->get("model").value_or("default"));
  if (!model.ok()) return usage_error(model.status());
  auto turns = load_heldout(a->get("data").value_or(default_heldout_path()), *limit, false);
  if (!turns.ok()) return usage_error(turns.status());
  if (turns->empty()) return usage_error(base::invalid_argument("no turns in the data file"));
  auto opened = engine::Engine::open({*model, static_cast<int>(*threads), {}});
  if (!opened.ok()) {
    std::fprintf(stderr, "dloop eval: %s\n", opened.status().message().c_str());
    return kExitFailed;
  }
  engine::Engine& e = **opened;
  const bool verbose = a->has("verbose");
  const bool json = a->has("json");
  auto progress = [&](const char* method, size_t done) {
    if (!json && (done % 20 == 0 || done == turns->size())) {
      std::fprintf(stderr, "\r%s: %zu/%zu turns", method, done, turns->size());
      if (done == turns->size()) std::fputc('\n', stderr);
    }
  };
  Json results = Json::array();
  bool all_failed = false;  // some method decoded no turn at all
  for (engine::ReasoningEffort effort : efforts) {
    const std::string method = std::string(a->has("ground") ? "grounded-" : "schema-guided-") +
                               engine::reasoning_effort_name(effort);
    Tally t;
    auto guided = [&](const HeldoutTurn& turn) -> base::Result<Decoded> {
      engine::ToolCallRequest r;
      r.messages = turn.messages;
      r.tools = turn.tools;
      r.effort = effort;
      r.cache = cache;
      r.prompt_reuse = reuse;
      r.copy_repair = !a->has("no-copy-repair");
      r.ground_values = a->has("ground");
      r.mention_log_prior = *mention_prior;
      if (a->has("no-key-check")) r.key_check = false;
      if (a->has("no-duplicate-check")) r.duplicate_check = false;
      if (a->has("no-stated-keys")) r.stated_keys = false;
      auto res = e.tool_call(r);
      if (!res.ok()) return res.status();
      return Decoded{res->is_call, res->is_call, res->name, res->arguments_json,
                     res->is_call ? res->name + " " + res->arguments : "answer: " + res->answer,
                     static_cast<double>(res->forward_passes)};
    };
    tally_method(*turns, method, verbose, progress, guided, t);
    all_failed = all_failed || t.errors == t.turns;
    results.push_back(t.report(method));
  }
  if (!a->has("no-free")) {
    engine::DecodeOptions o;
    o.gen_length = 96;
    o.block_length = 32;
    o.threshold = 0.9;
    Tally t;
    auto free_decode = [&](const HeldoutTurn& turn) -> base::Result<Decoded> {
      engine::GenerateRequest g;
      g.messages = turn.messages;
      g.tools = turn.tool_json;
      g.decode = o;
      auto r = e.generate(g);
      if (!r.ok()) return r.status();
      FreeCall f = read_free_call(e, r->output_tokens);
      return Decoded{f.started, f.parsed, f.name, f.arguments, r->text, static_cast<double>(r->forward_passes)};
    };
    tally_method(*turns, "free", verbose, progress, free_decode, t);
    all_failed = all_failed || t.errors == t.turns;
    results.push_back(t.report("free"));
  }
  if (json) {
    Json out = Json::object({{"model", *model}, {"turns", static_cast<int64_t>(turns->size())},
                             {"results", std::move(results)}});
    std::printf("%s\n", out.dump(Json::Style::kPretty).c_str());
    return all_failed ? kExitFailed : kExitOk;
  }
  std::printf("%zu held-out turns, model %s\n\n", turns->size(), model->c_str());
  std::printf("%-22s %8s %8s %8s %8s %8s %10s %8s %9s %7s\n", "method", "stop", "choice", "args", "valid", "json",
              "passes", "wall ms", "turns", "errors");
  for (const Json& r : results.as_array()) {
    const Json* vj = r.find("valid_json");
    char json_col[16] = "-";
    if (vj) std::snprintf(json_col, sizeof json_col, "%.1f%%", 100 * vj->as_double());
    std::printf("%-22s %7.1f%% %7.1f%% %7.1f%% %7.1f%% %8s %10.1f %8.1f %9lld %7lld\n",
                r.find("method")->as_string().c_str(), 100 * r.find("stop_decision")->as_double(),
                100 * r.find("tool_choice")->as_double(), 100 * r.find("args_exact")->as_double(),
                100 * r.find("valid")->as_double(), json_col, r.find("median_forward_passes")->as_double(),
                r.find("median_wall_ms")->as_double(), static_cast<long long>(r.find("turns")->as_int()),
                static_cast<long long>(r.find("errors")->as_int()));
  }
  std::printf("\nstop: call vs answer as the gold turn; choice, args (exact), valid (schema): over the %lld call turns;\n"
              "json: free-decoded calls that parse; passes and wall ms: medians per turn; errors: turns whose\n"
              "decode failed (printed above with their line), counted as misses on every figure\n",
              static_cast<long long>(results.as_array()[0].find("call_turns")->as_int()));
  return all_failed ? kExitFailed : kExitOk;
}

}  // namespace dloop::cli
