// McpClient: the server process, the request lock, one-request-at-a-time JSON-RPC over its
// stdin/stdout, the handshake and tools/call. See mcp_client.h; the tools built on it are in
// mcp_tools.cpp.
#include "dloop/tools/mcp_client.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <mutex>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include "dloop/base/strings.h"
#include "dloop/tools/jsonrpc.h"
#include "dloop/tools/process.h"
#include "src/spawn.h"

extern char** environ;

namespace dloop::tools {

using asio::posix::stream_descriptor;
using base::Json;
namespace {
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
constexpr size_t kStderrTail = 4096;

std::string seconds_text(Clock::duration d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", std::chrono::duration<double>(d).count());
  return buf;
}

asio::awaitable<bool> cancelled_now() {
  auto cs = co_await asio::this_coro::cancellation_state;
  co_return cs.cancelled() != asio::cancellation_type::none;
}

// Writing to a server that exited must be an EPIPE error, not the death of dloop (as in
// process.cpp; children get the default disposition back).
void ignore_sigpipe_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction old {};
    if (sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) signal(SIGPIPE, SIG_IGN);
  });
}

bool supported_handshake_version(const std::string& v) {
  for (const char* s : {kMcpHandshakeVersion, "2025-06-18", "2025-03-26", "2024-11-05"}) {
    if (v == s) return true;
  }
  return false;
}

}  // namespace

struct McpClient::Child {
  pid_t pid = -1;
  bool reaped = false;
  int status = 0;
  bool dead = false;  // killed, or found broken; never used again
  std::unique_ptr<stream_descriptor> in, out, err;
  std::string buf;          // stdout bytes not yet consumed
  std::string stderr_tail;  // the last kStderrTail bytes of stderr
  bool stderr_done = false; // the stderr pump saw EOF (or its pipe was closed)

  ~Child() {
    if (pid > 0 && !reaped) {
      ::kill(-pid, SIGKILL);
      int st;
      while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    }
  }
  // True once the process has exited (reaps it).
  bool exited() {
    if (reaped) return true;
    int st = 0;
    pid_t r = ::waitpid(pid, &st, WNOHANG);
    if (r == pid) {
      reaped = true;
      status = st;
      ::kill(-pid, SIGKILL);  // stragglers in its group
    }
    return reaped;
  }
  void close_pipes() {
    boost::system::error_code ignored;
    for (auto* d : {in.get(), out.get(), err.get()}) {
      if (d) d->close(ignored);
    }
  }
  std::string describe_exit() const {
    if (!reaped) return "closed its stdout";
    if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
      const char* abbrev = sigabbrev_np(WTERMSIG(status));
      return "was killed by signal " + std::to_string(WTERMSIG(status)) +
             (abbrev ? " (SIG" + std::string(abbrev) + ")" : std::string());
    }
    return "ended";
  }
  std::string stderr_excerpt() const {
    std::string_view t = base::trim(stderr_tail);
    if (t.empty()) return "";
    if (t.size() > 1000) t = t.substr(t.size() - 1000);
    return "; its stderr ends: " + to_valid_utf8(t);
  }
};

struct McpClient::Reply {
  enum class Kind { kOk, kRpcError, kTimeout, kCrashed, kGarbage, kTooLarge, kCancelled };
  Kind kind = Kind::kOk;
  Json result;
  int64_t code = 0;
  std::string message;  // what happened, for kinds other than kOk
};

struct McpClient::Waiter {
  explicit Waiter(asio::any_io_executor ex) : timer(ex, Clock::time_point::max()) {}
  asio::steady_timer timer;
  bool granted = false;
};

struct McpClient::Held {
  McpClient* self;
  ~Held() { self->unlock(); }
};

