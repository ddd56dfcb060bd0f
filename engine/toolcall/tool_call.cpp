// Engine::tool_call and Engine::generate_json: request checks, the call-or-answer decision and
// the tool-name choice (scored by the model over the offered names), then the arguments by
// infilling (infiller.h), validated against the tool's schema before they are returned.
// Thread-safety: both hold the engine's mutex for the whole request.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

#include "dloop/base/json_schema.h"
#include "dloop/engine/tool_call.h"
#include "array_trim.h"
#include "infiller.h"
#include "key_check.h"
#include "logits.h"
#include "member_order.h"
#include "schema_support.h"
#include "spans.h"
#include "stated.h"

namespace dloop::engine {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

constexpr const char* kNamePrefix = "{\"name\":";  // followed by " \"NAME\", \"arguments\": "

struct CompiledTool {
  const ToolDefinition* def;
  base::Schema schema;
};

base::Status check_tool_schema(const ToolDefinition& t, size_t i, base::Schema* out) {
  const std::string where = "tools[" + std::to_string(i) + "] '" + t.name + "': ";
  auto compiled = base::Schema::compile(t.parameters, /*pattern_supported=*/false);
  if (!compiled.ok()) return base::invalid_argument(where + compiled.status().message());
  if (!(compiled->root().types & base::kSchemaObject) || !compiled->root().any_of.empty()) {
    return base::invalid_argument(where + "#: the parameters schema must describe an object (type: object)");
  }
  auto st = toolcall::check_decodable(compiled->root());
  if (!st.ok()) return base::invalid_argument(where + st.message());
  if (out) *out = *compiled;
  return base::Status();
}

// A special token, or its text when the vocabulary lacks it (then it is ordinary text).
toolcall::FixedPiece marker(const Tokenizer& tok, const char* text) {
  toolcall::FixedPiece p;
  if (auto id = tok.find_special(text)) p.special = *id; else p.text = text;
  return p;
}

// Log-softmax of one logits row (mask excluded) evaluated lazily.
struct Row {
  const float* l;
  double lse;
  double logp(int32_t t) const { return static_cast<double>(l[t]) - lse; }
};
Row make_row(const float* l, int64_t V, int32_t mask) {
  return {l, toolcall::log_sum_exp_except(l, static_cast<size_t>(V), mask)};
}

// The JSON of an infilled answer: the text without the markers written as plain text (when the
// vocabulary lacks them as special tokens).
std::string strip_markers(std::string text, const std::vector<toolcall::FixedPiece>& markers) {
  for (const toolcall::FixedPiece& m : markers) {
    if (m.special >= 0 || m.text.empty()) continue;
    if (text.rfind(m.text, 0) == 0) {
      text.erase(0, m.text.size());
    } else if (text.size() >= m.text.size() && text.compare(text.size() - m.text.size(), m.text.size(), m.text) == 0) {
      text.resize(text.size() - m.text.size());
    }
  }
  return text;
}

// Infills spec after prompt with the preset's and the request's options, adding the passes, the
// time and the answer's length to r.
base::Result<toolcall::InfillResult> infill_into(const toolcall::InfillContext& ctx, const std::vector<int32_t>& prompt,
                                                 const toolcall::InfillSpec& spec, const ReasoningPreset& preset,
                                                 const ToolCallRequest& request, ToolCallResult* r,
                                                 const std::string& mentions = std::string()) {
  toolcall::InfillOptions io;
  io.threshold = preset.threshold;
  io.max_commits_per_pass = preset.max_commits_per_pass;
  io.exact_prefix_choices = preset.exact_prefix_choices;
  io.slot_left_to_right = preset.slots_left_to_right;
  io.min_answer_length = request.answer_length;
  io.string_budget = string_slot_tokens(request, ctx.model.config());
  io.number_budget = request.number_slot_tokens;
  io.copy_repair = request.copy_repair;
  io.ground_values = request.ground_values;
  io.mention_text = mentions;
  io.mention_log_prior = request.mention_log_prior;
  DLOOP_ASSIGN_OR_RETURN(toolcall::InfillResult filled, toolcall::infill(ctx, prompt, spec, io));
  r->forward_passes += filled.forward_passes;
  r->timings.forward_ms += filled.forward_ms;
  r->timings.sampling_ms += filled.sampling_ms;
  r->completion_tokens = static_cast<int64_t>(filled.answer.size());
  return filled;
}

}  // namespace

