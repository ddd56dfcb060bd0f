// The bundled model on its held-out eval (tests/data/toolcall/heldout.jsonl): tool-choice and
// argument accuracy, forward passes and wall time of tool_call() infilling, next to left-to-right
// one-token-per-pass decoding and free threshold decoding of the same turns with the same model
// (the same measurement as `dloop bench toolcall`, without the runtime). Skips when
// models/default.gguf (or $DLOOP_TOOLCALL_MODEL) is absent. Label slow.
// DLOOP_TOOLCALL_LIMIT: calls (default 40); DLOOP_TOOLCALL_EFFORTS: efforts (default "low");
// DLOOP_TOOLCALL_BASELINES=1 also prints left-to-right and free decoding (off by default: slow);
// DLOOP_TOOLCALL_VERBOSE prints each miss.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "dloop/base/json_schema.h"
#include "dloop/engine/tool_call.h"

namespace dloop::engine {
namespace {

using base::Json;
using Clock = std::chrono::steady_clock;

std::string env(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

struct Case {
  ToolCallRequest request;
  std::vector<Json> tool_json;
  Json gold;
};

struct Score {
  int n = 0, called = 0, choice = 0, exact = 0, valid = 0;
  std::vector<double> passes, ms;
  static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  }
  void print(const std::string& what) const {
    std::printf("%-18s calls %3d  called %5.1f%%  choice %5.1f%%  args %5.1f%%  valid %5.1f%%  median passes %5.1f  median ms %7.1f\n",
                what.c_str(), n, 100.0 * called / n, 100.0 * choice / n, 100.0 * exact / n, 100.0 * valid / n,
                median(passes), median(ms));
  }
  void score(const Case& c, const std::string& name, const Json& args) {
    ++called;
    for (const auto& t : c.request.tools) {
      auto schema = base::Schema::compile(t.parameters);
      if (t.name == name && schema.ok() && schema->validate(args).ok()) ++valid;
    }
    if (name != c.gold.find("name")->as_string()) return;
    ++choice;
    if (args == *c.gold.find("arguments")) {
      ++exact;
    } else if (std::getenv("DLOOP_TOOLCALL_VERBOSE")) {
      std::printf("  args %s  gold %s\n", args.dump(Json::Style::kPython).c_str(),
                  c.gold.find("arguments")->dump(Json::Style::kPython).c_str());
    }
  }
};

std::vector<Case> load_cases(int limit) {
  std::vector<Case> out;
  std::ifstream in(std::string(DLOOP_SOURCE_DIR) + "/tests/data/toolcall/heldout.jsonl");
  std::string line;
  while (std::getline(in, line) && static_cast<int>(out.size()) < limit) {
    auto j = Json::parse(line);
    if (!j.ok()) continue;
    const Json* gold = j->find("gold")->find("tool_call");
    if (!gold) continue;
    Case c;
    for (const Json& m : j->find("messages")->as_array()) {
      c.request.messages.push_back({m.find("role")->as_string(), m.find("content")->as_string()});
    }
    for (const Json& t : j->find("tools")->as_array()) {
      c.request.tools.push_back({t.find("name")->as_string(), t.find("description")->as_string(), *t.find("parameters")});
      c.tool_json.push_back(t);
    }
    c.gold = *gold;
    out.push_back(std::move(c));
  }
  return out;
}

Score run_infill(Engine& e, const std::vector<Case>& cases, ReasoningEffort effort) {
  Score s;
  for (const Case& c : cases) {
    ToolCallRequest r = c.request;
    r.effort = effort;
    auto t0 = Clock::now();
    auto res = e.tool_call(r);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    EXPECT_TRUE(res.ok()) << res.status().message();
    if (!res.ok()) continue;
    ++s.n;
    s.passes.push_back(static_cast<double>(res->forward_passes));
    s.ms.push_back(ms);
    if (res->is_call) s.score(c, res->name, res->arguments_json);
  }
  return s;
}

Score run_free(Engine& e, const std::vector<Case>& cases, const DecodeOptions& o) {
  Score s;
  auto open = e.tokenizer().find_special("<tool_call>");
  auto close = e.tokenizer().find_special("</tool_call>");
  for (const Case& c : cases) {
    GenerateRequest g;
    g.messages = c.request.messages;
    g.tools = c.tool_json;
    g.decode = o;
    auto t0 = Clock::now();
    auto res = e.generate(g);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    EXPECT_TRUE(res.ok()) << res.status().message();
    if (!res.ok()) continue;
    ++s.n;
    s.passes.push_back(static_cast<double>(res->forward_passes));
    s.ms.push_back(ms);
    const auto& toks = res->output_tokens;
    if (!open || toks.empty() || toks[0] != *open) continue;
    auto end = close ? std::find(toks.begin(), toks.end(), *close) : toks.end();
    auto call = Json::parse(e.tokenizer().decode(std::vector<int32_t>(toks.begin() + 1, end), false));
    const Json* name = call.ok() ? call->find("name") : nullptr;
    const Json* args = call.ok() ? call->find("arguments") : nullptr;
    if (name && args && name->is_string()) {
      s.score(c, name->as_string(), *args);
    } else {
      ++s.called;  // a call that does not parse
    }
  }
  return s;
}

TEST(BundledToolCalls, HeldOutAccuracyAndPasses) {
  const std::string model = env("DLOOP_TOOLCALL_MODEL", std::string(DLOOP_SOURCE_DIR) + "/models/default.gguf");
  if (!std::filesystem::exists(model)) GTEST_SKIP() << model << " not present";
  auto opened = Engine::open({model, 0, {}});
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  Engine& e = **opened;
  const auto cases = load_cases(std::atoi(env("DLOOP_TOOLCALL_LIMIT", "40").c_str()));
  ASSERT_FALSE(cases.empty());
  std::stringstream efforts(env("DLOOP_TOOLCALL_EFFORTS", "low"));
  for (std::string name; std::getline(efforts, name, ',');) {
    auto effort = parse_reasoning_effort(name);
    ASSERT_TRUE(effort) << name;
    Score s = run_infill(e, cases, *effort);
    s.print("infill-" + name);
    EXPECT_EQ(s.valid, s.called);  // every call validates
  }
  // The baselines only print (the benchmark is `dloop bench toolcall`); DLOOP_TOOLCALL_BASELINES=1 adds them.
  if (env("DLOOP_TOOLCALL_BASELINES", "0") == "0") return;
  DecodeOptions ltr;
  ltr.gen_length = 96;
  ltr.block_length = 1;
  ltr.steps = 96;
  run_free(e, cases, ltr).print("left-to-right");
  DecodeOptions free;
  free.gen_length = 96;
  free.block_length = 32;
  free.threshold = 0.9;
  run_free(e, cases, free).print("free-0.9");
}

}  // namespace
}  // namespace dloop::engine
