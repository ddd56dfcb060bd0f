// The infilling decoder's array-length decision ("another item or `]`") on the random-weight llada
// test model: it is made only once the items before it are committed, so no pass shows an item
// separator or `]` after a still-masked position, and the result validates.
#include <gtest/gtest.h>

#include "dloop/base/json_schema.h"
#include "dloop/engine/forwarder.h"
#include "dloop/engine/gguf.h"
#include "dloop/engine/model.h"
#include "dloop/engine/tokenizer.h"
#include "dloop/kernels/thread_pool.h"
#include "infiller.h"

namespace dloop::engine::toolcall {
namespace {

const std::string kModel = std::string(DLOOP_SOURCE_DIR) + "/tests/data/models/llada-f32.gguf";

// Passes through to the model and keeps every canvas it was asked for.
class RecordingForwarder final : public Forwarder {
 public:
  explicit RecordingForwarder(Forwarder& inner) : inner_(inner) {}
  base::Status forward(std::span<const int32_t> canvas, std::span<const int32_t> rows, float* logits,
                       const PassHint& hint, int stream) override {
    canvases.emplace_back(canvas.begin(), canvas.end());
    return inner_.forward(canvas, rows, logits, hint, stream);
  }
  std::vector<std::vector<int32_t>> canvases;

 private:
  Forwarder& inner_;
};

TEST(ArrayChoice, DecidedOnlyAfterTheItemsBeforeItAreCommitted) {
  auto file = GgufFile::open(kModel);
  ASSERT_TRUE(file.ok()) << file.status().message();
  auto model = Model::load(std::shared_ptr<const GgufFile>(std::move(file).value()));
  ASSERT_TRUE(model.ok()) << model.status().message();
  auto tok = Tokenizer::from_gguf((*model)->file());
  ASSERT_TRUE(tok.ok()) << tok.status().message();
  const VocabInfo vocab = VocabInfo::build(*tok, tok->mask_id());
  auto schema = base::Schema::compile(*base::Json::parse(
      R"({"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string", "maxLength": 6},
          "maxItems": 4}}, "required": ["tags"]})"));
  ASSERT_TRUE(schema.ok()) << schema.status().message();
  kernels::ThreadPool pool(2);
  int most_items = 0;
  for (const char* request : {"Tag it red, blue and green.", "Tags: alpha beta gamma delta.", "No tags.",
                              "Label these: one, two.", "x y z"}) {
    SCOPED_TRACE(request);
    ForwardState state;
    DirectForwarder direct(**model, pool, state);
    RecordingForwarder rec(direct);
    const InfillContext ctx{**model, rec, *tok, vocab, tok->eos_id()};
    const std::vector<int32_t> prompt =
        tok->encode(std::string("<|im_start|>user\n") + request + "<|im_end|>\n<|im_start|>assistant\n", true);
    InfillSpec spec;
    spec.root = &schema->root();
    InfillOptions o;
    o.string_budget = 8;
    o.min_answer_length = 48;
    auto res = infill(ctx, prompt, spec, o);
    ASSERT_TRUE(res.ok()) << res.status().message();
    auto value = base::Json::parse(res->text);
    ASSERT_TRUE(value.ok()) << res->text;
    EXPECT_TRUE(schema->validate(*value).ok()) << res->text;
    most_items = std::max(most_items, static_cast<int>(value->find("tags")->as_array().size()));
    EXPECT_EQ(static_cast<int64_t>(rec.canvases.size()), res->forward_passes);
    for (size_t pass = 0; pass < rec.canvases.size(); ++pass) {
      const auto& c = rec.canvases[pass];
      size_t first = c.size(), last = 0;
      for (size_t i = prompt.size(); i < c.size(); ++i) {
        if (c[i] != vocab.mask) continue;
        first = std::min(first, i);
        last = i;
      }
      // Between masks only a slot's forced padding or closing quote may be committed, never the
      // separator of a next item or the closing bracket.
      for (size_t i = first; i < last; ++i) {
        if (c[i] == vocab.mask) continue;
        const std::string& text = vocab.text[static_cast<size_t>(c[i])];
        ASSERT_EQ(text.find_first_not_of(" \""), std::string::npos)
            << "pass " << pass + 1 << ": [" << text << "] committed at answer position " << i - prompt.size()
            << " after a masked position (" << res->text << ")";
      }
    }
  }
  EXPECT_GE(most_items, 2);  // some run decided "another item" after a committed one
}

}  // namespace
}  // namespace dloop::engine::toolcall