int64_t string_slot_tokens(const ToolCallRequest& request, const ModelConfig& model) {
  if (request.string_slot_tokens > 0) return request.string_slot_tokens;
  return model.tool_call_string_slot > 0 ? model.tool_call_string_slot : 24;
}

base::Status validate_tool_call_request(const ToolCallRequest& r) {
  std::set<std::string> names;
  for (size_t i = 0; i < r.tools.size(); ++i) {
    const ToolDefinition& t = r.tools[i];
    if (t.name.empty()) return base::invalid_argument("tools[" + std::to_string(i) + "]: the tool has no name");
    if (!names.insert(t.name).second) {
      return base::invalid_argument("tools[" + std::to_string(i) + "]: tool name '" + t.name + "' is offered twice");
    }
    DLOOP_RETURN_IF_ERROR(check_tool_schema(t, i, nullptr));
  }
  using K = ToolChoice::Kind;
  if (r.tool_choice.kind == K::kRequired && r.tools.empty()) {
    return base::invalid_argument("tool_choice 'required' but no tools are offered");
  }
  if (r.tool_choice.kind == K::kNamed && !names.count(r.tool_choice.name)) {
    return base::invalid_argument("tool_choice names '" + r.tool_choice.name + "', which is not among the offered tools");
  }
  if (r.output_schema) {
    auto compiled = base::Schema::compile(*r.output_schema, /*pattern_supported=*/false);
    if (!compiled.ok()) return base::invalid_argument("output_schema: " + compiled.status().message());
    auto st = toolcall::check_decodable(compiled->root());
    if (!st.ok()) return base::invalid_argument("output_schema: " + st.message());
  }
  if (r.answer_length < 8 || r.answer_length > 4096) return base::invalid_argument("answer_length must be in [8, 4096]");
  if (r.string_slot_tokens != 0 && (r.string_slot_tokens < 2 || r.string_slot_tokens > 1024)) {
    return base::invalid_argument("string_slot_tokens must be 0 (the model's default) or in [2, 1024]");
  }
  if (r.number_slot_tokens < 1 || r.number_slot_tokens > 64) return base::invalid_argument("number_slot_tokens must be in [1, 64]");
  if (!(r.mention_log_prior >= 0 && r.mention_log_prior <= 100)) {
    return base::invalid_argument("mention_log_prior must be in [0, 100]");
  }
  if (r.messages.empty() && r.raw_prompt.empty()) return base::invalid_argument("the request has neither messages nor a raw prompt");
  return base::Status();
}

base::Result<ToolCallResult> Engine::tool_call(const ToolCallRequest& request) {
  DLOOP_RETURN_IF_ERROR(validate_tool_call_request(request));
  std::lock_guard<std::mutex> lock(mutex_);
  return run_tool_call(request, nullptr);
}

