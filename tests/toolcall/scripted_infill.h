// Test helpers of tests/toolcall: a scripted forwarder (per-position logits from a function of the
// canvas) on the llada test model's vocabulary, and a fixture that infills one value with it.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <span>
#include <string>
#include <vector>

#include <algorithm>
#include <functional>
#include <map>

#include "dloop/base/json_schema.h"
#include "dloop/engine/forwarder.h"
#include "dloop/engine/gguf.h"
#include "dloop/engine/model.h"
#include "dloop/engine/tokenizer.h"
#include "infiller.h"

namespace dloop::engine::toolcall::test {

const std::string kModel = std::string(DLOOP_SOURCE_DIR) + "/tests/data/models/llada-f32.gguf";

// One required string ("id") or number ("rating") argument.
constexpr const char* kId = R"({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]})";
constexpr const char* kRating =
    R"({"type": "object", "properties": {"rating": {"type": "number"}}, "required": ["rating"]})";

// The logits of slot position j (relative to the slot's first position) given the canvas, the
// slot's start and the pass (1 = first): token -> logit, every other token 0.
using Script =
    std::function<std::map<int32_t, float>(std::span<const int32_t> canvas, int64_t start, int64_t j, int pass)>;

class ScriptedForwarder final : public Forwarder {
 public:
  ScriptedForwarder(int32_t n_vocab, size_t answer_start, Script script)
      : n_vocab_(n_vocab), answer_start_(answer_start), script_(std::move(script)) {}
  base::Status forward(std::span<const int32_t> canvas, std::span<const int32_t> rows, float* logits,
                       const PassHint&, int) override {
    if (slot_start_ < 0) {  // the first masked position of the first pass is the slot's start
      for (int32_t r : rows) {
        if (static_cast<size_t>(r) >= answer_start_) { slot_start_ = r; break; }
      }
    }
    ++passes;
    for (size_t k = 0; k < rows.size(); ++k) {
      float* l = logits + k * static_cast<size_t>(n_vocab_);
      std::fill(l, l + n_vocab_, 0.0f);
      for (const auto& [t, v] : script_(canvas, slot_start_, rows[k] - slot_start_, passes)) l[t] = v;
    }
    return base::Status();
  }
  int passes = 0;

 private:
  int32_t n_vocab_;
  size_t answer_start_;
  Script script_;
  int64_t slot_start_ = -1;
};

struct Fixture {
  std::unique_ptr<Model> model;
  std::optional<Tokenizer> tok;
  int64_t string_budget = 10;  // InfillOptions::string_budget of decode()
  std::function<void(InfillOptions&)> tweak;  // applied to decode()'s options last
  Fixture() {
    auto file = GgufFile::open(kModel);
    EXPECT_TRUE(file.ok()) << file.status().message();
    auto m = Model::load(std::shared_ptr<const GgufFile>(std::move(file).value()));
    EXPECT_TRUE(m.ok()) << m.status().message();
    model = std::move(m).value();
    auto t = Tokenizer::from_gguf(model->file());
    EXPECT_TRUE(t.ok()) << t.status().message();
    tok.emplace(std::move(t).value());
  }
  int32_t id(const std::string& text) const {
    const auto ids = tok->encode(text, false);
    EXPECT_EQ(ids.size(), 1u) << "'" << text << "'";
    return ids.empty() ? 0 : ids[0];
  }
  // The call's JSON, decoded with `script` at `threshold` (slots left to right).
  // user: the user message of the prompt; copy_repair: InfillOptions::copy_repair.
  std::string decode(const std::string& schema_text, const Script& script, double threshold = 0.9,
                     int* passes = nullptr, const std::string& user = "Name it.", bool copy_repair = true) {
    const VocabInfo vocab = VocabInfo::build(*tok, tok->mask_id());
    auto schema = base::Schema::compile(*base::Json::parse(schema_text));
    EXPECT_TRUE(schema.ok()) << schema.status().message();
    const std::vector<int32_t> prompt =
        tok->encode("<|im_start|>user\n" + user + "<|im_end|>\n<|im_start|>assistant\n", true);
    ScriptedForwarder fwd(model->config().n_vocab, prompt.size(), script);
    const InfillContext ctx{*model, fwd, *tok, vocab, tok->eos_id()};
    InfillSpec spec;
    spec.root = &schema->root();
    InfillOptions o;
    o.string_budget = string_budget;
    o.threshold = threshold;
    o.copy_repair = copy_repair;
    if (tweak) tweak(o);
    auto res = infill(ctx, prompt, spec, o);
    EXPECT_TRUE(res.ok()) << res.status().message();
    if (passes) *passes = fwd.passes;
    if (!res.ok()) return "";
    auto value = base::Json::parse(res->text);
    EXPECT_TRUE(value.ok()) << res->text;
    EXPECT_TRUE(schema->validate(*value).ok()) << res->text;
    return res->text;
  }
};

}  // namespace dloop::engine::toolcall::test
