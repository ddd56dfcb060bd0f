// Property test: random argument schemas (nesting, every supported type, enums, const, bounds,
// lengths, item counts, anyOf, type unions, optional properties) against the random-weight test
// models: every call parses and validates. Engine::tool_call validates before returning, so a
// failure here is a decoder bug; the test re-checks with its own compiled schema.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>

#include "dloop/base/json_schema.h"
#include "dloop/engine/tool_call.h"

namespace dloop::engine {
namespace {

using base::Json;

class SchemaGen {
 public:
  explicit SchemaGen(uint64_t seed) : rng_(seed) {}

  Json object(int depth) {
    Json props = Json::object(), required = Json::array();
    const int n = pick(0, depth == 0 ? 4 : 3);
    for (int i = 0; i < n; ++i) {
      const std::string name = std::string("p").append(std::to_string(i)).append(coin() ? "_x" : "");
      props.set(name, value(depth + 1));
      if (coin()) required.push_back(Json(name));
    }
    Json o = Json::object({{"type", "object"}, {"properties", props}});
    if (required.size()) o.set("required", required);
    if (pick(0, 3) == 0) o.set("additionalProperties", false);
    return o;
  }

  Json value(int depth) {
    const int kind = pick(0, depth >= 3 ? 8 : 11);
    switch (kind) {
      case 0: case 1: {
        Json s = Json::object({{"type", "string"}});
        if (coin()) s.set("minLength", pick(0, 5));
        if (coin()) s.set("maxLength", pick(s.find("minLength") ? static_cast<int>(s.find("minLength")->as_int()) : 0, 30));
        return s;
      }
      case 2: {
        Json s = Json::object({{"type", "integer"}});
        const int lo = pick(-50, 50);
        if (coin()) s.set(coin() ? "minimum" : "exclusiveMinimum", lo);
        if (coin()) s.set(coin() ? "maximum" : "exclusiveMaximum", lo + pick(2, 500));
        return s;
      }
      case 3: {
        Json s = Json::object({{"type", "number"}});
        const double lo = pick(-1000, 1000) / 10.0;
        if (coin()) s.set(coin() ? "minimum" : "exclusiveMinimum", lo);
        if (coin()) s.set(coin() ? "maximum" : "exclusiveMaximum", lo + pick(1, 100) / 7.0);
        return s;
      }
      case 4: return Json::object({{"type", "boolean"}});
      case 5: {
        Json values = Json::array();
        const int n = pick(1, 6);
        for (int i = 0; i < n; ++i) {
          const int t = pick(0, 3);
          values.push_back(t == 0 ? Json(std::string("v").append(std::to_string(i))) : t == 1 ? Json(int64_t{i * 7 - 3}) : t == 2 ? Json(i % 2 == 0) : Json());
        }
        return Json::object({{"enum", values}});
      }
      case 6: return Json::object({{"const", coin() ? Json("fixed") : Json(int64_t{42})}});
      case 7: return Json::object({{"type", Json::array({Json("string"), Json("null")})}});
      case 8: return Json::object({{"type", "null"}});
      case 9: return object(depth);
      case 10: {
        Json a = Json::object({{"type", "array"}, {"items", value(depth + 1)}});
        const int lo = pick(0, 2);
        if (coin()) a.set("minItems", lo);
        if (coin()) a.set("maxItems", lo + pick(0, 3));
        return a;
      }
      default:
        return Json::object({{"anyOf", Json::array({value(depth + 1), value(depth + 1)})}});
    }
  }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool coin() { return pick(0, 1) == 1; }
  std::mt19937_64 rng_;
};

void run_property(const std::string& model, int count, uint64_t seed) {
  auto opened = Engine::open({std::string(DLOOP_SOURCE_DIR) + "/tests/data/models/" + model, 1, {}});
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  Engine& engine = **opened;
  SchemaGen gen(seed);
  const ReasoningEffort efforts[] = {ReasoningEffort::kInstant, ReasoningEffort::kLow, ReasoningEffort::kMedium,
                                     ReasoningEffort::kHigh};
  int64_t passes = 0;
  int too_long = 0;
  for (int i = 0; i < count; ++i) {
    ToolDefinition tool{"tool_" + std::to_string(i), "A random tool.", gen.object(0)};
    ToolCallRequest r;
    r.raw_prompt = "<|im_start|>user\nCall the tool, case " + std::to_string(i) + ".<|im_end|>\n<|im_start|>assistant\n";
    r.tools = {tool};
    r.tool_choice = ToolChoice{ToolChoice::Kind::kRequired, ""};
    r.effort = efforts[i % 4];
    r.answer_length = 32;
    r.string_slot_tokens = 6;  // the test models have a 256-token context
    r.number_slot_tokens = 6;
    auto res = engine.tool_call(r);
    if (!res.ok() && res.status().message().find("exceeds the model's context length") != std::string::npos) {
      ++too_long;  // a legitimate error: the test models have a 256-token context
      continue;
    }
    ASSERT_TRUE(res.ok()) << "schema " << tool.parameters.dump() << ": " << res.status().message();
    ASSERT_TRUE(res->is_call);
    auto schema = base::Schema::compile(tool.parameters);
    ASSERT_TRUE(schema.ok()) << tool.parameters.dump();
    auto args = Json::parse(res->arguments);
    ASSERT_TRUE(args.ok()) << res->arguments;
    auto valid = schema->validate(*args);
    ASSERT_TRUE(valid.ok()) << tool.parameters.dump() << " -> " << res->arguments << ": " << valid.message();
    passes += res->forward_passes;
  }
  std::printf("%s: %d schemas, %d over the context, %.2f forward passes per call\n", model.c_str(), count,
              too_long, static_cast<double>(passes) / std::max(1, count - too_long));
  EXPECT_LT(too_long, count / 20);
}

TEST(ToolCallProperty, RandomSchemasLlada) { run_property("llada-f32.gguf", 3000, 1); }
TEST(ToolCallProperty, RandomSchemasDream) { run_property("dream-f32.gguf", 1000, 2); }

}  // namespace
}  // namespace dloop::engine