base::Result<ToolCallResult> Engine::run_tool_call(const ToolCallRequest& request, PassExecutor* exec) {
  DLOOP_RETURN_IF_ERROR(validate_tool_call_request(request));
  const auto t0 = Clock::now();
  const ReasoningPreset& preset = reasoning_preset(request.effort);
  ToolCallResult r;
  r.string_slot_tokens = string_slot_tokens(request, model_->config());
  std::vector<CompiledTool> tools;
  std::vector<base::Json> tool_json;
  // A model trained on calls in mention order decodes its calls' members in that order; the prompt
  // shows the schemas as given.
  const bool by_mention = model_->config().tool_call_member_order == "mention" && !request.messages.empty();
  const std::string mentions = toolcall::mention_text(request.messages);
  for (size_t i = 0; i < request.tools.size(); ++i) {
    CompiledTool ct{&request.tools[i], {}};
    if (by_mention) {
      ToolDefinition ordered = request.tools[i];
      ordered.parameters = toolcall::mention_ordered_schema(ordered.parameters, mentions);
      DLOOP_RETURN_IF_ERROR(check_tool_schema(ordered, i, &ct.schema));
    } else {
      DLOOP_RETURN_IF_ERROR(check_tool_schema(request.tools[i], i, &ct.schema));
    }
    tools.push_back(std::move(ct));
    base::Json j = base::Json::object();
    j.set("name", request.tools[i].name);
    j.set("description", request.tools[i].description);
    j.set("parameters", request.tools[i].parameters);
    tool_json.push_back(std::move(j));
  }
  const std::string prompt_text = request.messages.empty()
                                      ? request.raw_prompt
                                      : template_.render(request.messages, tool_json, /*add_generation_prompt=*/true);
  std::vector<int32_t> prompt = tokenizer_.encode(prompt_text, /*parse_special=*/true);
  r.prompt_tokens = static_cast<int64_t>(prompt.size());
  r.prompt_text = prompt_text;
  r.timings.tokenize_ms = ms_since(t0);
  const toolcall::VocabInfo vocab = toolcall::VocabInfo::build(tokenizer_, special_.mask);
  std::unique_ptr<Forwarder> forwarder = make_forwarder(request.cache.value_or(preset.cache),
                                                        request.prompt_reuse.value_or(preset.prompt_reuse), prompt, exec);
  const toolcall::InfillContext ctx{*model_, *forwarder, tokenizer_, vocab, special_.eos};
  const int64_t V = model_->config().n_vocab;
  const toolcall::FixedPiece open = marker(tokenizer_, "<tool_call>");
  const toolcall::FixedPiece close = marker(tokenizer_, "</tool_call>");
  const toolcall::FixedPiece im_end = marker(tokenizer_, "<|im_end|>");

  // Tokens of the name prefix and each candidate name, as BPE splits them in context.
  std::vector<int32_t> name_prefix;
  if (open.special >= 0) name_prefix.push_back(open.special);
  for (int32_t t : tokenizer_.encode(open.text + kNamePrefix, false)) name_prefix.push_back(t);
  std::vector<std::vector<int32_t>> name_tokens;
  size_t max_name = 0;
  for (const CompiledTool& t : tools) {
    name_tokens.push_back(tokenizer_.encode(" " + base::json_quote(t.def->name) + ",", false));
    max_name = std::max(max_name, name_tokens.back().size());
  }
  auto forward = [&](const std::vector<int32_t>& canvas, const std::vector<int32_t>& rows,
                     std::vector<float>& logits) -> base::Status {
    if (static_cast<int64_t>(canvas.size()) > model_->config().n_ctx) {
      return base::invalid_argument("the prompt (" + std::to_string(prompt.size()) + " tokens) plus the answer (" +
                                    std::to_string(canvas.size() - prompt.size()) +
                                    " tokens) exceeds the model's context length " +
                                    std::to_string(model_->config().n_ctx));
    }
    std::vector<int32_t> model_rows;
    for (int32_t p : rows) model_rows.push_back(model_->config().shift_logits ? std::max(p - 1, 0) : p);
    logits.resize(rows.size() * static_cast<size_t>(V));
    auto tf = Clock::now();
    DLOOP_RETURN_IF_ERROR(forwarder->forward(canvas, model_rows, logits.data(), PassHint{static_cast<int64_t>(prompt.size()), -1, false}));
    r.timings.forward_ms += ms_since(tf);
    ++r.forward_passes;
    return base::Status();
  };
  // Mean log-probability of each name at the positions after the prefix (canvas position `at`).
  auto score_names = [&](const std::vector<float>& logits, const std::vector<int32_t>& rows, size_t at) {
    r.name_scores.clear();
    for (size_t i = 0; i < tools.size(); ++i) {
      double s = 0;
      for (size_t j = 0; j < name_tokens[i].size(); ++j) {
        const auto row = static_cast<size_t>(std::find(rows.begin(), rows.end(), static_cast<int32_t>(at + j)) - rows.begin());
        s += make_row(logits.data() + row * static_cast<size_t>(V), V, special_.mask).logp(name_tokens[i][j]);
      }
      r.name_scores.emplace_back(tools[i].def->name, s / static_cast<double>(name_tokens[i].size()));
    }
  };

  using K = ToolChoice::Kind;
  bool call = request.tool_choice.kind == K::kRequired || request.tool_choice.kind == K::kNamed;
  if (request.tool_choice.kind == K::kAuto && !tools.empty()) {
    // One pass over prompt + masks: p(call) at the first answer position, and (unless the preset
    // asks for a separate pass) the names at their fixed offsets after the call prefix.
    std::vector<int32_t> canvas = prompt;
    const size_t answer_len = std::max<size_t>(static_cast<size_t>(request.answer_length), name_prefix.size() + max_name + 4);
    canvas.resize(prompt.size() + answer_len, special_.mask);
    std::vector<int32_t> rows = {static_cast<int32_t>(prompt.size())};
    const bool names_here = !preset.separate_name_pass && tools.size() > 1;
    if (names_here) {
      for (size_t j = 0; j < max_name; ++j) rows.push_back(static_cast<int32_t>(prompt.size() + name_prefix.size() + j));
    }
    std::vector<float> logits;
    DLOOP_RETURN_IF_ERROR(forward(canvas, rows, logits));
    Row row0 = make_row(logits.data(), V, special_.mask);
    const int32_t first = open.special >= 0 ? open.special : tokenizer_.encode(open.text, false).front();
    r.call_probability = std::exp(row0.logp(first));
    call = r.call_probability >= 0.5;
    if (call && names_here) score_names(logits, rows, prompt.size() + name_prefix.size());
  }

  if (call) {
    size_t chosen = 0;
    if (request.tool_choice.kind == K::kNamed) {
      for (size_t i = 0; i < tools.size(); ++i) if (tools[i].def->name == request.tool_choice.name) chosen = i;
    } else if (tools.size() > 1) {
      if (r.name_scores.empty()) {
        std::vector<int32_t> canvas = prompt;
        canvas.insert(canvas.end(), name_prefix.begin(), name_prefix.end());
        const size_t at = canvas.size();
        canvas.resize(std::max(canvas.size() + max_name + 4, prompt.size() + static_cast<size_t>(request.answer_length)), special_.mask);
        std::vector<int32_t> rows;
        for (size_t j = 0; j < max_name; ++j) rows.push_back(static_cast<int32_t>(at + j));
        std::vector<float> logits;
        DLOOP_RETURN_IF_ERROR(forward(canvas, rows, logits));
        score_names(logits, rows, at);
      }
      for (size_t i = 1; i < tools.size(); ++i) if (r.name_scores[i].second > r.name_scores[chosen].second) chosen = i;
    }
    const CompiledTool& tool = tools[chosen];
    toolcall::InfillSpec spec;
    spec.prefix = {open, {std::string(kNamePrefix) + " " + base::json_quote(tool.def->name) + ", \"arguments\": ", -1}};
    spec.root = &tool.schema.root();
    spec.root_types = base::kSchemaObject;
    spec.suffix = {{"}", -1}, close, im_end};
    DLOOP_ASSIGN_OR_RETURN(toolcall::InfillResult filled, infill_into(ctx, prompt, spec, preset, request, &r, mentions));
    r.canvas_text = tokenizer_.decode(filled.answer, /*render_special=*/true);
    filled.text = strip_markers(filled.text, {open, im_end, close});
    auto parsed = base::Json::parse(filled.text);
    if (!parsed.ok()) return base::internal_error("tool-call infilling produced invalid JSON (a bug): " + filled.text);
    const base::Json* args = parsed->find("arguments");
    if (!args) return base::internal_error("tool-call infilling lost the arguments (a bug): " + filled.text);
    auto valid = tool.schema.validate(*args);
    if (!valid.ok()) {
      return base::internal_error("tool-call infilling produced arguments the schema refuses (a bug): " +
                                  valid.message() + " in " + filled.text);
    }
    base::Json arguments = *args;
    const std::string conversation = request.copy_repair ? toolcall::conversation_text(prompt_text) : std::string();
    // What the request says about this call: its clause when it asks for several actions.
    const std::optional<std::string> scope = toolcall::call_scope(request.messages, tool.def->name);
    const std::string& scoped = scope ? *scope : mentions;
    // One copy-repair step on a copy of the arguments, kept when it changed something and the call
    // is still valid; `count` gets the number of changes.
    auto apply = [&](const auto& step, int& count) {
      base::Json changed = arguments;
      const size_t n = step(changed);
      if (n > 0 && tool.schema.validate(changed).ok()) {
        arguments = std::move(changed);
        count += static_cast<int>(n);
      }
    };
    const base::SchemaNode& root = tool.schema.root();
    // Copy repair's stated values (run again once the checks have moved values among keys).
    auto repair_stated = [&] {
      apply([&](base::Json& a) { return toolcall::repair_stated_values(a, root, scoped, conversation, scope.has_value()); },
            r.stated_values);
    };
    if (request.copy_repair) {
      apply([&](base::Json& a) { return toolcall::trim_array_overruns(a, root, conversation); }, r.array_items_dropped);
      apply([&](base::Json& a) { return toolcall::fill_array_gaps(a, root, conversation); }, r.array_items_added);
      apply([&](base::Json& a) { return toolcall::repair_stated_lists(a, root, scoped); }, r.stated_lists);
      apply([&](base::Json& a) { return toolcall::repair_stated_literals(a, root, scoped); }, r.stated_literals);
      if (scope) {
        apply([&](base::Json& a) { return toolcall::drop_other_calls_arguments(a, root, *scope, mentions); },
              r.other_calls_arguments_dropped);
        apply([&](base::Json& a) { return toolcall::add_stated_arguments(a, root, *scope); }, r.stated_arguments_added);
      }
      repair_stated();
    }
    const bool key_check = request.key_check.value_or(preset.key_check);
    if (key_check || request.duplicate_check.value_or(false) || request.stated_keys.value_or(false)) {
      toolcall::KeyCheckSpec ks{spec.prefix, spec.suffix, &tool.schema, request.answer_length};
      bool assigned = false;  // the duplicate check scored every assignment already
      if (request.duplicate_check.value_or(key_check)) {
        DLOOP_ASSIGN_OR_RETURN(toolcall::DuplicateCheckResult dc,
                               toolcall::check_duplicates(ctx, prompt, ks, arguments, key_check));
        r.forward_passes += dc.forward_passes;
        r.timings.forward_ms += dc.forward_ms;
        r.duplicate_check_candidates = dc.candidates;
        r.values_replaced = dc.changed;
        assigned = dc.assigned;
        arguments = std::move(dc.arguments);
      }
      // Values the request states right after their keys' names take those keys, without a pass.
      if (request.stated_keys.value_or(key_check) && !request.messages.empty()) {
        if (std::optional<base::Json> stated = toolcall::stated_assignment(tool.schema, arguments, scoped)) {
          r.keys_stated = true;
          r.keys_reassigned = r.keys_reassigned || *stated != arguments;
          arguments = std::move(*stated);
          assigned = true;
        }
      }
      if (key_check && !assigned) {
        DLOOP_ASSIGN_OR_RETURN(toolcall::KeyCheckResult kc, toolcall::check_keys(ctx, prompt, ks, arguments));
        r.forward_passes += kc.forward_passes;
        r.timings.forward_ms += kc.forward_ms;
        r.key_check_assignments = kc.assignments;
        r.keys_reassigned = kc.changed;
        arguments = std::move(kc.arguments);
      }
      if (request.copy_repair && (r.keys_reassigned || r.values_replaced)) repair_stated();
    }
    r.is_call = true;
    r.name = tool.def->name;
    r.arguments = arguments.dump(base::Json::Style::kPython);
    r.arguments_json = std::move(arguments);
  } else if (request.output_schema) {
    auto schema = base::Schema::compile(*request.output_schema);
    if (!schema.ok()) return schema.status();
    toolcall::InfillSpec spec;
    spec.root = &schema->root();
    spec.suffix = {im_end};
    DLOOP_ASSIGN_OR_RETURN(toolcall::InfillResult filled, infill_into(ctx, prompt, spec, preset, request, &r));
    r.canvas_text = tokenizer_.decode(filled.answer, true);
    filled.text = strip_markers(filled.text, {im_end});
    auto parsed = base::Json::parse(filled.text);
    if (!parsed.ok() || !schema->validate(*parsed).ok()) {
      return base::internal_error("schema-guided answer is not valid for output_schema (a bug): " + filled.text);
    }
    r.answer = parsed->dump(base::Json::Style::kPython);
  } else {
    DecodeOptions o;
    o.gen_length = request.answer_length;
    o.block_length = std::min<int64_t>(preset.answer_block_length, request.answer_length);
    if (o.gen_length % o.block_length != 0) o.block_length = 0;
    o.threshold = preset.threshold;
    DLOOP_ASSIGN_OR_RETURN(DecodeResult d, decode(*model_, *forwarder, prompt, o, special_));
    r.forward_passes += d.forward_passes;
    r.timings.forward_ms += d.forward_ms;
    r.timings.sampling_ms += d.sampling_ms;
    r.completion_tokens = static_cast<int64_t>(d.output.size());
    r.answer = tokenizer_.decode(d.output, false);
    r.canvas_text = tokenizer_.decode(d.answer, true);
  }
  r.steps = r.forward_passes;
  r.forward_stats = forwarder->stats();
  r.timings.total_ms = ms_since(t0);
  return r;
}

