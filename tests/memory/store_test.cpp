// Store round trips: create/append/read, seq and ordinal assignment, derived runs and steps rows,
// resume lookups, paging, finishing and resuming runs, list filters, and input validation.
#include <gtest/gtest.h>

#include "dloop/memory/store.h"
#include "test_util.h"

namespace dloop::memory {
namespace {

using base::Json;
using namespace testing_util;

TEST(Store, OpensInMemoryAtLatestVersion) {
  auto store = open_or_die(":memory:");
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->schema_version(), Store::latest_schema_version());
  EXPECT_GE(Store::latest_schema_version(), 2);
  EXPECT_TRUE(store->check_integrity().ok());
}

TEST(Store, CreateRunWritesRunStarted) {
  auto store = open_or_die(":memory:");
  auto id = store->create_run(new_run());
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  EXPECT_EQ(id->rfind("r-20261202-120000-", 0), 0u) << *id;
  EXPECT_EQ(id->size(), std::string("r-20261202-120000-0123abcd").size());

  auto run = store->get_run(*id);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->workflow, "triage");
  EXPECT_EQ(run->workflow_path, "flows/triage.yaml");
  EXPECT_EQ(run->workflow_hash, "sha256:0123abcd");
  EXPECT_EQ(run->inputs, Json::object({{"ticket", Json("printer on fire")}}));
  EXPECT_EQ(run->status, RunStatus::kRunning);
  EXPECT_TRUE(run->outputs.is_null());
  EXPECT_EQ(run->last_seq, 1);
  EXPECT_EQ(run->created_at.size(), std::string("2026-12-02T12:00:00.000Z").size());

  auto events = store->events(*id);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 1u);
  const Event& e = (*events)[0];
  EXPECT_EQ(e.seq, 1);
  EXPECT_EQ(e.type, "run_started");
  EXPECT_EQ(e.step_path, "");
  EXPECT_EQ(*e.payload.find("workflow"), Json("triage"));
  EXPECT_EQ(*e.payload.find("inputs"), run->inputs);
}

TEST(Store, AppendAssignsGapFreeSeqAndOrdinals) {
  auto store = open_or_die(":memory:");
  std::string id = *store->create_run(new_run());
  std::vector<NewEvent> first = {ev(event_type::kStepStarted, "classify", 1)};
  for (auto& e : agent_turn("classify", 1, "lookup", Json(1))) first.push_back(std::move(e));
  auto seq = store->append(id, std::move(first));
  ASSERT_TRUE(seq.ok()) << seq.status().to_string();
  EXPECT_EQ(*seq, 5);
  seq = store->append(id, agent_turn("classify", 2, "lookup", Json(2)));
  ASSERT_TRUE(seq.ok());
  EXPECT_EQ(*seq, 8);

  auto events = store->events(id);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 8u);
  for (size_t i = 0; i < events->size(); ++i) EXPECT_EQ((*events)[i].seq, int64_t(i + 1));
  // Second turn's calls are ordinal 1 of their type within (classify, attempt 1).
  EXPECT_EQ((*events)[5].type, "model_call");
  EXPECT_EQ((*events)[5].ordinal, 1);
  EXPECT_EQ((*events)[5].turn, 2);
  EXPECT_EQ((*events)[7].type, "tool_result");
  EXPECT_EQ((*events)[7].ordinal, 1);
  EXPECT_EQ((*events)[1].ordinal, 0);
  EXPECT_EQ(store->get_run(id)->last_seq, 8);
  EXPECT_TRUE(store->check_integrity().ok());
}

TEST(Store, PayloadRoundTripsExactly) {
  auto store = open_or_die(":memory:");
  std::string id = *store->create_run(new_run());
  auto parsed = Json::parse(R"({"text":"line\nnext \u00e9 \ud83d\ude00","n":-3,"x":1.5,"deep":{"a":[true,null,{}]}})");
  ASSERT_TRUE(parsed.ok());
  ASSERT_TRUE(store->append(id, {ev("note", "", 0, 0, *parsed)}).ok());
  auto events = store->events(id, 1);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0].payload, *parsed);
}

