// The workflow-runs API: POST /v1/runs (a workflow by path or inline YAML, with inputs) starts a
// run through runtime::execute_run on the server's io_context with the same Store and engine as
// `dloop run`; GET /v1/runs and /v1/runs/{id} read the state database; GET /v1/runs/{id}/events
// streams the event log as SSE (from `Last-Event-ID` or `?after=SEQ`), following it until the run
// ends; POST /v1/runs/{id}/cancel cancels a run this server is executing (it ends `cancelled` and
// stays resumable). Store calls run on the db thread, never on the loop.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <filesystem>
#include <fstream>
#include <set>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "dloop/base/strings.h"
#include "dloop/runtime/executor.h"
#include "dloop/runtime/trace.h"
#include "dloop/server/chat_request.h"
#include "dloop/tools/builtins.h"
#include "dloop/workflows/load.h"
#include "guards.h"
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

using Secrets = std::vector<std::pair<std::string, std::string>>;

// The run's secret `env` values as run_started recorded them (trace.h): everything this API sends
// about a run (its row, steps, events, errors) passes through runtime::redact with them, as trace
// export does. Call on the db thread.
Secrets secrets_of(memory::Store& store, const std::string& id) {
  auto first = store.events(id, 0, 1);
  return first.ok() ? runtime::run_secrets(*first) : Secrets{};
}

template <typename T, typename Work>
asio::awaitable<base::Result<T>> on_db(Server::Impl& s, Work work) {
  auto op = runtime::offload_boxed<base::Result<T>>(s.db.get_executor(), std::move(work));
  runtime::Boxed<base::Result<T>> box = co_await std::move(op);
  co_return std::move(*box.value);
}

// Where a run's workflow comes from: a path under --workflows, or the file's text.
struct WorkflowSource {
  bool by_path = false;
  std::string value;
};

struct Loaded {
  std::shared_ptr<const workflows::Workflow> workflow;
  std::string path;  // absolute; inline YAML is saved next to the database so `dloop resume` works
  std::string hash;  // sha256 of the text (the text itself is released once parsed)
};

ApiError workflow_too_large(const Server::Impl& s, const char* param) {
  return ApiError{413, "invalid_request_error",
                  std::string("The workflow in '") + param + "' is larger than the server's limit of " +
                      std::to_string(s.opt.max_workflow_bytes) + " bytes (--max-workflow-bytes).",
                  param, "workflow_too_large"};
}

