// The bundled model on its held-out eval (tests/data/toolcall/heldout.jsonl): tool-choice and
// argument accuracy of tool_call() infilling next to free threshold decoding of the same turns.
// Skips when models/default.gguf (or $DLOOP_TOOLCALL_MODEL) is absent. Label slow.
// DLOOP_TOOLCALL_LIMIT sets the number of calls (default 40), DLOOP_TOOLCALL_EFFORT the effort.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "dloop/base/json_schema.h"
#include "dloop/engine/tool_call.h"

namespace dloop::engine {
namespace {

using base::Json;

std::string env(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

struct Score {
  int n = 0, called = 0, choice = 0, exact = 0, valid = 0;
  std::vector<double> passes;
  void print(const char* what) const {
    std::vector<double> p = passes;
    std::sort(p.begin(), p.end());
    std::printf("%-14s calls %d  called %.1f%%  choice %.1f%%  args %.1f%%  valid %.1f%%  median passes %.1f\n", what, n,
                100.0 * called / n, 100.0 * choice / n, 100.0 * exact / n, 100.0 * valid / n, p.empty() ? 0 : p[p.size() / 2]);
  }
};

TEST(BundledToolCalls, HeldOutAccuracy) {
  const std::string model = env("DLOOP_TOOLCALL_MODEL", std::string(DLOOP_SOURCE_DIR) + "/models/default.gguf");
  if (!std::filesystem::exists(model)) GTEST_SKIP() << model << " not present";
  const int limit = std::atoi(env("DLOOP_TOOLCALL_LIMIT", "40").c_str());
  const auto effort = parse_reasoning_effort(env("DLOOP_TOOLCALL_EFFORT", "low"));
  ASSERT_TRUE(effort);
  auto opened = Engine::open({model, 0, {}});
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  Engine& e = **opened;
  std::ifstream in(std::string(DLOOP_SOURCE_DIR) + "/tests/data/toolcall/heldout.jsonl");
  ASSERT_TRUE(in.good());
  Score infill, free;
  std::string line;
  while (std::getline(in, line) && infill.n < limit) {
    auto j = Json::parse(line);
    ASSERT_TRUE(j.ok());
    const Json* gold = j->find("gold")->find("tool_call");
    if (!gold) continue;
    ToolCallRequest r;
    std::vector<Json> tool_json;
    for (const Json& m : j->find("messages")->as_array()) r.messages.push_back({m.find("role")->as_string(), m.find("content")->as_string()});
    for (const Json& t : j->find("tools")->as_array()) {
      r.tools.push_back({t.find("name")->as_string(), t.find("description")->as_string(), *t.find("parameters")});
      tool_json.push_back(t);
    }
    r.effort = *effort;
    auto res = e.tool_call(r);
    ASSERT_TRUE(res.ok()) << res.status().message();
    ++infill.n;
    infill.passes.push_back(static_cast<double>(res->forward_passes));
    if (res->is_call) {
      ++infill.called;
      ++infill.valid;  // validated inside tool_call
      if (res->name == gold->find("name")->as_string()) {
        ++infill.choice;
        if (res->arguments_json == *gold->find("arguments")) ++infill.exact;
        else if (std::getenv("DLOOP_TOOLCALL_VERBOSE")) std::printf("args: %s  gold %s\n", res->arguments.c_str(), gold->find("arguments")->dump(Json::Style::kPython).c_str());
      }
    }
    // Free threshold decoding of the same turn (blocks of 32, threshold 0.9, as eval.py).
    GenerateRequest g;
    g.messages = r.messages;
    g.tools = tool_json;
    g.decode.gen_length = 96;
    g.decode.block_length = 32;
    g.decode.threshold = 0.9;
    auto fr = e.generate(g);
    ASSERT_TRUE(fr.ok()) << fr.status().message();
    ++free.n;
    free.passes.push_back(static_cast<double>(fr->forward_passes));
    auto open = e.tokenizer().find_special("<tool_call>");
    auto close = e.tokenizer().find_special("</tool_call>");
    const auto& toks = fr->output_tokens;
    if (open && !toks.empty() && toks[0] == *open) {
      ++free.called;
      auto end = close ? std::find(toks.begin(), toks.end(), *close) : toks.end();
      auto call = Json::parse(e.tokenizer().decode(std::vector<int32_t>(toks.begin() + 1, end), false));
      const Json* name = call.ok() ? call->find("name") : nullptr;
      const Json* args = call.ok() ? call->find("arguments") : nullptr;
      if (name && args && name->is_string()) {
        for (const auto& t : r.tools) {
          auto schema = base::Schema::compile(t.parameters);
          if (t.name == name->as_string() && schema.ok() && schema->validate(*args).ok()) ++free.valid;
        }
        if (name->as_string() == gold->find("name")->as_string()) {
          ++free.choice;
          if (*args == *gold->find("arguments")) ++free.exact;
        }
      }
    }
  }
  infill.print((std::string("infill-") + reasoning_effort_name(*effort)).c_str());
  free.print("free-0.9");
  EXPECT_GT(infill.n, 0);
}

}  // namespace
}  // namespace dloop::engine
