// String slots whose padding was committed before the closing quote: the trailing spaces are read
// as padding and dropped, down to the schema's minLength. A scripted forwarder (on the llada test
// model's vocabulary) prefers "a", " ", "b" at the slot's first three positions and then the space
// over the closing quote, the way the bundled model sometimes pads inside the string.
#include <gtest/gtest.h>

#include <algorithm>

#include "dloop/base/json_schema.h"
#include "dloop/engine/forwarder.h"
#include "dloop/engine/gguf.h"
#include "dloop/engine/model.h"
#include "dloop/engine/tokenizer.h"
#include "infiller.h"

namespace dloop::engine::toolcall {
namespace {

const std::string kModel = std::string(DLOOP_SOURCE_DIR) + "/tests/data/models/llada-f32.gguf";

class ScriptedForwarder final : public Forwarder {
 public:
  ScriptedForwarder(int32_t n_vocab, size_t answer_start, std::vector<int32_t> script, int32_t pad, int32_t quote)
      : n_vocab_(n_vocab), answer_start_(answer_start), script_(std::move(script)), pad_(pad), quote_(quote) {}
  base::Status forward(std::span<const int32_t> canvas, std::span<const int32_t> rows, float* logits,
                       const PassHint&, int) override {
    if (slot_start_ < 0) {  // the first masked position of the first pass is the slot's start
      for (int32_t r : rows) {
        if (static_cast<size_t>(r) >= answer_start_) { slot_start_ = r; break; }
      }
    }
    (void)canvas;
    for (size_t k = 0; k < rows.size(); ++k) {
      float* l = logits + k * static_cast<size_t>(n_vocab_);
      std::fill(l, l + n_vocab_, 0.0f);
      const int64_t j = rows[k] - slot_start_;
      if (j >= 0 && j < static_cast<int64_t>(script_.size())) {
        l[script_[static_cast<size_t>(j)]] = 20.0f;
      } else {
        l[pad_] = 20.0f;
        l[quote_] = 10.0f;
      }
    }
    return base::Status();
  }

 private:
  int32_t n_vocab_;
  size_t answer_start_;
  std::vector<int32_t> script_;
  int32_t pad_, quote_;
  int64_t slot_start_ = -1;
};

int32_t single_token(const Tokenizer& tok, const std::string& text) {
  const auto ids = tok.encode(text, false);
  EXPECT_EQ(ids.size(), 1u) << "'" << text << "'";
  return ids.empty() ? 0 : ids[0];
}

std::string decode_name(const std::string& schema_text) {
  auto file = GgufFile::open(kModel);
  EXPECT_TRUE(file.ok()) << file.status().message();
  auto model = Model::load(std::shared_ptr<const GgufFile>(std::move(file).value()));
  EXPECT_TRUE(model.ok()) << model.status().message();
  auto tok = Tokenizer::from_gguf((*model)->file());
  EXPECT_TRUE(tok.ok()) << tok.status().message();
  const VocabInfo vocab = VocabInfo::build(*tok, tok->mask_id());
  auto schema = base::Schema::compile(*base::Json::parse(schema_text));
  EXPECT_TRUE(schema.ok()) << schema.status().message();
  const std::vector<int32_t> prompt =
      tok->encode("<|im_start|>user\nName it.<|im_end|>\n<|im_start|>assistant\n", true);
  ScriptedForwarder fwd((*model)->config().n_vocab, prompt.size(),
                        {single_token(*tok, "a"), single_token(*tok, " "), single_token(*tok, "b")},
                        single_token(*tok, " "), single_token(*tok, "\""));
  const InfillContext ctx{**model, fwd, *tok, vocab, tok->eos_id()};
  InfillSpec spec;
  spec.root = &schema->root();
  InfillOptions o;
  o.string_budget = 10;
  auto res = infill(ctx, prompt, spec, o);
  EXPECT_TRUE(res.ok()) << res.status().message();
  if (!res.ok()) return "";
  auto value = base::Json::parse(res->text);
  EXPECT_TRUE(value.ok()) << res->text;
  EXPECT_TRUE(schema->validate(*value).ok()) << res->text;
  return res->text;
}

TEST(SlotPadding, TrailingSpacesBeforeTheClosingQuoteAreDropped) {
  EXPECT_EQ(decode_name(R"({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})"),
            R"({"name": "a b"})");
}

TEST(SlotPadding, MinLengthKeepsAsManySpacesAsItNeeds) {
  EXPECT_EQ(decode_name(R"({"type": "object", "properties": {"name": {"type": "string", "minLength": 5}},
                           "required": ["name"]})"),
            R"({"name": "a b  "})");
}

}  // namespace
}  // namespace dloop::engine::toolcall
