// The engine side of a chat completion and the OpenAI response shapes. run_completion() picks the
// engine call for a validated ChatRequest (tool_call() when tools are offered and tool_choice is
// not none; generate() with a response_format schema for json_schema; free generate() otherwise)
// and returns what the model produced. The *_json functions build the exact OpenAI bodies:
// chat.completion, chat.completion.chunk, usage. run_completion() blocks and is called on the
// engine thread; the rest are pure. Thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "dloop/base/json.h"
#include "dloop/base/status.h"
#include "dloop/engine/engine.h"
#include "dloop/server/chat_request.h"

namespace dloop::server {

struct CompletionOutput {
  std::string content;        // the answer text ("" for a tool call)
  bool is_call = false;
  std::string call_name;
  std::string call_arguments;  // JSON text
  std::string finish_reason;   // stop | length | tool_calls
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t forward_passes = 0;
};

// Errors: invalid_argument when the engine rejects the request (a prompt longer than the model's
// context, ...), which the server answers with 400; anything else is a 500.
base::Result<CompletionOutput> run_completion(engine::Engine& engine, const ChatRequest& request,
                                              const engine::StepObserver& on_step);

// The decoding options of a free-text answer for this request (gen_length, blocks, threshold).
engine::DecodeOptions answer_decode_options(const ChatRequest& request);

// Cuts `text` at the first of `stop`; true when it did.
bool apply_stop(std::string& text, const std::vector<std::string>& stop);

struct CompletionMeta {
  std::string id;          // chatcmpl-...
  int64_t created = 0;     // unix seconds
  std::string model;
  std::string fingerprint; // system_fingerprint
};

base::Json usage_json(const CompletionOutput& out);
base::Json completion_json(const CompletionMeta& meta, const CompletionOutput& out, const std::string& call_id);
// One chunk: choices [{index 0, delta, finish_reason (null when empty), logprobs null}], usage null.
base::Json chunk_json(const CompletionMeta& meta, base::Json delta, const std::string& finish_reason);
// The include_usage chunk: choices [], usage set.
base::Json usage_chunk_json(const CompletionMeta& meta, const CompletionOutput& out);
// Splits a tool call's arguments into the argument fragments a stream sends.
std::vector<std::string> argument_fragments(const std::string& arguments, size_t piece = 16);

// "chatcmpl-" / "call_" followed by random alphanumerics.
std::string random_id(const char* prefix, size_t n);
// Length of the longest prefix of s that does not end inside a UTF-8 sequence.
size_t complete_utf8_prefix(std::string_view s);

}  // namespace dloop::server
