// The per-workflow KV memory: get/put/delete/list, isolation between workflows, prefixes,
// persistence across reopen, and key validation.
#include <gtest/gtest.h>

#include "dloop/memory/store.h"
#include "test_util.h"

namespace dloop::memory {
namespace {

using base::Json;
using namespace testing_util;

TEST(Kv, PutGetOverwriteDelete) {
  auto store = open_or_die(":memory:");
  auto missing = store->kv_get("wf", "k");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());

  ASSERT_TRUE(store->kv_put("wf", "k", Json::object({{"a", Json::array({Json(1), Json("two")})}})).ok());
  EXPECT_EQ(**store->kv_get("wf", "k"), Json::object({{"a", Json::array({Json(1), Json("two")})}}));
  ASSERT_TRUE(store->kv_put("wf", "k", Json(nullptr)).ok());
  auto null_value = store->kv_get("wf", "k");
  ASSERT_TRUE(null_value->has_value()) << "a stored null is a value, not an absence";
  EXPECT_TRUE((*null_value)->is_null());

  EXPECT_TRUE(*store->kv_delete("wf", "k"));
  EXPECT_FALSE(*store->kv_delete("wf", "k"));
  EXPECT_FALSE(store->kv_get("wf", "k")->has_value());
}

TEST(Kv, WorkflowsAreIsolated) {
  auto store = open_or_die(":memory:");
  ASSERT_TRUE(store->kv_put("a", "k", Json("from a")).ok());
  ASSERT_TRUE(store->kv_put("b", "k", Json("from b")).ok());
  EXPECT_EQ(**store->kv_get("a", "k"), Json("from a"));
  EXPECT_EQ(**store->kv_get("b", "k"), Json("from b"));
  EXPECT_TRUE(*store->kv_delete("a", "k"));
  EXPECT_EQ(**store->kv_get("b", "k"), Json("from b"));
}

TEST(Kv, ListsByPrefixInKeyOrder) {
  auto store = open_or_die(":memory:");
  for (const char* k : {"user:2", "user:10", "user:1", "order:1", "usera", "\xc3\xa9t\xc3\xa9"}) {
    ASSERT_TRUE(store->kv_put("wf", k, Json(k)).ok());
  }
  ASSERT_TRUE(store->kv_put("other", "user:3", Json(3)).ok());
  auto users = store->kv_list("wf", "user:");
  ASSERT_TRUE(users.ok());
  std::vector<std::string> keys;
  for (const auto& e : *users) keys.push_back(e.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"user:1", "user:10", "user:2"}));
  EXPECT_EQ((*users)[0].value, Json("user:1"));
  EXPECT_FALSE((*users)[0].updated_at.empty());
  EXPECT_EQ(store->kv_list("wf")->size(), 6u);
  EXPECT_EQ(store->kv_list("wf", "\xc3\xa9")->size(), 1u);
  EXPECT_TRUE(store->kv_list("wf", "zzz")->empty());
  EXPECT_TRUE(store->kv_list("nobody")->empty());
}

TEST(Kv, PersistsAcrossReopen) {
  TempDb db;
  { ASSERT_TRUE(open_or_die(db.path())->kv_put("wf", "count", Json(41)).ok()); }
  auto store = open_or_die(db.path());
  EXPECT_EQ(**store->kv_get("wf", "count"), Json(41));
}

TEST(Kv, ValidatesKeys) {
  auto store = open_or_die(":memory:");
  EXPECT_EQ(store->kv_put("wf", "", Json(1)).code(), base::Code::kInvalidArgument);
  EXPECT_EQ(store->kv_put("", "k", Json(1)).code(), base::Code::kInvalidArgument);
  EXPECT_EQ(store->kv_put("wf", std::string(1025, 'k'), Json(1)).code(), base::Code::kInvalidArgument);
  EXPECT_TRUE(store->kv_put("wf", std::string(1024, 'k'), Json(1)).ok());
  EXPECT_EQ(store->kv_get("wf", "").status().code(), base::Code::kInvalidArgument);
  EXPECT_EQ(store->kv_delete("", "k").status().code(), base::Code::kInvalidArgument);
  EXPECT_EQ(store->kv_list("").status().code(), base::Code::kInvalidArgument);
  Batch b(*store->create_run(new_run()));
  b.kv_put("wf", "", Json(1));
  EXPECT_EQ(store->commit(b).status().code(), base::Code::kInvalidArgument);
}

}  // namespace
}  // namespace dloop::memory
