// The decoder's device path (decode.cpp device_predict) on the CPU: a DeviceForwarder whose
// forward_choices() runs the host reference of the device step (reference_choices, which the GPU
// kernel is tested against in tests/cuda) over the CPU's logits. The decoder must give the same
// answers through it as through the logits path, for greedy and sampled decoding and every
// confidence algorithm: this checks the SplitMix64 bookkeeping (which draw each row and token
// takes, how far the generator advances) and the mapping of margin and entropy to confidences.
#include <gtest/gtest.h>

#include <cmath>

#include "dloop/engine/decoding.h"
#include "dloop/engine/device.h"
#include "dloop/engine/forwarder.h"
#include "dloop/engine/gguf.h"
#include "dloop/engine/tokenizer.h"

namespace dloop::engine {
namespace {

const std::string kModels = std::string(DLOOP_SOURCE_DIR) + "/tests/data/models/";

class HostChoiceForwarder final : public DeviceForwarder {
 public:
  HostChoiceForwarder(const Model& model, Forwarder& inner) : model_(model), inner_(inner) {}
  base::Status forward(std::span<const int32_t> canvas, std::span<const int32_t> rows, float* logits,
                       const PassHint& hint, int stream) override {
    return inner_.forward(canvas, rows, logits, hint, stream);
  }
  base::Status forward_choices(std::span<const int32_t> canvas, std::span<const int32_t> rows,
                               const ChoiceOptions& choice, TokenChoice* out, const PassHint& hint,
                               int stream) override {
    const int64_t V = model_.config().n_vocab;
    logits_.resize(rows.size() * static_cast<size_t>(V));
    DLOOP_RETURN_IF_ERROR(inner_.forward(canvas, rows, logits_.data(), hint, stream));
    reference_choices(logits_.data(), static_cast<int64_t>(rows.size()), V, choice, out);
    ++choice_passes;
    return base::Status();
  }
  int choice_passes = 0;

 private:
  const Model& model_;
  Forwarder& inner_;
  std::vector<float> logits_;
};

struct Fixture {
  std::unique_ptr<Model> model;
  SpecialTokens special;
};

Fixture load(const std::string& name) {
  Fixture f;
  auto file = GgufFile::open(kModels + name);
  EXPECT_TRUE(file.ok()) << file.status().to_string();
  auto m = Model::load(std::shared_ptr<const GgufFile>(std::move(file).value()));
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  f.model = std::move(m).value();
  auto tok = Tokenizer::from_gguf(f.model->file());
  EXPECT_TRUE(tok.ok()) << tok.status().to_string();
  f.special = SpecialTokens{tok->mask_id(), tok->eos_id(), {tok->eos_id()}};
  return f;
}

std::vector<int32_t> prompt_for(const Fixture& f, uint64_t seed) {
  std::vector<int32_t> p;
  uint64_t x = seed;
  for (int i = 0; i < 24; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    auto t = static_cast<int32_t>((x >> 33) % static_cast<uint64_t>(f.model->config().n_vocab));
    p.push_back(t == f.special.mask ? 0 : t);
  }
  return p;
}

struct Case {
  const char* name;
  Schedule schedule;
  Algorithm algorithm;
  double temperature;
  bool threshold;
};

TEST(DeviceChoice, DecodingThroughChoicesEqualsDecodingThroughLogits) {
  const Case cases[] = {
      {"greedy block", Schedule::kBlock, Algorithm::kLowConfidence, 0.0, false},
      {"greedy threshold", Schedule::kBlock, Algorithm::kLowConfidence, 0.0, true},
      {"sampled block", Schedule::kBlock, Algorithm::kLowConfidence, 0.8, false},
      {"sampled random remasking", Schedule::kBlock, Algorithm::kRandom, 0.8, false},
      {"greedy random remasking", Schedule::kBlock, Algorithm::kRandom, 0.0, false},
      {"eps margin sampled", Schedule::kEps, Algorithm::kTopkMargin, 0.7, false},
      {"eps entropy", Schedule::kEps, Algorithm::kEntropy, 0.0, false},
      {"eps entropy sampled", Schedule::kEps, Algorithm::kEntropy, 1.2, false},
      {"eps origin sampled", Schedule::kEps, Algorithm::kOrigin, 0.9, false},
  };
  kernels::ThreadPool pool(2);
  for (const char* model : {"llada-f32.gguf", "dream-f32.gguf"}) {
    Fixture f = load(model);
    ASSERT_TRUE(f.model);
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(model) + ": " + c.name);
      DecodeOptions o;
      o.gen_length = 32;
      o.steps = 16;
      o.block_length = 16;
      o.schedule = c.schedule;
      o.algorithm = c.algorithm;
      o.temperature = c.temperature;
      if (c.threshold) o.threshold = 0.05;
      o.eos_stop = false;
      o.seed = 1234;
      const auto prompt = prompt_for(f, 7);
      ForwardState s1, s2;
      DirectForwarder plain(*f.model, pool, s1);
      DirectForwarder inner(*f.model, pool, s2);
      HostChoiceForwarder device(*f.model, inner);
      auto want = decode(*f.model, plain, prompt, o, f.special);
      auto got = decode(*f.model, device, prompt, o, f.special);
      ASSERT_TRUE(want.ok()) << want.status().to_string();
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      EXPECT_EQ(got->answer, want->answer);
      EXPECT_EQ(got->steps, want->steps);
      EXPECT_EQ(device.choice_passes, got->forward_passes);  // every pass went through the choices
    }
  }
}