namespace {

// Reads the server's stderr line by line into the log and the child's tail, until EOF.
asio::awaitable<void> pump_stderr(std::shared_ptr<McpClient::Child> child, LogSink log, std::string label) {
  std::array<char, 4096> buf;
  std::string line;
  while (child->err && child->err->is_open()) {
    auto [ec, n] = co_await child->err->async_read_some(asio::buffer(buf), kTuple);
    child->stderr_tail.append(buf.data(), n);
    if (child->stderr_tail.size() > 2 * kStderrTail) child->stderr_tail.erase(0, child->stderr_tail.size() - kStderrTail);
    line.append(buf.data(), n);
    size_t nl;
    while ((nl = line.find('\n')) != std::string::npos) {
      std::string one = to_valid_utf8(base::trim(std::string_view(line).substr(0, nl)));
      line.erase(0, nl + 1);
      if (one.empty()) continue;
      ToolContext ctx;
      ctx.log = log;
      tool_log(ctx, base::LogLevel::kInfo, label, "stderr: " + one);
    }
    if (line.size() > 8192) line.clear();  // a very long line without newline: drop it
    if (ec) break;
  }
  child->stderr_done = true;
}

}  // namespace

std::shared_ptr<McpClient> McpClient::create(asio::any_io_executor executor, McpServerConfig config, LogSink log) {
  return std::shared_ptr<McpClient>(new McpClient(std::move(executor), std::move(config), std::move(log)));
}

McpClient::McpClient(asio::any_io_executor executor, McpServerConfig config, LogSink log)
    : executor_(std::move(executor)), config_(std::move(config)), log_(std::move(log)) {
  if (config_.label.empty() && !config_.argv.empty()) config_.label = "mcp server '" + config_.argv[0] + "'";
}

McpClient::~McpClient() {
  if (child_) child_->close_pipes();
}

bool McpClient::running() const { return child_ && !child_->dead && !child_->reaped; }

asio::awaitable<void> McpClient::lock() {
  if (!busy_) {
    busy_ = true;
    co_return;
  }
  auto w = std::make_shared<Waiter>(executor_);
  waiters_.push_back(w);
  auto wait = w->timer.async_wait(kTuple);
  co_await std::move(wait);
  if (!w->granted) {  // cancelled while queued
    for (auto it = waiters_.begin(); it != waiters_.end(); ++it) {
      if (*it == w) {
        waiters_.erase(it);
        break;
      }
    }
    throw boost::system::system_error(asio::error::operation_aborted);
  }
}

void McpClient::unlock() {
  if (waiters_.empty()) {
    busy_ = false;
    return;
  }
  auto next = waiters_.front();
  waiters_.pop_front();
  next->granted = true;  // ownership passes directly; busy_ stays true
  next->timer.cancel();
}

void McpClient::kill_child(const std::string& why) {
  if (!child_ || child_->dead) return;
  child_->dead = true;
  if (!child_->reaped) ::kill(-child_->pid, SIGKILL);
  child_->close_pipes();
  ToolContext ctx;
  ctx.log = log_;
  tool_log(ctx, base::LogLevel::kWarn, config_.label, "stopped: " + why);
}

Json McpClient::with_meta(Json params) const {
  if (!modern_) return params;
  if (!params.is_object()) params = Json::object();
  Json meta = params.find("_meta") ? *params.find("_meta") : Json::object();
  meta.set("io.modelcontextprotocol/protocolVersion", kMcpModernVersion);
  meta.set("io.modelcontextprotocol/clientCapabilities", Json::object());
  meta.set("io.modelcontextprotocol/clientInfo", Json::object({{"name", "dloop"}, {"version", DLOOP_VERSION}}));
  params.set("_meta", std::move(meta));
  return params;
}

namespace {

// Awaits `op` (an awaitable of a tuple) or the deadline, whichever first; nullopt on the deadline.
template <typename T>
asio::awaitable<std::optional<T>> until(asio::awaitable<T> op, Clock::time_point deadline) {
  using namespace asio::experimental::awaitable_operators;
  auto ex = co_await asio::this_coro::executor;
  asio::steady_timer timer(ex, deadline);
  auto wait = timer.async_wait(kTuple);
  auto race = std::move(op) || std::move(wait);
  auto r = co_await std::move(race);
  if (r.index() == 1) co_return std::nullopt;
  co_return std::get<0>(std::move(r));
}

}  // namespace

