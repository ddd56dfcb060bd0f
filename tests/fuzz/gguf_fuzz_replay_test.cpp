// Runs the GGUF fuzz entry (gguf_fuzz.cpp) under GoogleTest in every build, so the default ctest
// run exercises it with gcc: the seed corpus (tests/data/models/*.gguf) and a few thousand
// deterministic mutations of it (byte writes, interesting integers, truncation, insertion,
// deletion and copies, mostly inside the metadata where the parser looks). Label: fuzz.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "dloop/engine/gguf.h"
#include "gguf_fuzz.h"

namespace dloop::fuzz {
namespace {

struct Seed {
  std::string bytes;
  size_t header = 0;  // bytes before the tensor data: where mutations matter most
};

std::vector<Seed> load_seeds() {
  std::vector<std::string> paths;
  for (const auto& e : std::filesystem::directory_iterator(std::string(DLOOP_SOURCE_DIR) + "/tests/data/models")) {
    if (e.path().extension() == ".gguf") paths.push_back(e.path().string());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<Seed> seeds;
  for (const std::string& p : paths) {
    std::ifstream in(p, std::ios::binary);
    Seed s{std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>())};
    auto f = engine::GgufFile::from_bytes(s.bytes);
    s.header = f.ok() ? static_cast<size_t>((*f)->data_offset()) : s.bytes.size();
    seeds.push_back(std::move(s));
  }
  return seeds;
}

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    state_ += 0x9E3779B97F4A7C15ull;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(next() % n); }

 private:
  uint64_t state_;
};

void mutate_once(std::string& b, size_t header, Rng& rng) {
  static const uint64_t kInteresting[] = {0, 1, 2, 7, 8, 9, 13, 31, 32, 63, 64, 255, 0x7fffffff, 0xffffffff,
                                          0x100000000ull, 0x7fffffffffffffffull, ~0ull, 1ull << 40};
  size_t limit = std::max<size_t>(1, std::min(header, b.size()));
  size_t at = rng.below(limit);
  // Weighted: small in-place edits (which often keep the file valid and reach the tokenizer) are
  // the most common; structural edits (which mostly break it) are rarer.
  size_t op = rng.below(20);
  if (op < 6) {
    if (!b.empty()) b[at] = static_cast<char>(rng.next());
  } else if (op < 12) {
    if (!b.empty()) b[at] = static_cast<char>(b[at] ^ (1 << rng.below(8)));
  } else if (op < 15) {
    uint64_t v = kInteresting[rng.below(std::size(kInteresting))];
    if (rng.below(2)) v = b.size() - rng.below(64);
    size_t width = rng.below(2) ? 8 : 4;
    for (size_t i = 0; i < width && at + i < b.size(); ++i) b[at + i] = static_cast<char>(v >> (8 * i));
  } else if (op == 15) {
    b.resize(rng.below(b.size() + 1));
  } else if (op == 16) {
    b.erase(std::min(at, b.size()), rng.below(16) + 1);
  } else if (op == 17) {
    b.insert(std::min(at, b.size()), std::string(rng.below(16) + 1, static_cast<char>(rng.next())));
  } else {  // copy a chunk of the header over another place (duplicate keys, shifted records)
    size_t from = std::min(rng.below(limit), b.size());
    size_t to = std::min(at, b.size());
    size_t n = std::min({rng.below(64) + 1, b.size() - from, b.size() - to});
    std::string chunk = b.substr(from, n);
    b.replace(to, chunk.size(), chunk);
  }
}

GgufFuzzLevel run(const std::string& bytes) {
  return fuzz_gguf(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

TEST(GgufFuzzReplay, SeedCorpus) {
  std::vector<Seed> seeds = load_seeds();
  ASSERT_FALSE(seeds.empty());
  for (const Seed& s : seeds) EXPECT_EQ(run(s.bytes), GgufFuzzLevel::kTokenizer);
  EXPECT_EQ(run(""), GgufFuzzLevel::kRejected);
  EXPECT_EQ(run("GGUF"), GgufFuzzLevel::kRejected);
}

TEST(GgufFuzzReplay, DeterministicMutations) {
  std::vector<Seed> seeds = load_seeds();
  ASSERT_FALSE(seeds.empty());
  Rng rng(0x646C6F6F70);
  int counts[3] = {0, 0, 0};
  constexpr int kMutations = 4000;
  for (int i = 0; i < kMutations; ++i) {
    const Seed& seed = seeds[rng.below(seeds.size())];
    std::string bytes = seed.bytes;
    int n_ops = 1 + static_cast<int>(rng.below(2));
    for (int k = 0; k < n_ops; ++k) mutate_once(bytes, seed.header, rng);
    counts[static_cast<int>(run(bytes))]++;
  }
  // The mix shows the mutations reach past the parser into the tokenizer, and also break files.
  EXPECT_GT(counts[0], kMutations / 10);
  EXPECT_GT(counts[2], kMutations / 10);
  std::printf("mutations: %d rejected, %d parsed only, %d with a tokenizer\n", counts[0], counts[1], counts[2]);
}

}  // namespace
}  // namespace dloop::fuzz
