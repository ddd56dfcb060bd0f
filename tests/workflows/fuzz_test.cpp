// Mutation fuzzing of the loader and the expression language: thousands of deterministic random
// mutations of the valid test workflows (byte flips, deletions, duplications, YAML and
// expression fragments spliced in) go through validate(); random token soups go through the
// expression parser and evaluator. Nothing may crash, hang or throw, and every result must be
// coherent (a workflow exactly when there are no diagnostics; positions within the text).
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <random>
#include <sstream>

#include "dloop/workflows/load.h"

namespace dloop::workflows {
namespace {

std::string read(const std::string& name) {
  std::ifstream in(std::string(DLOOP_SOURCE_DIR) + "/tests/workflows/data/" + name, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const char* const kFragments[] = {
    "${{", "}}", "${{ steps.", "${{ inputs.", ": ", "- ", "\n  ", "\n- id: x\n", "&a ", "*a", "[", "]", "{", "}",
    "'", "\"", "\\", "#", "|\n", ">\n", "\t", "~", "null", "true", "1e999", "-", "!!str ", "? ", "---\n", "...\n",
    "\xff", "\xc3\x28", "\0", "((((((((", "steps:", "agent:", "for_each:", "repeat_until:", "parallel:", "then:",
    "output_schema: {type: object, properties: {", "max_iterations: 0", "&x [*x]", "%YAML 1.2\n",
};

std::string mutate(std::string s, std::mt19937& rng) {
  auto pick = [&](size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  const int edits = 1 + static_cast<int>(pick(4));
  for (int e = 0; e < edits; ++e) {
    size_t pos = pick(s.size() + 1);
    switch (pick(6)) {
      case 0:  // flip a byte
        if (!s.empty()) s[pick(s.size())] = static_cast<char>(pick(256));
        break;
      case 1:  // delete a range
        if (!s.empty()) s.erase(pick(s.size()), 1 + pick(20));
        break;
      case 2: {  // duplicate a range
        size_t from = pick(s.size() + 1);
        s.insert(pos, s.substr(from, 1 + pick(40)));
        break;
      }
      case 3: {  // splice a fragment
        const std::string f = kFragments[pick(std::size(kFragments))];
        s.insert(pos, f);
        break;
      }
      case 4:  // truncate
        s.resize(pick(s.size() + 1));
        break;
      default: {  // swap two lines
        size_t a = s.find('\n', pick(s.size() + 1));
        size_t b = s.find('\n', pick(s.size() + 1));
        if (a != std::string::npos && b != std::string::npos && a != b) {
          if (a > b) std::swap(a, b);
          size_t a_end = s.find('\n', a + 1);
          if (a_end != std::string::npos && a_end < b) {
            std::string first = s.substr(a, a_end - a);
            s.erase(a, a_end - a);
            s.insert(b - first.size(), first);
          }
        }
      }
    }
  }
  return s;
}

void check_coherent(const std::string& text, const LoadResult& r) {
  ASSERT_EQ(r.workflow.has_value(), r.diagnostics.empty());
  ASSERT_LE(r.diagnostics.size(), kMaxDiagnostics + 1);
  const int lines = 2 + static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  for (const auto& d : r.diagnostics) {
    ASSERT_FALSE(d.message.empty());
    ASSERT_GE(d.line, 0);
    ASSERT_LE(d.line, lines) << d.to_string();
    ASSERT_GE(d.column, 0);
  }
}

TEST(WorkflowFuzz, MutatedFilesNeverCrash) {
  const std::vector<std::string> seeds = {read("triage.yaml"), read("loops.yaml"), read("minimal.yaml")};
  for (const auto& s : seeds) ASSERT_FALSE(s.empty());
  std::mt19937 rng(20240601);
  const auto start = std::chrono::steady_clock::now();
  size_t valid = 0;
  const int kIterations = 3000;
  for (int i = 0; i < kIterations; ++i) {
    std::string text = mutate(seeds[static_cast<size_t>(i) % seeds.size()], rng);
    LoadResult r = parse_workflow(text, "fuzz.yaml");
    check_coherent(text, r);
    if (HasFatalFailure()) {
      ADD_FAILURE() << "input #" << i << ":\n" << text;
      return;
    }
    valid += r.workflow.has_value();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 60.0);
  // Some mutations (comments, whitespace) leave a file valid; most do not.
  EXPECT_GT(valid, 0u);
  EXPECT_LT(valid, static_cast<size_t>(kIterations));
}

TEST(WorkflowFuzz, RandomExpressionsNeverCrash) {
  const char* const tokens[] = {"inputs", "steps", ".", "a", "[", "]", "(", ")", "0", "-1", "1.5", "'s'", "\"t\"",
                                "==", "!=", "<", "<=", ">", ">=", "&&", "||", "!", "and", "or", "not", "true",
                                "null", ",", "length", "contains", "json", "fromjson", "default", "format", "join",
                                "lower", "'{0}'", "'[1,{'", " ", "$", "}}", "'"};
  std::mt19937 rng(7);
  EvalContext ctx;
  ctx.set("inputs", base::Json::object({{"a", base::Json::array({1, "x", base::Json()})}}));
  ctx.set("steps", base::Json::object({{"a", base::Json::object({{"output", "{\"k\": [1]}"}})}}));
  for (int i = 0; i < 5000; ++i) {
    std::string text;
    const size_t n = 1 + std::uniform_int_distribution<size_t>(0, 24)(rng);
    for (size_t k = 0; k < n; ++k) text += tokens[std::uniform_int_distribution<size_t>(0, std::size(tokens) - 1)(rng)];
    SyntaxError err;
    auto e = parse_expression(text, err);
    if (!e.ok()) {
      ASSERT_LE(err.offset, text.size()) << text;
      continue;
    }
    (void)e->paths();
    auto v = evaluate(*e, ctx);
    if (!v.ok()) {
      ASSERT_FALSE(v.status().message().empty());
    }
    auto t = parse_template("x ${{ " + text + " }} y");
    if (t.ok()) (void)render(*t, ctx);
  }
}

}  // namespace
}  // namespace dloop::workflows
