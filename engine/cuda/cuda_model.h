// Internal to dloop_cuda: the uploaded weights (CudaModel), device K/V rows (DeviceKv) and the
// forward over canvas rows [lo, hi) attending to K/V rows [0, kv_end) of one or more sequences,
// which is forward_batch (forward_batch.h) with everything resident on the GPU:
// per layer RMSNorm, Q/K/V by cuBLAS (K and V written straight into the K/V rows), biases,
// RoPE, tiled attention, output projection, residual add, RMSNorm, gate/up, SwiGLU, down,
// residual add; then the final norm and LM head for the requested rows only. The rows of all
// sequences of a batch are packed into every matrix product (the weights are read once per pass
// for all of them); K and V of a batch are projected into a packed buffer and copied to each
// sequence's rows; attention and the token choice run per sequence.
// Weights keep their precision when it is F32, F16 or BF16; Q8_0/Q4_0/Q4_K/Q6_K are dequantized
// to F16 at load on the device (11 significant bits hold an int8 times an f16 scale closely, as
// llama.cpp's cuBLAS path does). Activations are f32; a matmul input is rounded to its weight's
// type just before cuBLAS, which accumulates in f32 (CUBLAS_COMPUTE_32F; f32 weights get a true
// f32 GEMM, no TF32).
// With CUDA graphs on (set_graphs), the device work of a pass (everything after the inputs are
// copied in) is captured once per pass shape (rows computed, K/V rows and buffers used) and
// replayed; a step of a block repeats its shape, so one capture serves the whole block. Batches
// of several sequences are launched directly (their shapes rarely repeat).
// Thread-safety: run_passes() takes the model's mutex (one stream, one pass at a time).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "dloop/engine/device.h"
#include "dloop/engine/model.h"
#include "dloop/engine/prompt_cache.h"
#include "dloop/kernels/cuda/kernels.h"

namespace dloop::engine::cuda {

using kernels::cuda::StoreType;

// A dense device matrix [rows x cols] in `type` (row-major, as ggml's layout).
struct DeviceMatrix {
  const void* data = nullptr;
  StoreType type = StoreType::kF32;
  int64_t rows = 0;
  int64_t cols = 0;
};

struct DeviceLayer {
  const float* attn_norm = nullptr;  // [n_embd]
  DeviceMatrix wq, wk, wv, wo;
  const float* bq = nullptr;         // [q_dim] or null
  const float* bk = nullptr;         // [kv_dim] or null
  const float* bv = nullptr;
  const float* ffn_norm = nullptr;   // [n_embd]
  DeviceMatrix w_gate, w_up, w_down;
};

// Keys and values of canvas positions [0, capacity) for every layer, in device memory.
class DeviceKv {
 public:
  DeviceKv() = default;
  ~DeviceKv();
  DeviceKv(const DeviceKv&) = delete;
  DeviceKv& operator=(const DeviceKv&) = delete;
  // Grows to at least `capacity` rows keeping the rows stored (device-to-device copies).
  base::Status reserve(int64_t n_layer, int64_t kv_dim, int64_t capacity, cudaStream_t stream);
  int64_t capacity() const { return capacity_; }
  float* k(int64_t layer) const { return k_ + layer * capacity_ * kv_dim_; }
  float* v(int64_t layer) const { return v_ + layer * capacity_ * kv_dim_; }
  uint64_t bytes() const { return static_cast<uint64_t>(2 * n_layer_ * capacity_ * kv_dim_) * sizeof(float); }

 private:
  int64_t n_layer_ = 0, kv_dim_ = 0, capacity_ = 0;
  float* k_ = nullptr;  // [n_layer][capacity x kv_dim] f32, after RoPE
  float* v_ = nullptr;  // [n_layer][capacity x kv_dim] f32
};

// One sequence's pass: compute rows [lo, hi) of `canvas`, attend to K/V rows [0, kv_end) of
// `kv`, and return logits (host [rows x n_vocab]) or choices (host [rows]) of the listed rows.
struct CudaPass {
  std::span<const int32_t> canvas;
  int64_t lo = 0, hi = 0, kv_end = 0;
  DeviceKv* kv = nullptr;
  std::span<const int32_t> rows;  // canvas rows in [lo, hi)
  float* logits = nullptr;        // host, or null
  TokenChoice* choices = nullptr; // host, or null
  ChoiceOptions choice;            // for choices
  base::Status status;             // set by run_passes: this pass's error, if any
};

// A PromptCache entry in device memory (prompt_cache.h), under CudaModel::key_space().
struct DevicePromptRows final : PromptRows {
  DeviceKv kv;
  uint64_t bytes() const override { return kv.bytes(); }
};

class CudaModel final : public DeviceModel {
 public:
  ~CudaModel() override;
  static base::Result<std::unique_ptr<CudaModel>> upload(const Model& model);