// Reads {"workflow": PATH} confined to --workflows: relative, no "..", resolved with realpath
// (symlinks included) inside the directory, a regular file, checked again through the opened
// descriptor so a component swapped after the check cannot lead out. Errors name only the path
// as given, never what lies outside the directory.
std::variant<std::string, ApiError> read_confined(const Server::Impl& s, const std::string& given, std::string* text) {
  const char* param = "workflow";
  if (s.opt.workflows_dir.empty()) {
    return ApiError{403, "invalid_request_error",
                    "This server runs no workflow files by path: start it with 'dloop serve --workflows DIR' to "
                    "allow files under DIR, or send the file's text as 'workflow_yaml'.",
                    param, "workflow_paths_disabled"};
  }
  const fs::path p(given);
  bool dotdot = false;
  for (const auto& part : p) dotdot |= part == "..";
  if (given.empty() || given.find('\0') != std::string::npos || p.is_absolute() || dotdot) {
    return bad_request("'workflow' must be a relative path inside the server's --workflows directory, without '..'.",
                       param, "invalid_workflow_path");
  }
  std::error_code ec;
  const fs::path root = fs::canonical(s.opt.workflows_dir, ec);
  if (ec) return ApiError{500, "server_error", "The --workflows directory cannot be opened.", "", "io_error"};
  const fs::path resolved = fs::canonical(root / p, ec);
  auto inside = [&root](const fs::path& q) {
    const auto rel = q.lexically_relative(root);
    return !rel.empty() && *rel.begin() != ".." && rel != ".";
  };
  const ApiError not_found = bad_request("Cannot read workflow file '" + given + "' in the --workflows directory.", param,
                                         "workflow_not_found");
  if (ec) return not_found;
  if (!inside(resolved)) {
    return bad_request("'workflow' must stay inside the server's --workflows directory ('" + given + "' leads out of it).",
                       param, "invalid_workflow_path");
  }
  const int fd = ::open(resolved.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return not_found;
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  const fs::path opened = fs::read_symlink("/proc/self/fd/" + std::to_string(fd), ec);
  struct stat st {};
  if (ec || !inside(opened) || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return bad_request("'workflow' must name a regular file inside the server's --workflows directory.", param,
                       "invalid_workflow_path");
  }
  if (static_cast<uint64_t>(st.st_size) > s.opt.max_workflow_bytes) return workflow_too_large(s, param);
  text->resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < text->size()) {
    const ssize_t n = ::read(fd, text->data() + got, text->size() - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  text->resize(got);
  return resolved.string();
}

// Parses and checks the workflow. Runs on the blocking pool, never on the loop: a large YAML text
// takes a while to parse and its nodes are freed (and the heap trimmed) before this returns.
std::variant<Loaded, ApiError> load_workflow(const Server::Impl& s, WorkflowSource src) {
  const char* param = src.by_path ? "workflow" : "workflow_yaml";
  workflows::LoadOptions lo;
  lo.builtin_tools = tools::builtin_names();
  Loaded out;
  std::string text;
  workflows::LoadResult loaded;
  if (src.by_path) {
    auto read = read_confined(s, src.value, &text);
    if (auto* e = std::get_if<ApiError>(&read)) return *e;
    out.path = std::get<std::string>(read);
    loaded = workflows::parse_workflow(text, src.value, lo);
  } else {
    text = std::move(src.value);
    loaded = workflows::parse_workflow(text, "workflow_yaml", lo);
  }
  struct Trim {  // large parses leave freed pages in the arenas; give them back to the system
    size_t bytes;
    ~Trim() {
#if defined(__GLIBC__)
      if (bytes > (64 << 10)) malloc_trim(0);
#endif
    }
  } trim{text.size()};
  if (!loaded.workflow) {
    std::string msg = "Invalid workflow: ";
    for (size_t i = 0; i < loaded.diagnostics.size() && i < 5; ++i) {
      if (i) msg += "; ";
      msg += loaded.diagnostics[i].to_string();
    }
    if (loaded.diagnostics.size() > 5) msg += "; (" + std::to_string(loaded.diagnostics.size() - 5) + " more)";
    return bad_request(msg, param, "invalid_workflow");
  }
  if (auto tool = command_tool_of(*loaded.workflow); tool && s.opt.api_key.empty() && !s.opt.allow_command_tools) {
    return ApiError{403, "invalid_request_error",
                    "The workflow offers " + *tool +
                        ", which runs programs; over HTTP such runs need 'dloop serve --api-key KEY' (clients then "
                        "send it as a bearer token) or, on a machine where every local program is trusted, "
                        "'--allow-command-tools'.",
                    param, "command_tools_need_api_key"};
  }
  out.hash = runtime::sha256_hex(text);
  if (!src.by_path) {
    fs::path dir = fs::absolute(s.opt.db_path).parent_path() / "dloop-inline-workflows";
    std::error_code ec;
    fs::create_directories(dir, ec);
    out.path = (dir / (out.hash.substr(7, 16) + ".yaml")).string();
    std::ofstream f(out.path, std::ios::binary | std::ios::trunc);
    f << text;
    if (!f) return ApiError{500, "server_error", "Cannot save the inline workflow to " + out.path, "", "io_error"};
  }
  out.workflow = std::make_shared<const workflows::Workflow>(std::move(*loaded.workflow));
  loaded = workflows::LoadResult{};
  std::string().swap(text);
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
  const Json* path = body.find("workflow");
  const Json* yaml = body.find("workflow_yaml");
  if ((path == nullptr) == (yaml == nullptr)) {
    auto op_ = send_error(stream, req, bad_request("Give exactly one of 'workflow' (a path) and 'workflow_yaml' (the file's text).",
                                                   "workflow", "missing_required_parameter"), keep_alive);
    co_return co_await std::move(op_);
  }
  const char* param = path ? "workflow" : "workflow_yaml";
  const Json* v = path ? path : yaml;
  if (!v->is_string()) {
    auto op_ = send_error(stream, req, bad_request(std::string("Invalid type for '") + param + "': expected a string.", param, "invalid_type"), keep_alive);
    co_return co_await std::move(op_);
  }
  if (yaml && v->as_string().size() > s.opt.max_workflow_bytes) {
    auto op_ = send_error(stream, req, workflow_too_large(s, param), keep_alive);
    co_return co_await std::move(op_);
  }
  auto parse = runtime::offload_boxed<std::variant<Loaded, ApiError>>(
      s.blocking.get_executor(), [sp = &s, src = WorkflowSource{path != nullptr, v->as_string()}]() mutable {
        return load_workflow(*sp, std::move(src));
      });
  runtime::Boxed<std::variant<Loaded, ApiError>> loaded_box = co_await std::move(parse);
  auto& loaded = *loaded_box.value;
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
  rr.workflow_hash = wf.hash;
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
  auto got = on_db<Json>(s, [store = s.store, id, here = s.runs.count(id) > 0]() -> base::Result<Json> {
    DLOOP_ASSIGN_OR_RETURN(memory::Run run, store->get_run(id));
    return runtime::redact(run_json(run, here), secrets_of(*store, id));
  });
  base::Result<Json> run = co_await std::move(got);
  if (!run.ok()) { auto op_ = send_error(stream, req, ApiError{500, "server_error", run.status().message(), "", "store_error"}, keep_alive); co_return co_await std::move(op_); }
  { auto op_ = send_json(stream, req, 201, *run, keep_alive); co_return co_await std::move(op_); }
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
  auto got = on_db<Secrets>(s, [store = s.store, id]() -> base::Result<Secrets> {
    DLOOP_ASSIGN_OR_RETURN(memory::Run run, store->get_run(id));
    (void)run;
    return secrets_of(*store, id);
  });
  base::Result<Secrets> secrets = co_await std::move(got);
  if (!secrets.ok()) { auto op_ = send_error(stream, req, run_not_found(id), false); co_return co_await std::move(op_); }
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
      auto op = w.event(runtime::redact(memory::to_json(e), *secrets).dump(), e.type, std::to_string(e.seq));
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
    std::set<std::string> here;
    for (const auto& [run_id, slot] : s.runs) here.insert(run_id);
    auto op = on_db<Json>(s, [store = s.store, filter, here]() -> base::Result<Json> {
      DLOOP_ASSIGN_OR_RETURN(std::vector<memory::Run> runs, store->list_runs(filter));
      Json data = Json::array();
      for (const auto& r : runs) data.push_back(runtime::redact(run_json(r, here.count(r.id) > 0), secrets_of(*store, r.id)));
      return data;
    });
    base::Result<Json> listed = co_await std::move(op);
    if (!listed.ok()) { auto op_ = send_error(stream, req, ApiError{500, "server_error", listed.status().message(), "", "store_error"}, keep_alive); co_return co_await std::move(op_); }
    Json data = std::move(listed).value();
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
      return runtime::redact(j, secrets_of(*store, id));
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
