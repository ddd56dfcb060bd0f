// memory_get / memory_put over the KvStore interface (InMemoryKvStore here; the runtime's
// SQLite-backed store implements the same interface).
#include "test_util.h"

namespace dloop::tools {
namespace {

using namespace testing;

TEST(MemoryTools, PutThenGet) {
  Harness h;
  BuiltinEnv env{std::make_shared<InMemoryKvStore>()};
  auto put = builtin("memory_put", "null", env);
  auto get = builtin("memory_get", "null", env);
  ToolResult missing = h.call(get, R"({"key": "customer"})");
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing.value(), J(R"({"key": "customer", "found": false, "value": null})"));
  ToolResult stored = h.call(put, R"({"key": "customer", "value": {"id": 7, "tags": ["vip"]}})");
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored.value(), J(R"({"key": "customer", "stored": true})"));
  ToolResult found = h.call(get, R"({"key": "customer"})");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found.value(), J(R"({"key": "customer", "found": true, "value": {"id": 7, "tags": ["vip"]}})"));
  // Stored under the context's scope (the workflow name).
  auto direct = env.kv->get("test-flow", "customer");
  ASSERT_TRUE(direct.ok() && direct->has_value());
  EXPECT_EQ(**direct, J(R"({"id": 7, "tags": ["vip"]})"));
  ASSERT_TRUE(h.call(put, R"({"key": "customer", "value": null})").ok());  // replace
  EXPECT_EQ(h.call(get, R"({"key": "customer"})").value(), J(R"({"key": "customer", "found": true, "value": null})"));
}

TEST(MemoryTools, Scopes) {
  Harness h;
  BuiltinEnv env{std::make_shared<InMemoryKvStore>()};
  auto put_shared = builtin("memory_put", R"({"scope": "shared"})", env);
  auto get_default = builtin("memory_get", "null", env);
  auto get_shared = builtin("memory_get", R"({"scope": "shared"})", env);
  ASSERT_TRUE(h.call(put_shared, R"({"key": "k", "value": 1})").ok());
  EXPECT_EQ(*h.call(get_default, R"({"key": "k"})").value().find("found"), Json(false));
  EXPECT_EQ(*h.call(get_shared, R"({"key": "k"})").value().find("value"), Json(1));
  ToolContext no_scope = h.ctx();
  no_scope.scope.clear();
  ASSERT_TRUE(h.run(invoke_validated(builtin("memory_put", "null", env), J(R"({"key": "k", "value": 2})"), no_scope)).ok());
  EXPECT_EQ(**env.kv->get("default", "k"), Json(2));
}

TEST(MemoryTools, RefusalsAndConfig) {
  Harness h;
  BuiltinEnv env{std::make_shared<InMemoryKvStore>()};
  auto put = builtin("memory_put", R"({"max_value_bytes": 10})", env);
  EXPECT_TOOL_ERROR(h.call(put, R"({"key": "k", "value": "0123456789abc"})"), ToolErrorKind::kDenied,
                    "the value is 15 bytes of JSON; memory values are limited to 10");
  EXPECT_TOOL_ERROR(h.call(put, R"({"key": "", "value": 1})"), ToolErrorKind::kInvalidArguments, "#/key: must be at least 1");
  EXPECT_TOOL_ERROR(h.call(put, R"({"key": "k"})"), ToolErrorKind::kInvalidArguments, "missing required property 'value'");
  EXPECT_EQ(config_error("memory_get", "null"), "memory_get: no KV memory store is available");
  EXPECT_EQ(config_error("memory_put", R"({"scop": "x"})", env),
            "memory_put: unknown `with:` key 'scop' (did you mean 'scope'?); allowed: scope, max_value_bytes");
}

TEST(InMemoryKvStore, KeysEraseAndIsolation) {
  InMemoryKvStore kv;
  ASSERT_TRUE(kv.put("a", "user:1", Json(1)).ok());
  ASSERT_TRUE(kv.put("a", "user:2", Json(2)).ok());
  ASSERT_TRUE(kv.put("a", "order:1", Json(3)).ok());
  ASSERT_TRUE(kv.put("b", "user:9", Json(4)).ok());
  EXPECT_EQ(*kv.keys("a", "user:", 10), (std::vector<std::string>{"user:1", "user:2"}));
  EXPECT_EQ(*kv.keys("a", "", 2), (std::vector<std::string>{"order:1", "user:1"}));
  EXPECT_EQ(*kv.keys("b", "", 10), (std::vector<std::string>{"user:9"}));
  ASSERT_TRUE(kv.erase("a", "user:1").ok());
  ASSERT_TRUE(kv.erase("a", "nope").ok());
  EXPECT_FALSE(kv.get("a", "user:1")->has_value());
}

}  // namespace
}  // namespace dloop::tools