  using DeviceModel::make_forwarder;
  std::unique_ptr<DeviceForwarder> make_forwarder(const DeviceForwarderOptions& options) override;
  std::unique_ptr<DeviceBatch> make_batch(int members) override;
  std::string description() const override { return description_; }
  uint64_t weight_bytes() const override { return weight_bytes_; }
  uint64_t pass_weight_bytes() const override { return weight_bytes_ - gathered_only_bytes_; }
  base::Result<double> copy_bandwidth(uint64_t bytes) override;

  const ModelConfig& config() const { return model_.config(); }
  cudaStream_t stream() const { return stream_; }
  // Runs the passes as one batch. A pass whose arguments are invalid (token outside the
  // vocabulary, rows outside [lo, hi), bad ranges) gets its own status and is left out; the
  // others still run. Returns the first pass error, for callers with one pass.
  base::Status run_passes(std::span<CudaPass* const> passes);
  base::Status run_pass(CudaPass& pass) {
    CudaPass* one = &pass;
    return run_passes(std::span<CudaPass* const>(&one, 1));
  }
  // DeviceKv::reserve under the model's lock (the stream may be capturing a graph meanwhile).
  base::Status reserve_kv(DeviceKv& kv, int64_t capacity);
  // Copies K/V rows [0, n) of every layer from src to dst (both reserved to at least n rows) and
  // waits for the copy.
  base::Status copy_kv(DeviceKv& dst, const DeviceKv& src, int64_t n);
  // The PromptCache key space of this device's rows ("cuda:0").
  const std::string& key_space() const { return key_space_; }
  void set_graphs(bool on) override;
  int64_t graphs_captured() const { return graphs_captured_; }

 private:
  explicit CudaModel(const Model& model) : model_(model) {}
  base::Status init();
  base::Status upload_vector(std::span<const float> v, const float** out);
  base::Status upload_matrix(const kernels::WeightView& w, DeviceMatrix* out);
  base::Status alloc(size_t bytes, void** out);
  base::Status grow(int64_t n_rows, int64_t n_logit_rows);
  base::Status gemm(const float* x, int64_t m, const DeviceMatrix& w, float* y);
  // Checks a pass's ranges, tokens and rows against the model.
  base::Status validate(const CudaPass& p) const;
  base::Status run_valid(const std::vector<CudaPass*>& passes);
  // One sequence of the pass being enqueued: its packed rows [off, off + n), logits rows
  // [out, out + n_out).
  struct Seq {
    const CudaPass* p = nullptr;
    int64_t off = 0, n = 0, out = 0, n_out = 0;
  };
  base::Status layer(const DeviceLayer& l, int64_t li, int64_t n);
  // Enqueues the device work of the pass over seqs_ whose inputs are in tokens_, positions_, rows_.
  base::Status enqueue(int64_t n, int64_t n_out);
  base::Status launch_graph(const CudaPass& p, int64_t n, int64_t n_out);

  const Model& model_;
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  std::string description_;
  std::string key_space_;
  uint64_t weight_bytes_ = 0;
  uint64_t gathered_only_bytes_ = 0;  // an untied token_embd: rows gathered, never read whole
  std::vector<void*> allocations_;  // weights, freed with the model
  DeviceMatrix token_embd_, output_;
  const float* output_norm_ = nullptr;
  std::vector<DeviceLayer> layers_;
  std::mutex mutex_;

  // Workspace for passes of up to cap_rows_ rows and cap_logit_rows_ logits rows (grown on demand).
  struct Buffer {
    void* p = nullptr;
    size_t bytes = 0;
  };
  base::Status ensure(Buffer& b, size_t bytes);
  int64_t cap_rows_ = 0;
  int64_t cap_logit_rows_ = 0;
  Buffer x_, xn_, q_, attn_, proj_, gate_, up_;  // f32 [N x dim] as ForwardState's
  Buffer k_packed_, v_packed_;                   // f32 [N x kv_dim]: a batch's K/V before the copy
  Buffer lowp_;                                  // [N x max(dim)] a matmul input in f16/bf16
  Buffer tokens_, positions_, rows_;             // int32 [N], [N], [R]
  Buffer rows_x_, logits_, choices_;             // f32 [R x n_embd], f32 [R x n_vocab], [R] choices
  std::vector<int32_t> host_tokens_, host_positions_, host_rows_;
  std::vector<Seq> seqs_;
  uint64_t buffers_generation_ = 0;  // bumped whenever a workspace buffer is reallocated

  // Captured passes, keyed by everything a replay depends on besides the input data.
  struct GraphKey {
    const float* k = nullptr;
    int64_t kv_capacity = 0, lo = 0, hi = 0, kv_end = 0, n_out = 0;
    uint64_t buffers = 0;
    bool operator==(const GraphKey&) const = default;
  };
  struct Graph {
    GraphKey key;
    cudaGraphExec_t exec = nullptr;
  };
  static constexpr size_t kMaxGraphs = 8;
  bool graphs_ = false;
  std::vector<Graph> graph_cache_;  // most recently used last
  int64_t graphs_captured_ = 0;
  void* cublas_workspace_ = nullptr;  // fixed, so captured cuBLAS calls never allocate
};

}  // namespace dloop::engine::cuda