TEST(Store, EventsPageFromASeq) {
  auto store = open_or_die(":memory:");
  std::string id = *store->create_run(new_run());
  for (int t = 1; t <= 10; ++t) ASSERT_TRUE(store->append(id, agent_turn("s", t, "tool", Json(t))).ok());
  std::vector<int64_t> seen;
  int64_t after = 0;
  while (true) {
    auto page = store->events(id, after, 7);
    ASSERT_TRUE(page.ok());
    if (page->empty()) break;
    EXPECT_LE(page->size(), 7u);
    for (const auto& e : *page) seen.push_back(e.seq);
    after = page->back().seq;
  }
  ASSERT_EQ(seen.size(), 31u);
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], int64_t(i + 1));
  auto tail = store->events(id, 29);
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(tail->size(), 2u);
}

TEST(Store, RecordedLookupsFindTheCallForResume) {
  auto store = open_or_die(":memory:");
  std::string id = *store->create_run(new_run());
  ASSERT_TRUE(store->append(id, {ev(event_type::kStepStarted, "a", 1)}).ok());
  for (int t = 1; t <= 3; ++t) ASSERT_TRUE(store->append(id, agent_turn("a", t, "tool", Json(t * 10))).ok());
  ASSERT_TRUE(store->append(id, agent_turn("b/for[0]", 1, "other", Json("b"))).ok());

  auto r = store->recorded_tool_result(id, "a", 1, 2);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ(*(*r)->payload.find("result"), Json(30));
  EXPECT_EQ((*r)->turn, 3);

  auto m = store->recorded_model_output(id, "a", 1, 0);
  ASSERT_TRUE(m.ok() && m->has_value());
  EXPECT_EQ((*m)->type, "model_call");
  EXPECT_EQ((*m)->turn, 1);

  auto b = store->recorded(id, CallKey{"b/for[0]", 1, "tool_result", 0});
  ASSERT_TRUE(b.ok() && b->has_value());
  EXPECT_EQ(*(*b)->payload.find("result"), Json("b"));

  // Not recorded: the next call, another attempt, another step, another run.
  for (auto miss : {store->recorded_tool_result(id, "a", 1, 3), store->recorded_tool_result(id, "a", 2, 0),
                    store->recorded_tool_result(id, "c", 1, 0), store->recorded_tool_result("r-none", "a", 1, 0)}) {
    ASSERT_TRUE(miss.ok());
    EXPECT_FALSE(miss->has_value());
  }
}

TEST(Store, StepsAreDerivedFromEvents) {
  auto store = open_or_die(":memory:");
  std::string id = *store->create_run(new_run());
  ASSERT_TRUE(store->append(id, {ev(event_type::kStepStarted, "fetch", 1)}).ok());
  ASSERT_TRUE(store->append(id, {ev(event_type::kStepFailed, "fetch", 1, 0,
                                    Json::object({{"error", Json::object({{"code", Json("deadline_exceeded")},
                                                                          {"message", Json("tool timed out")}})}}))})
                  .ok());
  auto steps = store->steps(id);
  ASSERT_TRUE(steps.ok());
  ASSERT_EQ(steps->size(), 1u);
  EXPECT_EQ((*steps)[0].status, StepStatus::kFailed);
  EXPECT_EQ((*steps)[0].error, "deadline_exceeded: tool timed out");
  EXPECT_FALSE((*steps)[0].ended_at.empty());

  Batch retry(id);
  retry.append(ev(event_type::kStepStarted, "fetch", 2))
      .append(ev(event_type::kStepCompleted, "fetch", 2, 0, Json::object({{"output", Json::object({{"n", Json(7)}})}})))
      .append(ev(event_type::kStepSkipped, "notify", 0, 0, Json::object({{"reason", Json("if: false")}})));
  ASSERT_TRUE(store->commit(retry).ok());
  steps = store->steps(id);
  ASSERT_TRUE(steps.ok());
  ASSERT_EQ(steps->size(), 2u);
  const StepRecord& fetch = (*steps)[0];
  EXPECT_EQ(fetch.step_path, "fetch");
  EXPECT_EQ(fetch.status, StepStatus::kCompleted);
  EXPECT_EQ(fetch.attempts, 2);
  EXPECT_EQ(fetch.error, "");
  EXPECT_EQ(fetch.output, Json::object({{"n", Json(7)}}));
  EXPECT_EQ(fetch.first_seq, 2);
  EXPECT_EQ(fetch.last_seq, 5);
  EXPECT_EQ((*steps)[1].step_path, "notify");
  EXPECT_EQ((*steps)[1].status, StepStatus::kSkipped);
}