base::Result<GenerateResult> Engine::run_generate_json(const GenerateRequest& request, PassExecutor* exec) {
  auto schema = base::Schema::compile(*request.response_format, /*pattern_supported=*/false);
  if (!schema.ok()) return base::invalid_argument("response_format: " + schema.status().message());
  auto st = toolcall::check_decodable(schema->root());
  if (!st.ok()) return base::invalid_argument("response_format: " + st.message());
  const auto t0 = Clock::now();
  GenerateResult r;
  std::vector<int32_t> prompt = tokenizer_.encode(render_prompt(request), /*parse_special=*/true);
  r.timings.tokenize_ms = ms_since(t0);
  r.prompt_tokens = static_cast<int64_t>(prompt.size());
  const toolcall::VocabInfo vocab = toolcall::VocabInfo::build(tokenizer_, special_.mask);
  std::unique_ptr<Forwarder> forwarder = make_forwarder(request.decode.cache, request.decode.prompt_reuse, prompt, exec);
  const toolcall::InfillContext ctx{*model_, *forwarder, tokenizer_, vocab, special_.eos};
  toolcall::InfillSpec spec;
  spec.root = &schema->root();
  spec.suffix = {marker(tokenizer_, "<|im_end|>")};
  toolcall::InfillOptions io;
  io.threshold = request.decode.threshold.value_or(0.9);
  io.min_answer_length = request.decode.gen_length;
  DLOOP_ASSIGN_OR_RETURN(toolcall::InfillResult filled, toolcall::infill(ctx, prompt, spec, io));
  filled.text = strip_markers(filled.text, spec.suffix);
  auto parsed = base::Json::parse(filled.text);
  if (!parsed.ok() || !schema->validate(*parsed).ok()) {
    return base::internal_error("schema-guided generation is not valid for response_format (a bug): " + filled.text);
  }
  r.text = parsed->dump(base::Json::Style::kPython);
  r.output_tokens = tokenizer_.encode(r.text, false);
  r.completion_tokens = static_cast<int64_t>(r.output_tokens.size());
  r.steps = r.forward_passes = filled.forward_passes;
  r.stopped_by_eos = true;
  r.timings.forward_ms = filled.forward_ms;
  r.timings.sampling_ms = filled.sampling_ms;
  r.forward_stats = forwarder->stats();
  r.timings.total_ms = ms_since(t0);
  r.tokens_per_second = r.timings.total_ms > 0 ? 1000.0 * static_cast<double>(r.completion_tokens) / r.timings.total_ms : 0;
  return r;
}

}  // namespace dloop::engine
