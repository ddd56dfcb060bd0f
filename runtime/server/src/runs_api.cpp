// The workflow-runs API: POST /v1/runs (a workflow by path or inline YAML, with inputs) starts a
// run through runtime::execute_run on the server's io_context with the same Store and engine as
// `dloop run`; GET /v1/runs and /v1/runs/{id} read the state database; GET /v1/runs/{id}/events
// streams the event log as SSE (from `Last-Event-ID` or `?after=SEQ`), following it until the run
// ends; POST /v1/runs/{id}/cancel cancels a run this server is executing (it ends `cancelled` and
// stays resumable). Store calls run on the db thread, never on the loop.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "dloop/base/strings.h"
#include "dloop/runtime/executor.h"
#include "dloop/server/chat_request.h"
#include "dloop/tools/builtins.h"
#include "dloop/workflows/load.h"
#include "offload.h"
#include "server_impl.h"

namespace dloop::server {

using base::Json;
namespace fs = std::filesystem;

namespace {

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

ApiError run_not_found(const std::string& id) {
  return ApiError{404, "invalid_request_error", "No run with id '" + id + "' in the state database.", "id", "run_not_found"};
}

Json run_json(const memory::Run& run, bool executing_here) {
  Json j = memory::to_json(run);
  j.set("object", "workflow.run");
  j.set("executing_here", executing_here);
  return j;
}

template <typename T, typename Work>
asio::awaitable<base::Result<T>> on_db(Server::Impl& s, Work work) {
  auto op = runtime::offload_boxed<base::Result<T>>(s.db.get_executor(), std::move(work));
  runtime::Boxed<base::Result<T>> box = co_await std::move(op);
  co_return std::move(*box.value);
}

struct Loaded {
  std::shared_ptr<const workflows::Workflow> workflow;
  std::string path;  // absolute; inline YAML is saved next to the database so `dloop resume` works
  std::string text;
};

std::variant<Loaded, ApiError> load_workflow(const Server::Impl& s, const Json& body) {
  const Json* path = body.find("workflow");
  const Json* yaml = body.find("workflow_yaml");
  if ((path == nullptr) == (yaml == nullptr)) {
    return bad_request("Give exactly one of 'workflow' (a path) and 'workflow_yaml' (the file's text).", "workflow",
                       "missing_required_parameter");
  }
  const char* param = path ? "workflow" : "workflow_yaml";
  const Json* v = path ? path : yaml;
  if (!v->is_string()) return bad_request(std::string("Invalid type for '") + param + "': expected a string.", param, "invalid_type");
  workflows::LoadOptions lo;
  lo.builtin_tools = tools::builtin_names();
  Loaded out;
  workflows::LoadResult loaded;
  if (path) {
    fs::path p(v->as_string());
    if (p.is_relative()) p = s.opt.workflows_dir / p;
    out.path = fs::absolute(p).lexically_normal().string();
    std::ifstream in(out.path, std::ios::binary);
    if (!in) return bad_request("Cannot read workflow file '" + out.path + "'.", param, "workflow_not_found");
    std::ostringstream ss;
    ss << in.rdbuf();
    out.text = ss.str();
    loaded = workflows::parse_workflow(out.text, out.path, lo);
  } else {
    out.text = v->as_string();
    loaded = workflows::parse_workflow(out.text, "workflow_yaml", lo);
  }
  if (!loaded.workflow) {
    std::string msg = "Invalid workflow: ";
    for (size_t i = 0; i < loaded.diagnostics.size() && i < 5; ++i) {
      if (i) msg += "; ";
      msg += loaded.diagnostics[i].to_string();
    }
    if (loaded.diagnostics.size() > 5) msg += "; (" + std::to_string(loaded.diagnostics.size() - 5) + " more)";
    return bad_request(msg, param, "invalid_workflow");
  }
  if (yaml) {
    fs::path dir = fs::absolute(s.opt.db_path).parent_path() / "dloop-inline-workflows";
    std::error_code ec;
    fs::create_directories(dir, ec);
    const std::string hash = runtime::sha256_hex(out.text);
    out.path = (dir / (hash.substr(7, 16) + ".yaml")).string();
    std::ofstream f(out.path, std::ios::binary | std::ios::trunc);
    f << out.text;
    if (!f) return ApiError{500, "server_error", "Cannot save the inline workflow to " + out.path, "", "io_error"};
  }
  out.workflow = std::make_shared<const workflows::Workflow>(std::move(*loaded.workflow));
  return out;
}

struct Started {
  std::string id;
  bool ended = false;
  base::Status status;
};

asio::awaitable<int> create_run(Server::Impl& s, Stream& stream, const Request& req, bool keep_alive) {
  auto parsed = parse_json_body(req.body());
  if (auto* e = std::get_if<ApiError>(&parsed)) { auto op_ = send_error(stream, req, *e, keep_alive); co_return co_await std::move(op_); }
  const Json& body = std::get<Json>(parsed);
  for (const auto& [k, v] : body.as_object()) {
    (void)v;
    if (k != "workflow" && k != "workflow_yaml" && k != "inputs") {
      { auto op_ = send_error(stream, req, bad_request("Unrecognized request argument supplied: " + k, k, "unknown_parameter"), keep_alive); co_return co_await std::move(op_); }
    }
  }
  if (s.stopping) {
    { auto op_ = send_error(stream, req, ApiError{503, "server_error", "The server is shutting down.", "", "shutting_down"}, false); co_return co_await std::move(op_); }
  }
  auto loaded = load_workflow(s, body);
  if (auto* e = std::get_if<ApiError>(&loaded)) { auto op_ = send_error(stream, req, *e, keep_alive); co_return co_await std::move(op_); }
  Loaded& wf = std::get<Loaded>(loaded);
  Json given = Json::object();
  if (const Json* in = body.find("inputs"); in != nullptr && !in->is_null()) {
    if (!in->is_object()) { auto op_ = send_error(stream, req, bad_request("Invalid type for 'inputs': expected an object.", "inputs", "invalid_type"), keep_alive); co_return co_await std::move(op_); }
    given = *in;
  }
  auto inputs = workflows::resolve_inputs(*wf.workflow, given);
  if (!inputs.ok()) { auto op_ = send_error(stream, req, bad_request(inputs.status().message(), "inputs", "invalid_inputs"), keep_alive); co_return co_await std::move(op_); }

  auto started = std::make_shared<Started>();
  auto timer = std::make_shared<asio::steady_timer>(s.ioc);
  runtime::RunRequest rr;
  rr.workflow = wf.workflow;
  rr.workflow_path = wf.path;
  rr.workflow_hash = runtime::sha256_hex(wf.text);
  rr.inputs = std::move(inputs).value();
  rr.workspace = fs::absolute(s.opt.workspace).lexically_normal();
  Metrics* metrics = &s.metrics;
  rr.on_event = [metrics](const memory::Event& e) {
    if (e.type == memory::event_type::kToolCall) metrics->add_tool_calls(1, "run");
  };
  rr.on_run_id = [started, timer](const std::string& id) {
    started->id = id;
    timer->cancel();
  };
  runtime::RuntimeServices services;
  services.store = s.store;
  services.engine = s.bridge;
  services.blocking = s.blocking.get_executor();
  services.db = s.db.get_executor();
  RunSlot slot{services.cancelled, std::make_shared<asio::cancellation_signal>()};
  s.metrics.add_run(1);
  Server::Impl* sp = &s;
  auto handler = [sp, started, timer](std::exception_ptr ep, runtime::RunOutcome outcome) {
    sp->metrics.add_run(-1);
    if (!started->id.empty()) sp->runs.erase(started->id);
    started->ended = true;
    started->status = ep ? base::internal_error("the run aborted") : outcome.status;
    if (started->id.empty()) started->id = outcome.run_id;
    timer->cancel();
  };
  asio::co_spawn(s.ioc, runtime::execute_run(std::move(rr), services),
                 asio::bind_cancellation_slot(slot.signal->slot(), std::move(handler)));
  // Wait for the run id (the run row is created on the db thread first).
  while (started->id.empty() && !started->ended) {
    timer->expires_after(std::chrono::seconds(30));
    auto op = timer->async_wait(kTuple);
    co_await std::move(op);
  }
  if (started->id.empty()) {
    { auto op_ = send_error(stream, req, ApiError{500, "server_error", "The run could not be created: " + started->status.message(), "", "run_not_created"}, keep_alive); co_return co_await std::move(op_); }
  }
  if (!started->ended) s.runs.emplace(started->id, slot);
  const std::string id = started->id;
  auto got = on_db<memory::Run>(s, [store = s.store, id] { return store->get_run(id); });
  base::Result<memory::Run> run = co_await std::move(got);
  if (!run.ok()) { auto op_ = send_error(stream, req, ApiError{500, "server_error", run.status().message(), "", "store_error"}, keep_alive); co_return co_await std::move(op_); }
  { auto op_ = send_json(stream, req, 201, run_json(*run, s.runs.count(id) > 0), keep_alive); co_return co_await std::move(op_); }
}

int64_t query_int(const std::string& query, const std::string& key, int64_t fallback) {
  for (const auto& part : base::split(query, '&')) {
    if (base::starts_with(part, key + "=")) {
      try {
        return std::stoll(std::string(part.substr(key.size() + 1)));
      } catch (...) {
        return fallback;
      }
    }
  }
  return fallback;
}

asio::awaitable<int> stream_events(Server::Impl& s, Stream& stream, const Request& req, std::string id,
                                   std::string query) {
  auto got = on_db<memory::Run>(s, [store = s.store, id] { return store->get_run(id); });
  base::Result<memory::Run> first = co_await std::move(got);
  if (!first.ok()) { auto op_ = send_error(stream, req, run_not_found(id), false); co_return co_await std::move(op_); }
  int64_t after = query_int(query, "after", 0);
  if (auto it = req.find("Last-Event-ID"); it != req.end()) {
    try {
      after = std::stoll(std::string(it->value()));
    } catch (...) {
    }
  }
  SseWriter w(stream, req);
  auto start = w.start();
  if (!co_await std::move(start)) co_return -1;
  ++s.streams;
  struct Guard {
    Server::Impl& s;
    ~Guard() { --s.streams; }
  } guard{s};
  asio::steady_timer timer(s.ioc);
  for (;;) {
    auto ev = on_db<std::vector<memory::Event>>(s, [store = s.store, id, after] { return store->events(id, after, 200); });
    base::Result<std::vector<memory::Event>> events = co_await std::move(ev);
    if (!events.ok()) break;
    for (const auto& e : *events) {
      auto op = w.event(memory::to_json(e).dump(), e.type, std::to_string(e.seq));
      if (!co_await std::move(op)) co_return -1;
      after = e.seq;
    }
    if (!events->empty()) continue;
    auto rq = on_db<memory::Run>(s, [store = s.store, id] { return store->get_run(id); });
    base::Result<memory::Run> run = co_await std::move(rq);
    if (!run.ok()) break;
    // Finished and fully sent: the run is over (a resumed run reopens; follow it again then).
    if (run->status != memory::RunStatus::kRunning && run->last_seq <= after) {
      Json done = Json::object({{"id", id}, {"status", memory::run_status_name(run->status)}, {"last_seq", run->last_seq}});
      auto op = w.event(done.dump(), "done");
      co_await std::move(op);
      break;
    }
    if (s.stopping) break;
    timer.expires_after(std::chrono::milliseconds(200));
    auto op = timer.async_wait(kTuple);
    co_await std::move(op);
  }
  auto fin = w.finish();
  co_return co_await std::move(fin) ? 200 : -1;
}

}  // namespace

asio::awaitable<int> handle_runs(Server::Impl& s, Stream& stream, const Request& req, std::string rest,
                                 std::string query, bool keep_alive, std::string* route) {
  const auto method = req.method();
  if (rest.empty() || rest == "/") {
    *route = "/v1/runs";
    if (method == http::verb::post) { auto op_ = create_run(s, stream, req, keep_alive); co_return co_await std::move(op_); }
    if (method != http::verb::get) {
      { auto op_ = send_error(stream, req, ApiError{405, "invalid_request_error", "Method not allowed on /v1/runs (GET, POST).", "", "method_not_allowed"}, keep_alive); co_return co_await std::move(op_); }
    }
    memory::RunFilter filter;
    filter.limit = std::clamp<int64_t>(query_int(query, "limit", 20), 1, 1000);
    auto op = on_db<std::vector<memory::Run>>(s, [store = s.store, filter] { return store->list_runs(filter); });
    base::Result<std::vector<memory::Run>> runs = co_await std::move(op);
    if (!runs.ok()) { auto op_ = send_error(stream, req, ApiError{500, "server_error", runs.status().message(), "", "store_error"}, keep_alive); co_return co_await std::move(op_); }
    Json data = Json::array();
    for (const auto& r : *runs) data.push_back(run_json(r, s.runs.count(r.id) > 0));
    { auto op_ = send_json(stream, req, 200, Json::object({{"object", "list"}, {"data", std::move(data)}}), keep_alive); co_return co_await std::move(op_); }
  }
  // rest = "/{id}" or "/{id}/events" or "/{id}/cancel"
  std::string id = rest.substr(1);
  std::string action;
  if (auto slash = id.find('/'); slash != std::string::npos) {
    action = id.substr(slash + 1);
    id.resize(slash);
  }
  if (action.empty()) {
    *route = "/v1/runs/{id}";
    if (method != http::verb::get) {
      { auto op_ = send_error(stream, req, ApiError{405, "invalid_request_error", "Method not allowed on /v1/runs/{id} (GET).", "", "method_not_allowed"}, keep_alive); co_return co_await std::move(op_); }
    }
    auto op = on_db<Json>(s, [store = s.store, id, here = s.runs.count(id) > 0]() -> base::Result<Json> {
      DLOOP_ASSIGN_OR_RETURN(memory::Run run, store->get_run(id));
      DLOOP_ASSIGN_OR_RETURN(std::vector<memory::StepRecord> steps, store->steps(id));
      Json j = run_json(run, here);
      Json st = Json::array();
      for (const auto& step : steps) st.push_back(memory::to_json(step));
      j.set("steps", std::move(st));
      return j;
    });
    base::Result<Json> j = co_await std::move(op);
    if (!j.ok()) {
      if (j.status().code() == base::Code::kNotFound) { auto op_ = send_error(stream, req, run_not_found(id), keep_alive); co_return co_await std::move(op_); }
      { auto op_ = send_error(stream, req, ApiError{500, "server_error", j.status().message(), "", "store_error"}, keep_alive); co_return co_await std::move(op_); }
    }
    { auto op_ = send_json(stream, req, 200, *j, keep_alive); co_return co_await std::move(op_); }
  }
  if (action == "events") {
    *route = "/v1/runs/{id}/events";
    if (method != http::verb::get) {
      { auto op_ = send_error(stream, req, ApiError{405, "invalid_request_error", "Method not allowed on /v1/runs/{id}/events (GET).", "", "method_not_allowed"}, keep_alive); co_return co_await std::move(op_); }
    }
    { auto op_ = stream_events(s, stream, req, id, query); co_return co_await std::move(op_); }
  }
  if (action == "cancel") {
    *route = "/v1/runs/{id}/cancel";
    if (method != http::verb::post) {
      { auto op_ = send_error(stream, req, ApiError{405, "invalid_request_error", "Method not allowed on /v1/runs/{id}/cancel (POST).", "", "method_not_allowed"}, keep_alive); co_return co_await std::move(op_); }
    }
    auto it = s.runs.find(id);
    if (it == s.runs.end()) {
      auto op = on_db<memory::Run>(s, [store = s.store, id] { return store->get_run(id); });
      base::Result<memory::Run> run = co_await std::move(op);
      if (!run.ok()) { auto op_ = send_error(stream, req, run_not_found(id), keep_alive); co_return co_await std::move(op_); }
      ApiError e{409, "invalid_request_error",
                 std::string("Run '").append(id).append("' is ").append(memory::run_status_name(run->status))
                     .append(" and not executing in this server; nothing to cancel."),
                 "id", "run_not_active"};
      { auto op_ = send_error(stream, req, e, keep_alive); co_return co_await std::move(op_); }
    }
    it->second.cancelled->store(true);
    it->second.signal->emit(asio::cancellation_type::terminal);
    { auto op_ = send_json(stream, req, 202, Json::object({{"id", id}, {"object", "workflow.run"}, {"status", "cancelling"}}), keep_alive); co_return co_await std::move(op_); }
  }
  *route = "unknown";
  { auto op_ = send_error(stream, req, ApiError{404, "invalid_request_error", "Unknown request URL: " + std::string(req.target()), "", "unknown_url"}, keep_alive); co_return co_await std::move(op_); }
}

}  // namespace dloop::server
