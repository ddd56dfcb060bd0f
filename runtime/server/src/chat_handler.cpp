// POST /v1/chat/completions: parse and check the request, admit it under the generation cap, run
// it on the engine thread, and answer with a chat.completion or a chunked SSE stream of
// chat.completion.chunk events. Plain text answers stream as they are committed: a diffusion
// model commits tokens anywhere in the canvas, so a delta is sent when the left-to-right prefix up
// to the first still-masked position grows (the committed prefix never changes). Tool calls and
// schema-guided answers are decoded as a whole and then sent in the OpenAI delta shapes. With
// `diffusing: true` every denoising step also sends the whole current canvas as a separate
// `event: diffusion` SSE event (docs/server.md).
#include <deque>
#include <mutex>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "completion.h"
#include "dloop/base/log.h"
#include "dloop/server/chat_request.h"
#include "offload.h"
#include "server_impl.h"

namespace dloop::server {

using base::Json;

namespace {

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
constexpr const char* kMaskGlyph = "\u2591";  // one per still-masked position in a diffusion event

ApiError engine_error(const base::Status& st) {
  if (st.code() == base::Code::kInvalidArgument || st.code() == base::Code::kOutOfRange) {
    return bad_request(st.message(), "messages", "invalid_request");
  }
  return ApiError{500, "server_error", "The engine failed: " + st.message(), "", "engine_error"};
}

// Shared between the engine thread (producer) and the session coroutine (consumer).
struct StreamState {
  std::mutex mutex;
  std::deque<std::string> frames;  // complete SSE events, in order
  bool done = false;
  std::optional<base::Result<CompletionOutput>> result;
  std::string streamed;            // content already sent as deltas (engine thread only)
};

std::string sse(const Json& data, const char* name = nullptr) {
  std::string out;
  if (name) out.append("event: ").append(name).append("\n");
  out.append("data: ").append(data.dump()).append("\n\n");
  return out;
}

// The canvas as text for a diffusion event: committed tokens decoded, masks as kMaskGlyph, cut at
// the first stop token.
std::string canvas_text(const engine::Engine& eng, std::span<const int32_t> answer, int64_t* masked) {
  const auto& sp = eng.special_tokens();
  std::string out;
  std::vector<int32_t> run;
  *masked = 0;
  for (int32_t t : answer) {
    if (std::find(sp.stop.begin(), sp.stop.end(), t) != sp.stop.end()) break;
    if (t == sp.mask) {
      out += eng.tokenizer().decode(run, false);
      run.clear();
      out += kMaskGlyph;
      ++*masked;
    } else {
      run.push_back(t);
    }
  }
  out += eng.tokenizer().decode(run, false);
  return out;
}

engine::StepObserver make_observer(const Server::Impl& s, const CompletionMeta& meta, const ChatRequest& chat,
                                   std::shared_ptr<StreamState> st, bool stream_text, std::function<void()> notify) {
  const engine::Engine* eng = s.engine.get();
  const bool diffusing = chat.diffusing;
  return [eng, meta, st, stream_text, diffusing, notify](const engine::StepEvent& e) {
    const auto answer = e.canvas.subspan(static_cast<size_t>(e.prompt_length));
    const auto& sp = eng->special_tokens();
    std::vector<std::string> frames;
    if (stream_text) {
      size_t k = 0;
      while (k < answer.size() && answer[k] != sp.mask &&
             std::find(sp.stop.begin(), sp.stop.end(), answer[k]) == sp.stop.end()) {
        ++k;
      }
      std::string text = eng->tokenizer().decode(answer.first(k), false);
      text.resize(complete_utf8_prefix(text));
      if (text.size() > st->streamed.size() && text.compare(0, st->streamed.size(), st->streamed) == 0) {
        Json delta = Json::object({{"content", text.substr(st->streamed.size())}});
        frames.push_back(sse(chunk_json(meta, std::move(delta), "")));
        st->streamed = std::move(text);
      }
    }
    if (diffusing) {
      int64_t masked = 0;
      std::string text = canvas_text(*eng, answer, &masked);
      Json d = Json::object({{"step", e.step}, {"content", std::move(text)}, {"masked_tokens", masked}});
      Json choice = Json::object({{"index", 0}, {"delta", Json::object()}, {"finish_reason", Json()}, {"diffusion", std::move(d)}});
      Json j = Json::object({{"id", meta.id}, {"object", "chat.completion.diffusion"}, {"created", meta.created},
                             {"model", meta.model}, {"choices", Json::array({std::move(choice)})}});
      frames.push_back(sse(j, "diffusion"));
    }
    if (frames.empty()) return;
    {
      std::lock_guard<std::mutex> lock(st->mutex);
      for (auto& f : frames) st->frames.push_back(std::move(f));
    }
    notify();
  };
}

void count(Server::Impl& s, const CompletionOutput& out) {
  s.metrics.add_tokens(out.prompt_tokens, out.completion_tokens);
  s.metrics.add_forward_passes(out.forward_passes);
  if (out.is_call) s.metrics.add_tool_calls(1, "completion");
}

// The frames after the engine finished: the rest of the content (or the tool call), the finish
// chunk, the usage chunk and [DONE].
std::vector<std::string> closing_frames(const CompletionMeta& meta, const ChatRequest& chat, const CompletionOutput& out,
                                        const std::string& streamed) {
  std::vector<std::string> frames;
  if (out.is_call) {
    Json first = Json::object({{"index", 0}, {"id", random_id("call_", 24)}, {"type", "function"},
                               {"function", Json::object({{"name", out.call_name}, {"arguments", ""}})}});
    frames.push_back(sse(chunk_json(meta, Json::object({{"tool_calls", Json::array({std::move(first)})}}), "")));
    for (const auto& piece : argument_fragments(out.call_arguments)) {
      Json frag = Json::object({{"index", 0}, {"function", Json::object({{"arguments", piece}})}});
      frames.push_back(sse(chunk_json(meta, Json::object({{"tool_calls", Json::array({std::move(frag)})}}), "")));
    }
  } else if (out.content.size() > streamed.size()) {
    if (out.content.compare(0, streamed.size(), streamed) != 0) {
      DLOOP_WARN("serve: streamed prefix is not a prefix of the final answer (", meta.id, ")");
    }
    frames.push_back(sse(chunk_json(meta, Json::object({{"content", out.content.substr(streamed.size())}}), "")));
  }
  frames.push_back(sse(chunk_json(meta, Json::object(), out.finish_reason)));
  if (chat.include_usage) frames.push_back(sse(usage_chunk_json(meta, out)));
  frames.push_back("data: [DONE]\n\n");
  return frames;
}

asio::awaitable<int> stream_completion(Server::Impl& s, Stream& stream, const Request& req, const ChatRequest& chat,
                                       const CompletionMeta& meta) {
  SseWriter w(stream, req);
  auto start = w.start();
  if (!co_await std::move(start)) co_return -1;
  ++s.streams;
  struct Guard {
    Server::Impl& s;
    ~Guard() { --s.streams; }
  } guard{s};
  Json first = Json::object({{"role", "assistant"}, {"content", ""}, {"refusal", Json()}});
  auto w0 = w.event(chunk_json(meta, std::move(first), "").dump());
  bool alive = co_await std::move(w0);

  auto st = std::make_shared<StreamState>();
  auto timer = std::make_shared<asio::steady_timer>(s.ioc);
  auto notify = [timer, &ioc = s.ioc] { asio::post(ioc, [timer] { timer->cancel(); }); };
  const bool plain = (chat.tools.empty() || chat.tool_choice.kind == engine::ToolChoice::Kind::kNone) &&
                     chat.format == ResponseFormat::kText;
  const bool stream_text = plain && chat.stop.empty();
  engine::StepObserver observer;
  if (plain && (stream_text || chat.diffusing)) observer = make_observer(s, meta, chat, st, stream_text, notify);
  std::shared_ptr<engine::Engine> eng = s.engine;
  asio::post(s.engine_thread, [eng, chat, observer, st, notify] {
    auto r = run_completion(*eng, chat, observer);
    {
      std::lock_guard<std::mutex> lock(st->mutex);
      st->result.emplace(std::move(r));
      st->done = true;
    }
    notify();
  });
  for (;;) {
    std::deque<std::string> frames;
    bool done;
    {
      std::lock_guard<std::mutex> lock(st->mutex);
      frames.swap(st->frames);
      done = st->done;
    }
    for (auto& f : frames) {
      if (!alive) break;
      auto op = w.raw(f);
      alive = co_await std::move(op);
    }
    if (done) break;
    timer->expires_after(std::chrono::seconds(5));
    auto op = timer->async_wait(kTuple);
    co_await std::move(op);
  }
  // The engine thread no longer touches st->streamed once done is set.
  const base::Result<CompletionOutput>& r = *st->result;
  if (!alive) co_return -1;
  if (!r.ok()) {
    auto op = w.raw(sse(engine_error(r.status()).to_json()));
    co_await std::move(op);
  } else {
    count(s, *r);
    for (const auto& f : closing_frames(meta, chat, *r, st->streamed)) {
      auto op = w.raw(f);
      if (!co_await std::move(op)) co_return -1;
    }
  }
  auto fin = w.finish();
  co_return co_await std::move(fin) ? 200 : -1;
}

}  // namespace

asio::awaitable<int> handle_chat(Server::Impl& s, Stream& stream, const Request& req, bool keep_alive) {
  auto parsed = parse_chat_request(req.body());
  if (auto* e = std::get_if<ApiError>(&parsed)) { auto op_ = send_error(stream, req, *e, keep_alive); co_return co_await std::move(op_); }
  const ChatRequest chat = std::get<ChatRequest>(std::move(parsed));
  if (chat.model != s.model_id) {
    ApiError e{404, "invalid_request_error",
               "The model '" + chat.model + "' does not exist (this server serves '" + s.model_id + "').", "model",
               "model_not_found"};
    { auto op_ = send_error(stream, req, e, keep_alive); co_return co_await std::move(op_); }
  }
  if (s.stopping) {
    s.metrics.add_rejected("shutdown");
    { auto op_ = send_error(stream, req, ApiError{503, "server_error", "The server is shutting down.", "", "shutting_down"}, false); co_return co_await std::move(op_); }
  }
  if (s.metrics.active_generations() >= s.opt.max_generations) {
    s.metrics.add_rejected("generations");
    ApiError e{429, "rate_limit_error",
               "Too many concurrent generations (the server's cap is " + std::to_string(s.opt.max_generations) +
                   "); retry after a short wait.",
               "", "rate_limit_exceeded"};
    { auto op_ = send_error(stream, req, e, keep_alive); co_return co_await std::move(op_); }
  }
  s.metrics.add_generation(1);
  struct Guard {
    Server::Impl& s;
    ~Guard() { s.metrics.add_generation(-1); }
  } guard{s};
  CompletionMeta meta;
  meta.id = random_id("chatcmpl-", 29);
  meta.created = static_cast<int64_t>(std::time(nullptr));
  meta.model = s.model_id;
  meta.fingerprint = "fp_dloop_" DLOOP_VERSION;
  if (chat.stream) { auto op_ = stream_completion(s, stream, req, chat, meta); co_return co_await std::move(op_); }

  std::shared_ptr<engine::Engine> eng = s.engine;
  auto op = runtime::offload_boxed<base::Result<CompletionOutput>>(
      s.engine_thread.get_executor(), [eng, &chat] { return run_completion(*eng, chat, {}); });
  runtime::Boxed<base::Result<CompletionOutput>> box = co_await std::move(op);
  const base::Result<CompletionOutput>& r = *box.value;
  if (!r.ok()) { auto op_ = send_error(stream, req, engine_error(r.status()), keep_alive); co_return co_await std::move(op_); }
  count(s, *r);
  { auto op_ = send_json(stream, req, 200, completion_json(meta, *r, random_id("call_", 24)), keep_alive); co_return co_await std::move(op_); }
}

}  // namespace dloop::server