// Filtering (top-k/top-p) and CFG need the whole distribution: the decoder reads logits then,
// even from a device forwarder.
TEST(DeviceChoice, FilteringAndGuidanceUseTheLogitsPath) {
  kernels::ThreadPool pool(2);
  Fixture f = load("llada-f32.gguf");
  ASSERT_TRUE(f.model);
  for (int variant = 0; variant < 3; ++variant) {
    DecodeOptions o;
    o.gen_length = 16;
    o.steps = 8;
    o.block_length = 16;
    o.temperature = 0.7;
    o.eos_stop = false;
    if (variant == 0) o.top_k = 5;
    if (variant == 1) o.top_p = 0.9;
    if (variant == 2) o.cfg_scale = 1.0;
    ForwardState s1, s2;
    DirectForwarder plain(*f.model, pool, s1);
    DirectForwarder inner(*f.model, pool, s2);
    HostChoiceForwarder device(*f.model, inner);
    auto want = decode(*f.model, plain, prompt_for(f, 3), o, f.special);
    auto got = decode(*f.model, device, prompt_for(f, 3), o, f.special);
    ASSERT_TRUE(want.ok() && got.ok());
    EXPECT_EQ(got->answer, want->answer) << "variant " << variant;
    EXPECT_EQ(device.choice_passes, 0) << "variant " << variant;
  }
}

// The reference itself: argmax with the excluded id left out, its probability, the top-two
// margin and the entropy of a small hand-computed row; ties go to the lower id.
TEST(DeviceChoice, ReferenceValuesOnAHandRow) {
  const float row[] = {1.0f, 3.0f, 3.0f, 0.0f, 9.0f};  // id 4 excluded: ids 1 and 2 tie
  ChoiceOptions o;
  o.exclude = 4;
  TokenChoice c;
  reference_choices(row, 1, 5, o, &c);
  const double e0 = std::exp(-2.0), e3 = std::exp(-3.0), s = e0 + 2 + e3;
  EXPECT_EQ(c.token, 1);
  EXPECT_NEAR(c.confidence, 1 / s, 1e-7);
  EXPECT_NEAR(c.margin, 0.0, 1e-7);
  const double h = std::log(s) - (e0 * -2.0 + e3 * -3.0) / s;
  EXPECT_NEAR(c.entropy, h, 1e-6);
  // Sampling with the same state twice gives the same token; the state decides it.
  o.temperature = 5.0;
  o.draws_per_row = 5;
  int differs = 0;
  for (uint64_t st = 1; st <= 50; ++st) {
    o.rng_state = st;
    TokenChoice a, b;
    reference_choices(row, 1, 5, o, &a);
    reference_choices(row, 1, 5, o, &b);
    EXPECT_EQ(a.token, b.token);
    EXPECT_NE(a.token, 4);
    differs += a.token != 1;
  }
  EXPECT_GT(differs, 5);  // at T = 5 the other ids win often
}

}  // namespace
}  // namespace dloop::engine