asio::awaitable<McpClient::Reply> McpClient::request(std::string method, Json params, Clock::time_point deadline,
                                                     bool kill_on_timeout) {
  Reply r;
  auto child = child_;
  const auto start = Clock::now();
  if (!child || child->dead) {
    r.kind = Reply::Kind::kCrashed;
    r.message = "is not running";
    co_return r;
  }
  // Until the reply is read, the stream is mid-request: if this coroutine is abandoned (the
  // caller's deadline or a cancelled run), the server must go, or its late reply would be
  // mistaken for another's.
  struct Abandon {
    McpClient* self;
    std::shared_ptr<Child> child;
    bool done = false;
    ~Abandon() {
      if (!done && self->child_ == child) self->kill_child("a request was abandoned (deadline or cancellation)");
    }
  } abandon{this, child};
  const Json id = next_id_++;
  const std::string line = rpc_request(id, method, params) + "\n";
  auto fail = [&](Reply::Kind kind, std::string message) {
    r.kind = kind;
    r.message = std::move(message);
    if (kind != Reply::Kind::kTimeout || kill_on_timeout) kill_child(method + ": " + r.message);
    abandon.done = true;
    return r;
  };
  auto write = asio::async_write(*child->in, asio::buffer(line), kTuple);
  auto write_op = until(std::move(write), deadline);
  auto wrote = co_await std::move(write_op);
  if (co_await cancelled_now()) co_return fail(Reply::Kind::kCancelled, "was cancelled");
  if (!wrote) co_return fail(Reply::Kind::kTimeout, "did not read its stdin within " + seconds_text(Clock::now() - start));
  if (std::get<0>(*wrote)) {
    // EPIPE: it is gone. Reap briefly so the message can say how it ended.
    for (int i = 0; i < 100 && !child->exited(); ++i) {
      asio::steady_timer t(executor_, std::chrono::milliseconds(10));
      co_await t.async_wait(kTuple);
    }
    co_return fail(Reply::Kind::kCrashed, child->describe_exit() + child->stderr_excerpt());
  }
  std::array<char, 16384> chunk;
  while (true) {
    size_t nl = child->buf.find('\n');
    if ((nl == std::string::npos && child->buf.size() > config_.max_message_bytes) ||
        (nl != std::string::npos && nl > config_.max_message_bytes)) {
      co_return fail(Reply::Kind::kTooLarge, "wrote a message longer than " + std::to_string(config_.max_message_bytes) +
                                                 " bytes (the cap; raise max_message_bytes if that is expected)");
    }
    if (nl == std::string::npos) {
      auto read = child->out->async_read_some(asio::buffer(chunk), kTuple);
      auto read_op = until(std::move(read), deadline);
      auto got = co_await std::move(read_op);
      if (co_await cancelled_now()) co_return fail(Reply::Kind::kCancelled, "was cancelled");
      if (!got) {
        co_return fail(Reply::Kind::kTimeout, "did not answer " + method + " within " +
                                                  seconds_text(Clock::now() - start) + child->stderr_excerpt());
      }
      auto [ec, n] = *got;
      child->buf.append(chunk.data(), n);
      if (ec && n == 0) {
        // Wait (briefly) for the exit status and the rest of stderr, so the message has both.
        for (int i = 0; i < 100 && !(child->exited() && child->stderr_done); ++i) {
          asio::steady_timer t(executor_, std::chrono::milliseconds(10));
          co_await t.async_wait(kTuple);
        }
        co_return fail(Reply::Kind::kCrashed, child->describe_exit() + " before answering " + method +
                                                  child->stderr_excerpt());
      }
      continue;
    }
    std::string text = child->buf.substr(0, nl);
    child->buf.erase(0, nl + 1);
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (base::trim(text).empty()) continue;
    auto msg = parse_rpc_line(text);
    if (!msg.ok()) {
      co_return fail(Reply::Kind::kGarbage, "wrote a line that is not JSON-RPC (" + msg.status().message() +
                                                "): " + rpc_excerpt(text) + child->stderr_excerpt());
    }
    switch (msg->kind) {
      case RpcMessage::Kind::kRequest: {
        // Server-to-client requests: answer ping; we offer no other client capability.
        std::string answer = msg->method == "ping" ? rpc_result(msg->id, Json::object())
                                                   : rpc_error(msg->id, kRpcMethodNotFound,
                                                               "dloop does not offer '" + msg->method + "'");
        answer += "\n";
        auto w = asio::async_write(*child->in, asio::buffer(answer), kTuple);
        auto answer_op = until(std::move(w), deadline);
        co_await std::move(answer_op);
        continue;
      }
      case RpcMessage::Kind::kNotification:
        if (msg->method == "notifications/message") {
          ToolContext ctx;
          ctx.log = log_;
          tool_log(ctx, base::LogLevel::kInfo, config_.label, "log: " + rpc_excerpt(msg->params.dump(), 2000));
        }
        continue;
      case RpcMessage::Kind::kResult:
      case RpcMessage::Kind::kError:
        if (msg->id != id) continue;  // a late answer to an earlier, abandoned request
        break;
    }
    abandon.done = true;
    if (msg->kind == RpcMessage::Kind::kError) {
      r.kind = Reply::Kind::kRpcError;
      r.code = msg->error_code;
      r.message = "answered " + method + " with JSON-RPC error " + std::to_string(msg->error_code) + ": " +
                  rpc_excerpt(msg->error_message, 1000);
      if (!msg->error_data.is_null()) r.message += " (data: " + rpc_excerpt(msg->error_data.dump(), 500) + ")";
    } else if (!msg->result.is_object()) {
      co_return fail(Reply::Kind::kGarbage, "answered " + method + " with a result that is not an object: " +
                                                rpc_excerpt(msg->result.dump()));
    } else {
      r.result = std::move(msg->result);
    }
    co_return r;
  }
}

