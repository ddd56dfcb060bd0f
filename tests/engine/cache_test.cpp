// K/V caches where they are exact: forward_batch over a whole canvas equals Model::forward bit
// for bit (alone and packed with other sequences), a pass that recomputes only some rows against
// K/V cached from the same canvas equals the full pass, decoding through a CachedForwarder with
// the cache off equals the reference path, and prompt reuse gives the same output on a hit as on
// a miss. Also the PromptCache's LRU order, byte budget and counters.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>

#include "dloop/engine/decoding.h"
#include "dloop/engine/engine.h"
#include "dloop/engine/forward_batch.h"
#include "dloop/engine/forwarder.h"
#include "dloop/engine/prompt_cache.h"
#include "dloop/engine/random_model.h"

namespace dloop::engine {
namespace {

const std::string kModels = std::string(DLOOP_SOURCE_DIR) + "/tests/data/models/";

const Model& model(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Model>> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return *it->second;
  auto file = GgufFile::open(kModels + name);
  EXPECT_TRUE(file.ok()) << file.status().to_string();
  auto m = Model::load(std::shared_ptr<const GgufFile>(std::move(file).value()));
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  return *cache.emplace(name, std::move(m).value()).first->second;
}

std::vector<int32_t> random_tokens(size_t n, int64_t vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> t(n);
  for (auto& x : t) x = static_cast<int32_t>(rng() % static_cast<uint64_t>(vocab));
  return t;
}

std::vector<int32_t> all_rows(int64_t lo, int64_t hi) {
  std::vector<int32_t> r;
  for (int64_t i = lo; i < hi; ++i) r.push_back(static_cast<int32_t>(i));
  return r;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

const char* kTestModels[] = {"llada-f32.gguf", "dream-f32.gguf", "llada-q8_0.gguf", "llada-q4_0.gguf",
                             "llada256-q4_k.gguf"};

TEST(ForwardBatch, WholeCanvasEqualsModelForward) {
  kernels::ThreadPool pool(2);
  for (const char* name : kTestModels) {
    SCOPED_TRACE(name);
    const Model& m = model(name);
    const int64_t V = m.config().n_vocab;
    for (size_t len : {1u, 7u, 40u, 130u}) {
      auto tokens = random_tokens(len, V, len);
      auto rows = all_rows(0, static_cast<int64_t>(len));
      std::vector<float> want(len * V), got(len * V);
      ForwardState fs;
      ASSERT_TRUE(m.forward(pool, tokens, rows, want.data(), fs).ok());
      KvRows kv(m.config(), static_cast<int64_t>(len));
      SequencePass p;
      p.canvas = tokens;
      p.hi = p.kv_end = static_cast<int64_t>(len);
      p.kv = &kv;
      p.rows = rows;
      p.logits = got.data();
      BatchState bs;
      ASSERT_TRUE(forward_batch(m, pool, std::span<SequencePass>(&p, 1), bs).ok());
      EXPECT_TRUE(same_bits(want, got)) << "length " << len;
    }
  }
}

TEST(ForwardBatch, PackedSequencesEqualEachAlone) {
  kernels::ThreadPool pool(2);
  for (const char* name : kTestModels) {
    SCOPED_TRACE(name);
    const Model& m = model(name);
    const int64_t V = m.config().n_vocab;
    const size_t lens[] = {5, 23, 64, 1, 90};
    std::vector<std::vector<int32_t>> toks, rows;
    std::vector<std::vector<float>> alone, packed;
    std::vector<KvRows> kvs;
    for (size_t i = 0; i < 5; ++i) {
      toks.push_back(random_tokens(lens[i], V, 100 + i));
      rows.push_back(lens[i] > 1 ? std::vector<int32_t>{0, static_cast<int32_t>(lens[i] - 1)} : std::vector<int32_t>{0});
      alone.emplace_back(rows.back().size() * V);
      packed.emplace_back(rows.back().size() * V);
      kvs.emplace_back(m.config(), static_cast<int64_t>(lens[i]));
      ForwardState fs;
      ASSERT_TRUE(m.forward(pool, toks[i], rows[i], alone[i].data(), fs).ok());
    }
    std::vector<SequencePass> passes(5);
    for (size_t i = 0; i < 5; ++i) {
      passes[i].canvas = toks[i];
      passes[i].hi = passes[i].kv_end = static_cast<int64_t>(lens[i]);
      passes[i].kv = &kvs[i];
      passes[i].rows = rows[i];
      passes[i].logits = packed[i].data();
    }
    BatchState bs;
    ASSERT_TRUE(forward_batch(m, pool, passes, bs).ok());
    for (size_t i = 0; i < 5; ++i) EXPECT_TRUE(same_bits(alone[i], packed[i])) << "sequence " << i;
  }
}

TEST(ForwardBatch, BadPassIsReportedAndOthersRun) {
  kernels::ThreadPool pool(1);
  const Model& m = model("llada-f32.gguf");
  const int64_t V = m.config().n_vocab;
  std::vector<int32_t> good = random_tokens(10, V, 1), bad = good;
  bad[4] = static_cast<int32_t>(V + 3);
  std::vector<int32_t> rows = {2};
  std::vector<float> l0(V), l1(V);
  KvRows k0(m.config(), 10), k1(m.config(), 10);
  std::vector<SequencePass> passes(2);
  passes[0] = {bad, 0, 10, 10, &k0, rows, l0.data(), {}};
  passes[1] = {good, 0, 10, 10, &k1, rows, l1.data(), {}};
  BatchState bs;
  base::Status st = forward_batch(m, pool, passes, bs);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(passes[0].status.message().find("position 4"), std::string::npos) << passes[0].status.message();
  EXPECT_TRUE(passes[1].status.ok());
  const std::vector<int32_t> outside = {12};  // outside [lo, hi); named: rows is a span
  passes[1].rows = outside;
  std::span<SequencePass> one(&passes[1], 1);
  EXPECT_FALSE(forward_batch(m, pool, one, bs).ok());
}

// A pass over rows [lo, hi) against K/V cached from the same canvas reproduces the full pass:
// the prefix cache (hi = end) and the dual cache (hi < end) when nothing changed.
TEST(KvCache, PartialPassOverUnchangedCanvasEqualsFullPass) {
  kernels::ThreadPool pool(2);
  for (const char* name : kTestModels) {
    SCOPED_TRACE(name);
    const Model& m = model(name);
    const int64_t V = m.config().n_vocab, T = 96;
    auto tokens = random_tokens(T, V, 7);
    KvRows kv(m.config(), T);
    BatchState bs;
    for (auto [lo, hi] : {std::pair<int64_t, int64_t>{40, 96}, {40, 72}, {0, 10}, {95, 96}}) {
      auto rows = all_rows(lo, hi);
      std::vector<float> full(rows.size() * V), part(rows.size() * V);
      SequencePass p{tokens, 0, T, T, &kv, rows, full.data(), {}};
      ASSERT_TRUE(forward_batch(m, pool, std::span<SequencePass>(&p, 1), bs).ok());
      SequencePass q{tokens, lo, hi, T, &kv, rows, part.data(), {}};
      ASSERT_TRUE(forward_batch(m, pool, std::span<SequencePass>(&q, 1), bs).ok());
      EXPECT_TRUE(same_bits(full, part)) << "[" << lo << ", " << hi << ")";
    }
  }
}

SpecialTokens specials(const Model& m) {
  SpecialTokens s;
  s.mask = static_cast<int32_t>(m.config().n_vocab - 1);
  s.eos = 2;
  s.stop = {2};
  return s;
}

// With the cache off, a CachedForwarder (packed path) decodes exactly like the reference path.
TEST(KvCache, CacheOffThroughCachedForwarderEqualsReference) {
  kernels::ThreadPool pool(2);
  for (const char* name : {"llada-f32.gguf", "dream-f32.gguf"}) {
    SCOPED_TRACE(name);
    const Model& m = model(name);
    auto prompt = random_tokens(20, m.config().n_vocab - 1, 3);
    DecodeOptions o;
    o.gen_length = 32;
    o.steps = 16;
    o.block_length = 8;
    o.eos_stop = false;
    for (int variant = 0; variant < 3; ++variant) {
      if (variant == 1) o.threshold = 0.3;
      if (variant == 2) { o.threshold.reset(); o.cfg_scale = 0.5; o.temperature = 0.7; o.seed = 9; }
      ForwardState fs;
      DirectForwarder direct(m, pool, fs);
      DirectExecutor exec(m, pool);
      CachedForwarder cached(m, exec, CacheOptions{CacheMode::kNone, nullptr, {}});
      auto a = decode(m, direct, prompt, o, specials(m));
      auto b = decode(m, cached, prompt, o, specials(m));
      ASSERT_TRUE(a.ok() && b.ok());
      EXPECT_EQ(a->answer, b->answer) << "variant " << variant;
      EXPECT_EQ(b->forward_stats.rows_computed, b->forward_stats.rows_canvas);
    }
  }
}

// Prefix and dual caches compute fewer rows, refresh once per block, and still fill the answer.
TEST(KvCache, PrefixAndDualComputeFewerRows) {
  kernels::ThreadPool pool(2);
  const Model& m = model("llada-f32.gguf");
  auto prompt = random_tokens(60, m.config().n_vocab - 1, 4);
  DecodeOptions o;
  o.gen_length = 64;
  o.steps = 64;
  o.block_length = 16;
  o.eos_stop = false;
  int64_t prefix_rows = 0;
  for (CacheMode mode : {CacheMode::kPrefix, CacheMode::kDual}) {
    o.cache = mode;
    ForwardState fs;
    auto r = decode(m, pool, fs, prompt, o, specials(m));
    ASSERT_TRUE(r.ok()) << r.status().message();
    const ForwardStats& s = r->forward_stats;
    EXPECT_EQ(s.passes, 64);
    EXPECT_EQ(s.refreshes, 4);  // one per block
    EXPECT_LT(s.rows_computed, s.rows_canvas);
    for (int32_t t : r->answer) EXPECT_NE(t, specials(m).mask);
    if (mode == CacheMode::kPrefix) {
      // 4 refreshes of 124 rows, then per block b 15 steps of 124 - 60 - 16 b rows.
      EXPECT_EQ(s.rows_computed, 4 * 124 + 15 * (64 + 48 + 32 + 16));
      prefix_rows = s.rows_computed;
    } else {
      EXPECT_EQ(s.rows_computed, 4 * 124 + 60 * 16);  // the block only (the last block has no suffix)
      EXPECT_LT(s.rows_computed, prefix_rows);
    }
  }
}

TEST(PromptSegments, EndAfterEachTurnMarker) {
  const std::vector<int32_t> p = {5, 6, 9, 7, 9, 8, 8, 9, 4};
  const std::vector<int32_t> ends = {9};
  EXPECT_EQ(prompt_segment_ends(p, ends, PromptReuse::kTurns), (std::vector<int64_t>{3, 5, 8}));
  EXPECT_EQ(prompt_segment_ends(p, ends, PromptReuse::kSystem), (std::vector<int64_t>{3}));
  EXPECT_TRUE(prompt_segment_ends(p, ends, PromptReuse::kOff).empty());
  // A marker at the very end leaves the last row live.
  EXPECT_EQ(prompt_segment_ends(std::vector<int32_t>{1, 9}, ends, PromptReuse::kTurns), std::vector<int64_t>{});
}

std::shared_ptr<const PromptRows> rows_of(const ModelConfig& c, int64_t n) {
  auto r = std::make_shared<HostPromptRows>();
  r->kv.reserve(c, n);
  return r;
}

TEST(PromptCache, LongestPrefixLruAndBudget) {
  const ModelConfig& c = model("llada-f32.gguf").config();
  const uint64_t per_row = static_cast<uint64_t>(c.n_layer * 2 * c.n_head_kv * c.head_dim) * sizeof(float);
  const std::vector<int32_t> toks = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const uint64_t e2 = 2 * per_row + 2 * sizeof(int32_t), e4 = 4 * per_row + 4 * sizeof(int32_t);
  PromptCache cache(e2 + e4);
  const std::vector<int64_t> ends = {2, 4, 6};
  EXPECT_EQ(cache.find_longest(toks, ends).first, -1);
  cache.insert(std::span(toks).first(2), rows_of(c, 2));
  cache.insert(std::span(toks).first(4), rows_of(c, 4));
  auto [i, rows] = cache.find_longest(toks, ends);
  EXPECT_EQ(i, 1);
  ASSERT_NE(rows, nullptr);
  EXPECT_EQ(static_cast<const HostPromptRows&>(*rows).kv.capacity(), 4);
  PromptCacheStats s = cache.stats();
  EXPECT_EQ(s.hits, 1);
  EXPECT_EQ(s.misses, 1);
  EXPECT_EQ(s.entries, 2);
  EXPECT_EQ(s.bytes, e2 + e4);
  EXPECT_EQ(s.tokens_reused, 4);
  // Touch the 2-token entry, then insert another 2-token key: the 4-token entry is the LRU one.
  const std::vector<int32_t> other = {7, 7, 7};
  EXPECT_EQ(cache.find_longest(toks, std::vector<int64_t>{2}).first, 0);
  cache.insert(std::span(other).first(2), rows_of(c, 2));
  s = cache.stats();
  EXPECT_EQ(s.evictions, 1);
  EXPECT_EQ(s.entries, 2);
  EXPECT_LE(s.bytes, s.budget_bytes);
  EXPECT_EQ(cache.find_longest(toks, ends).first, 0);  // only the 2-token prefix is left
  // An entry over the whole budget is not kept; shrinking the budget evicts.
  cache.insert(std::span(toks).first(7), rows_of(c, 7));
  EXPECT_EQ(cache.find_longest(toks, std::vector<int64_t>{7}).first, -1);
  EXPECT_EQ(cache.stats().entries, 2);
  cache.set_budget(e2);
  EXPECT_EQ(cache.stats().entries, 1);
  // Key spaces (host rows, each device's rows) never see each other's entries.
  EXPECT_EQ(cache.find_longest(toks, std::vector<int64_t>{2}, "cuda0").first, -1);
  cache.insert(std::span(toks).first(2), rows_of(c, 2), "cuda0");
  EXPECT_EQ(cache.find_longest(toks, std::vector<int64_t>{2}, "cuda0").first, 0);
  EXPECT_EQ(cache.find_longest(toks, std::vector<int64_t>{2}).first, -1);  // evicted from the host space
  EXPECT_EQ(cache.stats().entries, 1);
  cache.set_budget(0);
  EXPECT_EQ(cache.stats().entries, 0);
  EXPECT_EQ(cache.stats().bytes, 0u);
}

// Prompt reuse through the Engine: the second request hits the cache and gives the same answer
// as the first (a miss) and as a fresh engine.
TEST(PromptReuse, HitEqualsMiss) {
  auto open = [] {
    auto e = Engine::open({kModels + "llada-f32.gguf", 2, {}});
    EXPECT_TRUE(e.ok()) << e.status().message();
    return std::move(e).value();
  };
  auto a = open(), b = open();
  GenerateRequest req;
  req.raw_prompt = "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nhello there<|im_end|>\n"
                   "<|im_start|>assistant\n";
  req.decode.gen_length = 24;
  req.decode.steps = 24;
  req.decode.block_length = 8;
  req.decode.eos_stop = false;
  for (CacheMode mode : {CacheMode::kNone, CacheMode::kPrefix, CacheMode::kDual}) {
    SCOPED_TRACE(cache_mode_name(mode));
    req.decode.cache = mode;
    req.decode.prompt_reuse = PromptReuse::kTurns;
    auto first = a->generate(req);
    auto second = a->generate(req);
    auto fresh = b->generate(req);
    ASSERT_TRUE(first.ok() && second.ok() && fresh.ok());
    EXPECT_EQ(first->output_tokens, second->output_tokens);
    EXPECT_EQ(first->output_tokens, fresh->output_tokens);
    EXPECT_GT(second->forward_stats.prompt_rows_reused, 0);
    b->prompt_cache().clear();
  }
  PromptCacheStats s = a->prompt_cache_stats();
  EXPECT_EQ(s.misses, 1);
  EXPECT_EQ(s.hits, 5);
  EXPECT_GT(s.tokens_reused, 0);
}

}  // namespace
}  // namespace dloop::engine