TEST(Store, FinishRunAndResume) {
  auto store = open_or_die(":memory:");
  std::string id = *store->create_run(new_run());
  auto seq = store->finish_run(id, RunStatus::kFailed, Json(), "step 'fetch' failed");
  ASSERT_TRUE(seq.ok());
  EXPECT_EQ(*seq, 2);
  auto run = store->get_run(id);
  EXPECT_EQ(run->status, RunStatus::kFailed);
  EXPECT_EQ(run->error, "step 'fetch' failed");

  // A finished run takes nothing but run_resumed.
  auto refused = store->append(id, {ev(event_type::kStepStarted, "fetch", 2)});
  EXPECT_EQ(refused.status().code(), base::Code::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("run_resumed"), std::string::npos);
  EXPECT_EQ(store->get_run(id)->last_seq, 2);
  EXPECT_FALSE(store->finish_run(id, RunStatus::kCompleted, Json(), "").ok());

  ASSERT_TRUE(store->append(id, {ev(event_type::kRunResumed, "", 0, 0, Json::object({{"from_seq", Json(2)}})),
                                 ev(event_type::kStepStarted, "fetch", 2)})
                  .ok());
  EXPECT_EQ(store->get_run(id)->status, RunStatus::kRunning);
  EXPECT_EQ(store->get_run(id)->error, "");
  ASSERT_TRUE(store->finish_run(id, RunStatus::kCompleted, Json::object({{"category", Json("bug")}}), "").ok());
  run = store->get_run(id);
  EXPECT_EQ(run->status, RunStatus::kCompleted);
  EXPECT_EQ(run->outputs, Json::object({{"category", Json("bug")}}));
  EXPECT_EQ(run->last_seq, 5);
  auto events = store->events(id);
  EXPECT_EQ(events->back().type, "run_completed");
  EXPECT_EQ(store->finish_run(id, RunStatus::kRunning, Json(), "").status().code(), base::Code::kInvalidArgument);
}

TEST(Store, CancelRecordsTheReason) {
  auto store = open_or_die(":memory:");
  std::string id = *store->create_run(new_run());
  ASSERT_TRUE(store->finish_run(id, RunStatus::kCancelled, Json(), "ctrl-c").ok());
  EXPECT_EQ(store->get_run(id)->status, RunStatus::kCancelled);
  EXPECT_EQ(store->get_run(id)->error, "ctrl-c");
}

TEST(Store, ListRunsFiltersAndOrders) {
  auto store = open_or_die(":memory:");
  std::vector<std::string> ids;
  for (int i = 0; i < 6; ++i) ids.push_back(*store->create_run(new_run(i % 2 ? "deploy" : "triage")));
  ASSERT_TRUE(store->finish_run(ids[0], RunStatus::kCompleted, Json(), "").ok());
  ASSERT_TRUE(store->finish_run(ids[1], RunStatus::kFailed, Json(), "boom").ok());
  ASSERT_TRUE(store->finish_run(ids[2], RunStatus::kCompleted, Json(), "").ok());

  auto all = store->list_runs();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 6u);
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ((*all)[i].id, ids[5 - i]) << "newest first";

  RunFilter f;
  f.status = RunStatus::kCompleted;
  auto done = store->list_runs(f);
  ASSERT_EQ(done->size(), 2u);
  EXPECT_EQ((*done)[0].id, ids[2]);
  EXPECT_EQ((*done)[1].id, ids[0]);

  f = RunFilter{};
  f.workflow = "deploy";
  auto deploy = store->list_runs(f);
  ASSERT_EQ(deploy->size(), 3u);
  for (const auto& r : *deploy) EXPECT_EQ(r.workflow, "deploy");

  f.status = RunStatus::kRunning;
  auto running_deploy = store->list_runs(f);
  ASSERT_EQ(running_deploy->size(), 2u);

  f = RunFilter{};
  f.limit = 2;
  EXPECT_EQ(store->list_runs(f)->size(), 2u);
  f.limit = 0;
  EXPECT_EQ(store->list_runs(f)->size(), 6u);
  f.workflow = "nope";
  EXPECT_TRUE(store->list_runs(f)->empty());
}