asio::awaitable<base::Status> McpClient::start_locked() {
  ignore_sigpipe_once();
  if (child_) kill_child("restarting");
  child_.reset();
  modern_ = false;
  version_.clear();
  auto child = std::make_shared<Child>();
  std::array<int, 6> fd{-1, -1, -1, -1, -1, -1};  // in_r, in_w, out_r, out_w, err_r, err_w
  for (int i = 0; i < 3; ++i) {
    if (::pipe2(&fd[2 * i], O_CLOEXEC) != 0) {
      for (int f : fd) if (f >= 0) ::close(f);
      co_return base::io_error(config_.label + ": pipe: " + strerror(errno));
    }
  }
  std::optional<std::vector<std::string>> env;
  env.emplace();
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view entry(*e);
    std::string_view key = entry.substr(0, entry.find('='));
    bool overridden = false;
    for (const auto& [k, v] : config_.env) overridden = overridden || k == key;
    if (!overridden) env->emplace_back(entry);
  }
  for (const auto& [k, v] : config_.env) env->push_back(k + "=" + v);
  detail::SpawnSpec spec;
  spec.argv = &config_.argv;
  spec.env = &env;
  spec.cwd = config_.cwd;
  spec.stdin_fd = fd[0];
  spec.stdout_fd = fd[3];
  spec.stderr_fd = fd[5];
  auto pid = config_.argv.empty() ? base::Result<pid_t>(base::invalid_argument("no command")) : detail::spawn_in_group(spec);
  for (int i : {0, 3, 5}) ::close(fd[i]);
  if (!pid.ok()) {
    for (int i : {1, 2, 4}) ::close(fd[i]);
    co_return base::unavailable(config_.label + ": " + pid.status().message());
  }
  ++starts_;
  child->pid = *pid;
  child->in = std::make_unique<stream_descriptor>(executor_, fd[1]);
  child->out = std::make_unique<stream_descriptor>(executor_, fd[2]);
  child->err = std::make_unique<stream_descriptor>(executor_, fd[4]);
  child_ = child;
  asio::co_spawn(executor_, pump_stderr(child, log_, config_.label), asio::detached);

  const auto deadline = Clock::now() + config_.timeout;
  // The stateless protocol first; a handshake-era server answers "method not found".
  modern_ = true;
  Json probe_params = with_meta(Json::object());
  modern_ = false;
  auto probe = request("server/discover", std::move(probe_params),
                       std::min(deadline, Clock::now() + std::chrono::seconds(5)), false);
  Reply p = co_await std::move(probe);
  if (p.kind == Reply::Kind::kOk) {
    const Json* versions = p.result.find("supportedVersions");
    bool ok = false;
    if (versions && versions->is_array()) {
      for (const auto& v : versions->as_array()) ok = ok || (v.is_string() && v.as_string() == kMcpModernVersion);
    }
    if (ok) {
      modern_ = true;
      version_ = kMcpModernVersion;
      if (const Json* meta_in = p.result.find("_meta")) {
        if (const Json* info = meta_in->find("io.modelcontextprotocol/serverInfo")) server_info_ = *info;
      }
      co_return base::Status();
    }
  } else if (p.kind != Reply::Kind::kRpcError && p.kind != Reply::Kind::kTimeout) {
    co_return base::unavailable(config_.label + " " + p.message);
  }
  Json params = Json::object();
  params.set("protocolVersion", kMcpHandshakeVersion);
  params.set("capabilities", Json::object());
  params.set("clientInfo", Json::object({{"name", "dloop"}, {"version", DLOOP_VERSION}}));
  auto init = request("initialize", std::move(params), deadline, true);
  Reply ir = co_await std::move(init);
  if (ir.kind != Reply::Kind::kOk) {
    if (ir.kind == Reply::Kind::kRpcError) kill_child("initialize failed");
    co_return base::unavailable(config_.label + " " + ir.message);
  }
  const Json* v = ir.result.find("protocolVersion");
  if (!v || !v->is_string() || !supported_handshake_version(v->as_string())) {
    kill_child("unsupported protocol version");
    co_return base::unavailable(config_.label + " answered initialize with protocol version " +
                                (v ? v->dump() : std::string("(none)")) + ", which dloop does not speak (it speaks " +
                                kMcpHandshakeVersion + ", 2025-06-18, 2025-03-26, 2024-11-05 and " + kMcpModernVersion + ")");
  }
  version_ = v->as_string();
  if (const Json* info = ir.result.find("serverInfo")) server_info_ = *info;
  const std::string note = rpc_notification("notifications/initialized", Json()) + "\n";
  auto w = asio::async_write(*child->in, asio::buffer(note), kTuple);
  auto note_op = until(std::move(w), deadline);
  auto wrote = co_await std::move(note_op);
  if (!wrote || std::get<0>(*wrote)) {
    kill_child("could not send notifications/initialized");
    co_return base::unavailable(config_.label + " stopped reading its stdin during the handshake" + child->stderr_excerpt());
  }
  co_return base::Status();
}

