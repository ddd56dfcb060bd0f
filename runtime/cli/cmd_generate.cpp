// `dloop generate`: text from a diffusion model with every decoding knob on the command line,
// JSON output with counts and timings, and a live view of the canvas unmasking (--visual).
// --tool-call decodes a tool call over --tools by schema-guided infilling instead (tool_call()).
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "args.h"
#include "commands.h"
#include "dloop/base/json.h"
#include "dloop/engine/engine.h"
#include "dloop/engine/tool_call.h"
#include "model_path.h"

namespace dloop::cli {
namespace {

ArgParser generate_parser() {
  ArgParser p("generate", "--prompt TEXT [options]",
              "Generate text with a diffusion language model. The prompt is rendered with the model's chat\n"
              "template (unless --raw) and the answer is decoded by iterative unmasking.");
  p.flag({"model", "FILE", "GGUF model file", false, "the bundled model"})
      .flag({"prompt", "TEXT", "the user message (or the whole prompt with --raw)"})
      .flag({"system", "TEXT", "a system message"})
      .flag({"tools", "JSON|@FILE", "tools offered in the system message: a JSON array of {name, description, parameters}"})
      .flag({"tool-call", "", "decode a tool call over --tools by schema-guided infilling: prints the call as "
                              "{\"name\", \"arguments\"} (valid for the tool's schema) or the answer; the "
                              "decoding knobs below then do not apply (docs/tool-calls.md)"})
      .flag({"tool-choice", "C", "with --tool-call: auto, required, none or a tool name", false, "auto"})
      .flag({"reasoning", "EFFORT", "with --tool-call: instant, low, medium or high", false, "low"})
      .flag({"ground", "", "with --tool-call: string and number arguments only as spans of the prompt's "
                           "non-system text (docs/tool-calls.md \"Grounded values\")"})
      .flag({"mention-prior", "LOGODDS", "with --tool-call: log-odds for the optional arguments and enum values the "
                                         "request names (docs/tool-calls.md \"Mention prior\"; 0: off)", false, "2.197 (log 9)"})
      .flag({"raw", "", "use the prompt verbatim, no chat template (special tokens are parsed)"})
      .flag({"gen-length", "N", "answer canvas length in tokens", false, "128"})
      .flag({"steps", "N", "denoising steps (block schedule without threshold, or eps)", false, "gen-length"})
      .flag({"block-length", "N", "semi-autoregressive block length; 0 = one block", false, "32"})
      .flag({"schedule", "NAME", "block (LLaDA) or eps (Dream)", false, "block"})
      .flag({"algorithm", "NAME", "low_confidence|maskgit_plus, random, topk_margin, entropy, origin", false, "low_confidence"})
      .flag({"threshold", "P", "confidence-threshold parallel decoding; 0 = off (use --steps)", false, "0.9"})
      .flag({"temperature", "T", "sampling temperature (float64 Gumbel-max); 0 = greedy", false, "0"})
      .flag({"top-k", "K", "keep the K most likely tokens; 0 = off", false, "0"})
      .flag({"top-p", "P", "nucleus sampling; 1 = off", false, "1"})
      .flag({"cfg-scale", "S", "classifier-free guidance scale; 0 = off", false, "0"})
      .flag({"eps", "E", "eps schedule: final timestep", false, "0.001"})
      .flag({"alg-temp", "T", "eps schedule: sample positions from softmax(confidence/T)", false, "0"})
      .flag({"seed", "N", "random seed", false, "0"})
      .flag({"no-eos-stop", "", "keep decoding after the answer has ended"})
      .flag({"threads", "N", "compute threads", false, "physical cores"})
      .flag({"device", "DEV", "where the forward passes run: cpu, or cuda (a CUDA build with a GPU)", false, "cpu"})
      .flag({"json", "", "print a JSON object with the text, token counts, forward passes and timings"})
      .flag({"visual", "", "show the canvas unmasking step by step on stderr"});
  return p;
}

base::Result<engine::DecodeOptions> decode_options(const ParsedArgs& a) {
  engine::DecodeOptions o;
  DLOOP_ASSIGN_OR_RETURN(o.gen_length, a.get_int("gen-length", 128, 1, 65536));
  DLOOP_ASSIGN_OR_RETURN(o.steps, a.get_int("steps", o.gen_length, 1, 1 << 20));
  DLOOP_ASSIGN_OR_RETURN(o.block_length, a.get_int("block-length", 32, 0, 65536));
  if (o.block_length > o.gen_length) o.block_length = o.gen_length;
  if (auto s = a.get("schedule")) {
    auto parsed = engine::parse_schedule(*s);
    if (!parsed) return base::invalid_argument("--schedule: unknown schedule '" + *s + "' (block, eps)");
    o.schedule = *parsed;
  }
  if (auto s = a.get("algorithm")) {
    auto parsed = engine::parse_algorithm(*s);
    if (!parsed) return base::invalid_argument("--algorithm: unknown algorithm '" + *s + "'");
    o.algorithm = *parsed;
  } else if (o.schedule == engine::Schedule::kEps) {
    o.algorithm = engine::Algorithm::kEntropy;
  }
  // Threshold decoding is the default for the block schedule unless --steps asks for a fixed count.
  const bool fixed_steps = a.has("steps");
  DLOOP_ASSIGN_OR_RETURN(double threshold, a.get_double("threshold", fixed_steps ? 0.0 : 0.9));
  if (threshold < 0 || threshold > 1) return base::invalid_argument("--threshold must be in [0, 1]");
  if (threshold > 0 && o.schedule == engine::Schedule::kBlock) o.threshold = threshold;
  if (o.schedule == engine::Schedule::kEps && threshold > 0 && a.has("threshold")) {
    return base::invalid_argument("--threshold applies to the block schedule only");
  }
  DLOOP_ASSIGN_OR_RETURN(o.temperature, a.get_double("temperature", 0));
  DLOOP_ASSIGN_OR_RETURN(o.top_k, a.get_int("top-k", 0, 0, 1 << 30));
  DLOOP_ASSIGN_OR_RETURN(o.top_p, a.get_double("top-p", 1));
  DLOOP_ASSIGN_OR_RETURN(o.cfg_scale, a.get_double("cfg-scale", 0));
  DLOOP_ASSIGN_OR_RETURN(o.eps, a.get_double("eps", 1e-3));
  DLOOP_ASSIGN_OR_RETURN(o.alg_temp, a.get_double("alg-temp", 0));
  DLOOP_ASSIGN_OR_RETURN(int64_t seed, a.get_int("seed", 0, 0, INT64_MAX));
  o.seed = static_cast<uint64_t>(seed);
  o.eos_stop = !a.has("no-eos-stop");
  DLOOP_RETURN_IF_ERROR(engine::validate(o));
  return o;
}

void print_progress(uint64_t done, uint64_t total) {
  const int width = 30;
  int filled = total ? static_cast<int>(width * done / total) : width;
  std::fprintf(stderr, "\rloading model [%s%s] %3d%%", std::string(size_t(filled), '#').c_str(),
               std::string(size_t(width - filled), ' ').c_str(), total ? int(100 * done / total) : 100);
  if (done == total) std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
}

// Renders the answer region: committed tokens as text, masks as a shaded block.
std::string render_canvas(const engine::Tokenizer& tok, const engine::StepEvent& e, int32_t mask_id) {
  std::string out;
  for (size_t p = static_cast<size_t>(e.prompt_length); p < e.canvas.size(); ++p) {
    int32_t t = e.canvas[p];
    if (t == mask_id) { out += "\u2591"; continue; }
    if (tok.is_control(t)) { out += "\u00b7"; continue; }
    for (char c : tok.token_text(t)) out += (c == '\n') ? std::string("\u21b5") : std::string(1, c);
  }
  return out;
}

base::Json result_json(const engine::Engine& eng, const engine::GenerateResult& r,
                       const engine::DecodeOptions& o, const std::string& model_path) {
  base::Json j = base::Json::object();
  j.set("text", r.text);
  j.set("model", model_path);
  j.set("prompt_tokens", r.prompt_tokens);
  j.set("completion_tokens", r.completion_tokens);
  j.set("steps", r.steps);
  j.set("forward_passes", r.forward_passes);
  j.set("stopped_by_eos", r.stopped_by_eos);
  j.set("tokens_per_second", r.tokens_per_second);
  j.set("tokens_per_forward", r.forward_passes ? double(r.completion_tokens) / double(r.forward_passes) : 0.0);
  base::Json t = base::Json::object();
  t.set("load_ms", eng.load_ms());
  t.set("tokenize_ms", r.timings.tokenize_ms);
  t.set("forward_ms", r.timings.forward_ms);
  t.set("sampling_ms", r.timings.sampling_ms);
  t.set("total_ms", r.timings.total_ms);
  j.set("timings", std::move(t));
  base::Json s = base::Json::object();
  s.set("schedule", engine::schedule_name(o.schedule));
  s.set("algorithm", engine::algorithm_name(o.algorithm));
  s.set("gen_length", o.gen_length);
  s.set("steps", o.steps);
  s.set("block_length", o.block_length);
  s.set("threshold", o.threshold ? base::Json(*o.threshold) : base::Json());
  s.set("temperature", o.temperature);
  s.set("seed", static_cast<int64_t>(o.seed));
  j.set("settings", std::move(s));
  return j;
}

// --tools: inline JSON or @path to a JSON file holding an array of tool objects.
base::Result<std::vector<base::Json>> parse_tools(const std::string& spec) {
  std::string text = spec;
  if (!spec.empty() && spec[0] == '@') {
    std::ifstream in(spec.substr(1), std::ios::binary);
    if (!in) return base::not_found("--tools: cannot read '" + spec.substr(1) + "'");
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  auto json = base::Json::parse(text);
  if (!json.ok()) return json.status().with_context("--tools");
  if (!json->is_array()) return base::invalid_argument("--tools: expected a JSON array of tools");
  std::vector<base::Json> tools;
  for (size_t i = 0; i < json->size(); ++i) {
    const base::Json& t = json->as_array()[i];
    const base::Json* name = t.find("name");
    if (!t.is_object() || name == nullptr || !name->is_string()) {
      return base::invalid_argument("--tools: item " + std::to_string(i) + " needs a string \"name\"");
    }
    tools.push_back(t);
  }
  return tools;
}

// --prompt and --system as chat messages, or with --raw the verbatim prompt (GenerateRequest and
// ToolCallRequest alike).
template <typename Request>
void set_prompt(const ParsedArgs& a, Request& req) {
  if (a.has("raw")) {
    req.raw_prompt = a.get("system").value_or("") + *a.get("prompt");
  } else {
    if (auto sys = a.get("system")) req.messages.push_back({"system", *sys});
    req.messages.push_back({"user", *a.get("prompt")});
  }
}

// --tool-call: the call (or answer) of tool_call() over the --tools items.
int generate_tool_call(const ParsedArgs& a, engine::Engine& eng, std::vector<base::Json> tools,
                       const std::string& model_path) {
  auto usage = [](const std::string& m) {
    std::fprintf(stderr, "dloop generate: %s\n(see 'dloop generate --help')\n", m.c_str());
    return kExitUsage;
  };
  engine::ToolCallRequest req;
  set_prompt(a, req);
  for (size_t i = 0; i < tools.size(); ++i) {
    engine::ToolDefinition d;
    d.name = tools[i].find("name")->as_string();
    if (const base::Json* desc = tools[i].find("description")) {
      if (!desc->is_string()) return usage("--tools: item " + std::to_string(i) + ": \"description\" must be a string");
      d.description = desc->as_string();
    }
    if (const base::Json* params = tools[i].find("parameters")) {
      if (!params->is_object()) return usage("--tools: item " + std::to_string(i) + ": \"parameters\" must be a JSON Schema object");
      d.parameters = *params;
    } else {
      d.parameters = base::Json::object();
      d.parameters.set("type", "object");
    }
    req.tools.push_back(std::move(d));
  }
  const std::string choice = a.get("tool-choice").value_or("auto");
  auto tc = engine::parse_tool_choice(choice);
  if (!tc) return usage("--tool-choice: expected auto, required, none or a tool name");
  req.tool_choice = *tc;
  const std::string effort = a.get("reasoning").value_or("low");
  auto e = engine::parse_reasoning_effort(effort);
  if (!e) return usage("--reasoning: expected instant, low, medium or high, not '" + effort + "'");
  req.effort = *e;
  req.ground_values = a.has("ground");
  auto mention_prior = a.get_double("mention-prior", engine::kMentionLogPrior);
  if (!mention_prior.ok()) return usage(mention_prior.status().message());
  if (*mention_prior < 0 || *mention_prior > 100) return usage("--mention-prior: must be in [0, 100], got " + *a.get("mention-prior"));
  req.mention_log_prior = *mention_prior;
  if (req.tools.empty() && req.tool_choice.kind != engine::ToolChoice::Kind::kNone) {
    return usage("--tool-call needs --tools (a JSON array of {name, description, parameters}) unless --tool-choice none");
  }
  if (auto st = engine::validate_tool_call_request(req); !st.ok()) return usage(st.message());
  auto r = eng.tool_call(req);
  if (!r.ok()) {
    std::fprintf(stderr, "dloop generate: %s\n", r.status().message().c_str());
    return r.status().code() == base::Code::kInvalidArgument ? kExitUsage : kExitFailed;
  }
  base::Json call = base::Json::object();
  if (r->is_call) {
    call.set("name", r->name);
    call.set("arguments", r->arguments_json);
  }
  if (!a.has("json")) {
    std::printf("%s\n", r->is_call ? call.dump().c_str() : r->answer.c_str());
    return kExitOk;
  }
  base::Json j = base::Json::object();
  j.set("model", model_path);
  j.set("reasoning", engine::reasoning_effort_name(req.effort));
  j.set("ground_values", req.ground_values);
  j.set("mention_log_prior", req.mention_log_prior);
  j.set("is_call", r->is_call);
  j.set("tool_call", r->is_call ? call : base::Json());
  j.set("answer", r->is_call ? base::Json() : base::Json(r->answer));
  j.set("call_probability", r->call_probability >= 0 ? base::Json(r->call_probability) : base::Json());
  j.set("prompt_tokens", r->prompt_tokens);
  j.set("completion_tokens", r->completion_tokens);
  j.set("forward_passes", r->forward_passes);
  j.set("string_slot_tokens", r->string_slot_tokens);
  base::Json t = base::Json::object();
  t.set("load_ms", eng.load_ms());
  t.set("forward_ms", r->timings.forward_ms);
  t.set("total_ms", r->timings.total_ms);
  j.set("timings", std::move(t));
  std::printf("%s\n", j.dump(base::Json::Style::kPretty).c_str());
  return kExitOk;
}

}  // namespace

int cmd_generate(const std::vector<std::string>& args) {
  ArgParser parser = generate_parser();
  auto parsed = parser.parse(args, 0, 0);
  if (parser.help_requested()) { std::fputs(parser.usage().c_str(), stdout); return kExitOk; }
  auto fail_usage = [&](const base::Status& s) {
    std::fprintf(stderr, "dloop generate: %s\n(see 'dloop generate --help')\n", s.message().c_str());
    return kExitUsage;
  };
  if (!parsed.ok()) return fail_usage(parsed.status());
  const ParsedArgs& a = *parsed;
  if (!a.has("prompt")) return fail_usage(base::invalid_argument("--prompt is required"));
  auto options = decode_options(a);
  if (!options.ok()) return fail_usage(options.status());
  auto threads = a.get_int("threads", 0, 0, 256);
  if (!threads.ok()) return fail_usage(threads.status());
  auto model_path = resolve_model_path(a.get("model").value_or("default"));
  if (!model_path.ok()) return fail_usage(model_path.status());

  auto tools = parse_tools(a.get("tools").value_or("[]"));
  if (!tools.ok()) return fail_usage(tools.status());
  if (!a.has("tool-call")) {
    for (const char* f : {"tool-choice", "reasoning", "ground", "mention-prior"}) {
      if (a.has(f)) return fail_usage(base::invalid_argument(std::string("--") + f + " needs --tool-call"));
    }
  }

  const bool tty = isatty(STDERR_FILENO) != 0;
  engine::EngineOptions eo;
  eo.model_path = *model_path;
  eo.threads = static_cast<int>(*threads);
  const auto device = engine::parse_device(a.get("device").value_or("cpu"));
  if (!device) return fail_usage(base::invalid_argument("--device: unknown device '" + *a.get("device") + "' (cpu or cuda)"));
  eo.device = *device;
  if (tty) eo.on_load_progress = print_progress;
  auto eng = engine::Engine::open(eo);
  if (!eng.ok()) {
    std::fprintf(stderr, "dloop generate: %s\n", eng.status().message().c_str());
    // No CUDA backend or device, or out of device memory: the machine, not the input.
    const base::Code code = eng.status().code();
    return code == base::Code::kUnavailable || code == base::Code::kResourceExhausted || code == base::Code::kInternal
               ? kExitFailed
               : kExitUsage;
  }
  if (a.has("tool-call")) return generate_tool_call(a, **eng, std::move(tools).value(), *model_path);
  engine::GenerateRequest req;
  set_prompt(a, req);
  req.tools = std::move(tools).value();
  req.decode = *options;
  if (a.has("visual")) {
    const engine::Tokenizer& tok = (*eng)->tokenizer();
    const int32_t mask = (*eng)->special_tokens().mask;
    req.on_step = [&tok, mask, tty](const engine::StepEvent& e) {
      std::string line = render_canvas(tok, e, mask);
      if (tty) {
        std::fprintf(stderr, "\r\033[Kstep %3lld  %s", static_cast<long long>(e.step), line.c_str());
      } else {
        std::fprintf(stderr, "step %3lld  %s\n", static_cast<long long>(e.step), line.c_str());
      }
      std::fflush(stderr);
    };
  }
  auto result = (*eng)->generate(req);
  if (a.has("visual") && tty) std::fputs("\n", stderr);
  if (!result.ok()) {
    std::fprintf(stderr, "dloop generate: %s\n", result.status().message().c_str());
    return kExitUsage;
  }
  if (a.has("json")) {
    std::printf("%s\n", result_json(**eng, *result, *options, *model_path).dump(base::Json::Style::kPretty).c_str());
  } else {
    std::printf("%s\n", result->text.c_str());
  }
  return kExitOk;
}

}  // namespace dloop::cli