TEST(Store, ExplicitRunIds) {
  auto store = open_or_die(":memory:");
  NewRun r = new_run();
  r.id = "imported-1";
  ASSERT_TRUE(store->create_run(r).ok());
  EXPECT_EQ(store->create_run(r).status().code(), base::Code::kInvalidArgument);
  r.id = "bad id/with slash";
  EXPECT_EQ(store->create_run(r).status().code(), base::Code::kInvalidArgument);
  r.id = "";
  r.workflow = "";
  EXPECT_EQ(store->create_run(r).status().code(), base::Code::kInvalidArgument);
}

TEST(Store, RejectsBadEventsAndUnknownRuns) {
  auto store = open_or_die(":memory:");
  std::string id = *store->create_run(new_run());
  for (const char* type : {"", "Model_Call", "9lives", "has space", "run_started"}) {
    auto r = store->append(id, {ev(type)});
    EXPECT_EQ(r.status().code(), base::Code::kInvalidArgument) << type;
  }
  EXPECT_EQ(store->append(id, {ev("note", "s", -1)}).status().code(), base::Code::kInvalidArgument);
  // A bad event anywhere in a batch rejects the whole batch.
  EXPECT_FALSE(store->append(id, {ev("note"), ev("Bad")}).ok());
  EXPECT_EQ(store->get_run(id)->last_seq, 1);

  EXPECT_EQ(store->append("r-missing", {ev("note")}).status().code(), base::Code::kNotFound);
  EXPECT_EQ(store->get_run("r-missing").status().code(), base::Code::kNotFound);
  EXPECT_EQ(store->events("r-missing").status().code(), base::Code::kNotFound);
  EXPECT_EQ(store->steps("r-missing").status().code(), base::Code::kNotFound);
  auto msg = store->get_run("r-missing").status().message();
  EXPECT_NE(msg.find("r-missing"), std::string::npos);
}

TEST(Store, BatchCommitsEventsAndKvTogether) {
  auto store = open_or_die(":memory:");
  std::string id = *store->create_run(new_run());
  Batch b(id);
  for (auto& e : agent_turn("s", 1, "memory_put", Json("ok"))) b.append(std::move(e));
  b.kv_put("triage", "last_ticket", Json("printer on fire"));
  ASSERT_TRUE(store->commit(b).ok());
  EXPECT_EQ(**store->kv_get("triage", "last_ticket"), Json("printer on fire"));

  // A failing batch (unknown run) writes neither.
  Batch bad("r-missing");
  bad.append(ev("note")).kv_put("triage", "other", Json(1));
  EXPECT_FALSE(store->commit(bad).ok());
  EXPECT_FALSE(store->kv_get("triage", "other")->has_value());
}

TEST(Store, ToJsonShapes) {
  auto store = open_or_die(":memory:");
  std::string id = *store->create_run(new_run());
  Json run = to_json(*store->get_run(id));
  EXPECT_EQ(*run.find("id"), Json(id));
  EXPECT_EQ(*run.find("status"), Json("running"));
  EXPECT_EQ(*run.find("events"), Json(1));
  EXPECT_TRUE(run.find("error")->is_null());
  Json e = to_json(store->events(id)->front());
  EXPECT_EQ(*e.find("type"), Json("run_started"));
  EXPECT_EQ(*e.find("seq"), Json(1));
}

TEST(Store, DefaultDbPathHonoursEnvironment) {
  const char* old = std::getenv("DLOOP_DB");
  std::string saved = old ? old : "";
  ::setenv("DLOOP_DB", "/tmp/x.db", 1);
  EXPECT_EQ(default_db_path(), "/tmp/x.db");
  ::setenv("DLOOP_DB", "", 1);
  EXPECT_EQ(default_db_path(), "dloop.db");
  ::unsetenv("DLOOP_DB");
  EXPECT_EQ(default_db_path(), "dloop.db");
  if (old) ::setenv("DLOOP_DB", saved.c_str(), 1);
}

}  // namespace
}  // namespace dloop::memory
