// The bundled model (models/default.gguf) in the engine against the training framework's own
// forward pass: PyTorch logits dumped by models/recipe/dump_logits.py for three sequences (a
// short chat, a fully masked answer canvas and a partly committed one) must match within 1e-3.
// This is what proves the exporter and the engine agree on every convention.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "dloop/base/json.h"
#include "dloop/engine/model.h"

namespace dloop::engine {
namespace {

const std::string kRoot = std::string(DLOOP_SOURCE_DIR);

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(BundledModel, LogitsMatchPyTorch) {
  auto index = base::Json::parse(read_file(kRoot + "/tests/data/bundled/index.json"));
  ASSERT_TRUE(index.ok()) << index.status().to_string();
  auto file = GgufFile::open(kRoot + "/models/default.gguf");
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  std::shared_ptr<const GgufFile> shared = std::move(file).value();
  auto model = Model::load(shared);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  const int64_t V = index->find("n_vocab")->as_int();
  ASSERT_EQ((*model)->config().n_vocab, V);
  kernels::ThreadPool pool(2);
  ForwardState state;
  int checked = 0;
  for (const auto& [name, seq] : index->find("sequences")->as_object()) {
    SCOPED_TRACE(name);
    std::vector<int32_t> ids;
    for (const auto& v : seq.find("ids")->as_array()) ids.push_back(static_cast<int32_t>(v.as_int()));
    const int64_t lo = seq.find("rows")->as_array()[0].as_int(), hi = seq.find("rows")->as_array()[1].as_int();
    std::vector<int32_t> rows;
    for (int64_t r = lo; r < hi; ++r) rows.push_back(static_cast<int32_t>(r));
    std::vector<float> logits(rows.size() * static_cast<size_t>(V));
    ASSERT_TRUE((*model)->forward(pool, ids, rows, logits.data(), state).ok());
    std::string raw = read_file(kRoot + "/tests/data/bundled/" + seq.find("file")->as_string());
    ASSERT_EQ(raw.size(), logits.size() * sizeof(float));
    const auto* want = reinterpret_cast<const float*>(raw.data());
    double scale = 1.0, worst = 0;
    for (size_t i = 0; i < logits.size(); ++i) scale = std::max(scale, std::fabs(double(want[i])));
    for (size_t i = 0; i < logits.size(); ++i) worst = std::max(worst, std::fabs(double(logits[i]) - want[i]) / scale);
    EXPECT_LT(worst, 1e-3);
    std::printf("%s: max relative error %.2e over %zu logits\n", name.c_str(), worst, logits.size());
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

}  // namespace
}  // namespace dloop::engine