asio::awaitable<base::Status> McpClient::start() {
  auto l = lock();
  co_await std::move(l);
  Held held{this};
  if (running()) co_return base::Status();
  auto s = start_locked();
  co_return co_await std::move(s);
}

asio::awaitable<base::Result<std::vector<McpToolInfo>>> McpClient::list_tools() {
  auto l = lock();
  co_await std::move(l);
  Held held{this};
  if (!running()) co_return base::unavailable(config_.label + " is not running");
  std::vector<McpToolInfo> out;
  std::string cursor;
  for (int page = 0; page < 1000; ++page) {
    Json params = Json::object();
    if (!cursor.empty()) params.set("cursor", cursor);
    auto req = request("tools/list", with_meta(std::move(params)), Clock::now() + config_.timeout, true);
    Reply r = co_await std::move(req);
    if (r.kind != Reply::Kind::kOk) co_return base::unavailable(config_.label + " " + r.message);
    const Json* tools = r.result.find("tools");
    if (!tools || !tools->is_array()) {
      co_return base::unavailable(config_.label + " answered tools/list without a \"tools\" array");
    }
    for (const auto& t : tools->as_array()) {
      const Json* name = t.find("name");
      if (!name || !name->is_string() || name->as_string().empty()) {
        co_return base::unavailable(config_.label + " listed a tool without a name: " + rpc_excerpt(t.dump()));
      }
      McpToolInfo info;
      info.name = name->as_string();
      if (const Json* d = t.find("description"); d && d->is_string()) info.description = d->as_string();
      const Json* schema = t.find("inputSchema");
      info.input_schema = schema && schema->is_object() ? *schema : Json::object({{"type", "object"}});
      out.push_back(std::move(info));
    }
    const Json* next = r.result.find("nextCursor");
    if (!next || !next->is_string() || next->as_string().empty()) co_return out;
    if (next->as_string() == cursor) {
      co_return base::unavailable(config_.label + " returned the same tools/list cursor twice");
    }
    cursor = next->as_string();
  }
  co_return base::unavailable(config_.label + " listed more than 1000 pages of tools");
}

