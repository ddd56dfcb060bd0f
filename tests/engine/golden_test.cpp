// The engine against the independent NumPy reference (tests/reference/dllm_ref.py): full logits
// of every test model and weight type, and token-for-token decoding of every schedule and
// algorithm. Goldens live in tests/data/golden/ (format in its README).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "dloop/base/json.h"
#include "dloop/engine/decoding.h"
#include "dloop/engine/model.h"
#include "dloop/engine/tokenizer.h"

namespace dloop::engine {
namespace {

const std::string kData = std::string(DLOOP_SOURCE_DIR) + "/tests/data/";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

base::Json load_json(const std::string& path) {
  auto j = base::Json::parse(read_file(path));
  EXPECT_TRUE(j.ok()) << path << ": " << j.status().to_string();
  return j.ok() ? *j : base::Json();
}

std::vector<int32_t> ids_of(const base::Json& arr) {
  std::vector<int32_t> out;
  for (const auto& v : arr.as_array()) out.push_back(static_cast<int32_t>(v.as_int()));
  return out;
}

struct Loaded {
  std::unique_ptr<Model> model;
  std::unique_ptr<Tokenizer> tokenizer;
};

Loaded& load_model(const std::string& name) {
  static std::map<std::string, Loaded> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return it->second;
  Loaded loaded;
  auto file = GgufFile::open(kData + "models/" + name);
  EXPECT_TRUE(file.ok()) << file.status().to_string();
  std::shared_ptr<const GgufFile> shared = std::move(file).value();
  auto model = Model::load(shared);
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  loaded.model = std::move(model).value();
  auto tok = Tokenizer::from_gguf(*shared);
  EXPECT_TRUE(tok.ok()) << tok.status().to_string();
  loaded.tokenizer = std::make_unique<Tokenizer>(std::move(tok).value());
  return cache.emplace(name, std::move(loaded)).first->second;
}

// Relative tolerance on the logits, scaled by max(1, max |golden|): f32 compute against the
// float64 reference, with the same dequantized weights for every type.
constexpr double kLogitsRtol = 1e-4;

TEST(EngineGolden, LogitsMatchReference) {
  base::Json golden = load_json(kData + "golden/logits.json");
  kernels::ThreadPool pool(2);
  int checked = 0;
  for (const auto& c : golden.find("cases")->as_array()) {
    const std::string model_name = c.find("model")->as_string();
    SCOPED_TRACE(model_name);
    Loaded& m = load_model(model_name);
    std::vector<int32_t> tokens = ids_of(*c.find("tokens"));
    const int64_t V = c.find("n_vocab")->as_int();
    ASSERT_EQ(m.model->config().n_vocab, V);
    std::vector<int32_t> rows(tokens.size());
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int32_t>(i);
    std::vector<float> logits(tokens.size() * static_cast<size_t>(V));
    ForwardState state;
    ASSERT_TRUE(m.model->forward(pool, tokens, rows, logits.data(), state).ok());
    std::string raw = read_file(kData + "golden/" + c.find("logits_file")->as_string());
    ASSERT_EQ(raw.size(), logits.size() * sizeof(float));
    const auto* want = reinterpret_cast<const float*>(raw.data());
    double max_abs = 1.0;
    for (size_t i = 0; i < logits.size(); ++i) max_abs = std::max(max_abs, std::fabs(double(want[i])));
    double worst = 0;
    for (size_t i = 0; i < logits.size(); ++i) worst = std::max(worst, std::fabs(double(logits[i]) - want[i]) / max_abs);
    EXPECT_LT(worst, kLogitsRtol);
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

DecodeOptions options_of(const base::Json& c) {
  DecodeOptions o;
  o.schedule = *parse_schedule(c.find("schedule")->as_string());
  o.algorithm = *parse_algorithm(c.find("algorithm")->as_string());
  o.gen_length = c.find("gen_length")->as_int();
  o.steps = c.find("steps")->as_int();
  o.block_length = c.find("block_length")->as_int();
  o.temperature = c.find("temperature")->as_double();
  o.top_k = c.find("top_k")->as_int();
  o.top_p = c.find("top_p")->as_double();
  if (!c.find("threshold")->is_null()) o.threshold = c.find("threshold")->as_double();
  o.seed = static_cast<uint64_t>(c.find("seed")->as_int());
  o.cfg_scale = c.find("cfg_scale")->as_double();
  o.eps = c.find("eps")->as_double();
  o.alg_temp = c.find("alg_temp")->as_double();
  o.eos_stop = c.find("eos_stop")->as_bool();
  return o;
}

TEST(EngineGolden, DecodingMatchesReferenceTokenForToken) {
  base::Json golden = load_json(kData + "golden/decode_cases.json");
  kernels::ThreadPool pool(2);
  int checked = 0;
  for (const auto& c : golden.find("cases")->as_array()) {
    SCOPED_TRACE(c.find("name")->as_string());
    Loaded& m = load_model(c.find("model")->as_string());
    SpecialTokens special;
    special.mask = m.tokenizer->mask_id();
    special.eos = m.tokenizer->eos_id();
    special.stop = {m.tokenizer->eos_id()};
    if (m.tokenizer->eot_id() >= 0) special.stop.push_back(m.tokenizer->eot_id());
    ForwardState state;
    std::vector<int32_t> prompt = ids_of(*c.find("prompt"));
    int observed_steps = 0;
    auto r = decode(*m.model, pool, state, prompt, options_of(c), special,
                    [&](const StepEvent& e) { observed_steps = static_cast<int>(e.step); });
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(r->answer, ids_of(*c.find("expected_answer")));
    EXPECT_EQ(r->output, ids_of(*c.find("expected_output")));
    EXPECT_EQ(r->steps, c.find("expected_steps")->as_int());
    EXPECT_EQ(r->forward_passes, c.find("expected_forward_passes")->as_int());
    EXPECT_EQ(r->stopped_by_eos, c.find("stopped_by_eos")->as_bool());
    EXPECT_EQ(observed_steps, r->steps);
    ++checked;
  }
  EXPECT_GE(checked, 30);
}

TEST(EngineGolden, SameSeedSameTokensDifferentSeedDiffers) {
  Loaded& m = load_model("llada-f32.gguf");
  kernels::ThreadPool pool(2);
  ForwardState state;
  SpecialTokens special{m.tokenizer->mask_id(), m.tokenizer->eos_id(), {m.tokenizer->eos_id()}};
  DecodeOptions o;
  o.gen_length = 16;
  o.steps = 16;
  o.block_length = 16;
  o.temperature = 1.0;
  o.eos_stop = false;
  std::vector<int32_t> prompt = {307, 297, 267, 10, 87};
  o.seed = 1;
  auto a = decode(*m.model, pool, state, prompt, o, special);
  auto b = decode(*m.model, pool, state, prompt, o, special);
  o.seed = 2;
  auto c = decode(*m.model, pool, state, prompt, o, special);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->answer, b->answer);
  EXPECT_NE(a->answer, c->answer);
}

TEST(EngineDecode, RejectsBadOptions) {
  DecodeOptions o;
  o.gen_length = 30;
  o.block_length = 8;
  EXPECT_EQ(validate(o).message(), "gen_length 30 is not a multiple of block_length 8");
  o.gen_length = 32;
  o.steps = 3;
  EXPECT_EQ(validate(o).message(), "steps 3 must be a multiple of the 4 blocks with 1 <= steps per block <= block_length 8");
  o.steps = 8;
  EXPECT_TRUE(validate(o).ok());
  o.threshold = 1.5;
  EXPECT_EQ(validate(o).message(), "threshold must be in (0, 1]");
  o.threshold.reset();
  o.algorithm = Algorithm::kOrigin;
  EXPECT_NE(validate(o).message().find("origin"), std::string::npos);
  o.schedule = Schedule::kEps;
  o.eps = 0;
  EXPECT_EQ(validate(o).message(), "eps must be in (0, 1)");
}

TEST(EngineDecode, RejectsCanvasPastContextAndBadTokens) {
  Loaded& m = load_model("llada-f32.gguf");
  kernels::ThreadPool pool(1);
  ForwardState state;
  SpecialTokens special{m.tokenizer->mask_id(), m.tokenizer->eos_id(), {m.tokenizer->eos_id()}};
  DecodeOptions o;
  o.gen_length = 512;
  o.steps = 512;
  o.block_length = 512;
  auto r = decode(*m.model, pool, state, std::vector<int32_t>{1, 2, 3}, o, special);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("exceeds the model's context length 256"), std::string::npos);
  o.gen_length = 8;
  o.steps = 8;
  o.block_length = 8;
  auto bad = decode(*m.model, pool, state, std::vector<int32_t>{1, 99999}, o, special);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("token id 99999 at position 1"), std::string::npos);
}

}  // namespace
}  // namespace dloop::engine