asio::awaitable<ToolResult> McpClient::call_tool(std::string name, Json arguments, Clock::time_point deadline) {
  auto l = lock();
  co_await std::move(l);
  Held held{this};
  if (child_ && !child_->dead && child_->exited()) {
    kill_child(child_->describe_exit() + " while idle" + child_->stderr_excerpt());
  }
  if (!running()) {
    auto s = start_locked();
    base::Status st = co_await std::move(s);
    if (!st.ok()) {
      co_return ToolResult::failure(ToolErrorKind::kFailed, "'" + name + "': the MCP server could not be (re)started: " +
                                                                st.message());
    }
  }
  Json params = Json::object();
  params.set("name", name);
  params.set("arguments", std::move(arguments));
  const auto limit = std::min(deadline, Clock::now() + config_.timeout);
  auto req = request("tools/call", with_meta(std::move(params)), limit, true);
  Reply r = co_await std::move(req);
  const std::string who = "'" + name + "': " + config_.label + " ";
  const std::string restart = "; it was stopped and will be restarted for the next call";
  switch (r.kind) {
    case Reply::Kind::kOk: break;
    case Reply::Kind::kRpcError:
      co_return ToolResult::failure(r.code == kRpcInvalidParams ? ToolErrorKind::kInvalidArguments : ToolErrorKind::kFailed,
                                    who + r.message);
    case Reply::Kind::kTimeout: co_return ToolResult::failure(ToolErrorKind::kTimeout, who + r.message + restart);
    case Reply::Kind::kCrashed: co_return ToolResult::failure(ToolErrorKind::kCrashed, who + r.message + restart);
    case Reply::Kind::kGarbage: co_return ToolResult::failure(ToolErrorKind::kCrashed, who + r.message + restart);
    case Reply::Kind::kTooLarge: co_return ToolResult::failure(ToolErrorKind::kOutputTooLarge, who + r.message + restart);
    case Reply::Kind::kCancelled: co_return ToolResult::failure(ToolErrorKind::kCancelled, who + "the call was cancelled");
  }
  if (const Json* rt = r.result.find("resultType"); rt && rt->is_string() && rt->as_string() != "complete") {
    co_return ToolResult::failure(ToolErrorKind::kFailed, who + "asked for more input (resultType '" + rt->as_string() +
                                                              "'), which dloop does not support");
  }
  co_return mcp_call_result(r.result, name);
}

asio::awaitable<void> McpClient::shutdown() {
  auto l = lock();
  co_await std::move(l);
  Held held{this};
  auto child = child_;
  if (!child || child->dead) co_return;
  child->dead = true;
  boost::system::error_code ignored;
  child->in->close(ignored);  // stdio shutdown: close stdin, wait, SIGTERM, wait, SIGKILL
  auto wait_exit = [&](std::chrono::milliseconds limit) -> asio::awaitable<bool> {
    const auto until_t = Clock::now() + limit;
    while (!child->exited() && Clock::now() < until_t) {
      asio::steady_timer t(executor_, std::chrono::milliseconds(10));
      co_await t.async_wait(kTuple);
    }
    co_return child->reaped;
  };
  auto first = wait_exit(std::chrono::milliseconds(2000));
  if (!co_await std::move(first)) {
    ::kill(-child->pid, SIGTERM);
    auto second = wait_exit(std::chrono::milliseconds(1000));
    if (!co_await std::move(second)) ::kill(-child->pid, SIGKILL);
  }
  auto last = wait_exit(std::chrono::milliseconds(1000));
  co_await std::move(last);
  child->close_pipes();
}

}  // namespace dloop::tools
