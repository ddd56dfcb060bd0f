// The CUDA kernels of the forward pass and of the decoding step (kernels/cuda/*.cu, one family
// per file). Every pointer is device memory unless its comment says otherwise; every function
// enqueues its work on `stream` and returns at once, with a Status for an invalid shape (checked
// before launch: kInvalidArgument naming the argument) or a failed launch (naming the kernel).
// The numerics follow the CPU reference (kernels::ref, reference.h): f32 arithmetic with the
// same operation order where it is cheap, double for RoPE angles and the decoding softmax sums.
// Thread-safety: the functions hold no state; callers serialize work per stream.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "dloop/base/status.h"
#include "dloop/kernels/attention.h"
#include "dloop/kernels/ops.h"

namespace dloop::kernels::cuda {

// Storage types of device matrices and of the activations fed to cuBLAS.
enum class StoreType { kF32, kF16, kBF16 };
const char* store_type_name(StoreType t);
int store_type_bytes(StoreType t);

// y[r] = x[r] / sqrt(mean(x[r]^2) + eps) * weight for n_rows rows of dim. y may equal x.
base::Status rms_norm_f32(const float* x, const float* weight, float* y, int64_t n_rows, int64_t dim, float eps,
                          cudaStream_t stream);
// y[i] = rms_norm(x[rows[i]]) for i < n_rows; rows is a device array of row indices into x.
base::Status rms_norm_rows_f32(const float* x, const int32_t* rows, int64_t n_rows, const float* weight, float* y,
                               int64_t dim, float eps, cudaStream_t stream);

// In place on x [n_tokens x n_heads*head_dim]; positions [n_tokens] (device). Angles in double.
base::Status rope_f32(float* x, int64_t n_tokens, int64_t n_heads, int64_t head_dim, const int32_t* positions,
                      float theta, RopeType type, cudaStream_t stream);

// Bidirectional attention, shapes and layouts as kernels::attention_f32 (attention.h). Tiled:
// one block per (16 queries, head) streams the keys in tiles of 32 through shared memory with an
// online softmax, so no score matrix is stored. head_dim <= 128.
base::Status attention_f32(const AttentionShape& s, const float* q, const float* k, const float* v, float* out,
                           cudaStream_t stream);

// out[i] = gate[i] / (1 + exp(-gate[i])) * up[i]; out may equal gate or up.
base::Status swiglu_f32(const float* gate, const float* up, float* out, int64_t n, cudaStream_t stream);
// y[i] += x[i].
base::Status add_f32(float* y, const float* x, int64_t n, cudaStream_t stream);
// y[r][j] += bias[j].
base::Status add_bias_f32(float* y, const float* bias, int64_t n_rows, int64_t dim, cudaStream_t stream);

// y[i] = x[i] rounded to nearest even in `type` (a copy for kF32). y must not overlap x.
base::Status convert_f32(const float* x, void* y, int64_t n, StoreType type, cudaStream_t stream);

// x[t] = f32(table[tokens[t]]) for t < n_tokens; table [n_vocab x dim] in `type`. Token ids
// outside [0, n_vocab) write zeros (callers validate ids on the host first).
base::Status embed_rows(const void* table, StoreType type, int64_t n_vocab, int64_t dim, const int32_t* tokens,
                        int64_t n_tokens, float* x, cudaStream_t stream);

// dst [rows x cols] in dst_type = the values of src [rows x cols] stored as ggml type `ggml_type`
// (F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K; row_bytes(type, cols) bytes a row). cols must be a
// multiple of the block size. Values are decoded exactly as ggml does, then rounded once.
base::Status dequantize(uint32_t ggml_type, const void* src, int64_t rows, int64_t cols, void* dst,
                        StoreType dst_type, cudaStream_t stream);

// The decoding step on the device: what a masked position needs, in 16 bytes.
struct TokenChoice {
  int32_t token;     // the chosen token, `exclude` never chosen
  float confidence;  // softmax probability of `token`
  float margin;      // the highest probability minus the second highest
  float entropy;     // -sum p ln p over the vocabulary, in nats
};
// How the token is chosen. temperature 0: argmax, lowest id on ties. temperature > 0: float64
// Gumbel-max, score = logit / T - log(-log u) with u the (r * draws_per_row + v + 1)-th draw of
// a SplitMix64 generator in state rng_state for row r and token v (engine/decoding/rng.h); a u
// of 0 counts as 2^-53.
struct ChoiceParams {
  int32_t exclude = -1;  // a token id never chosen and left out of the softmax (the mask), or -1
  double temperature = 0;
  uint64_t rng_state = 0;
  int64_t draws_per_row = 0;
};
// out[r] for each of n_rows rows of logits [n_rows x n_vocab]. Sums in double.
base::Status choose_tokens(const float* logits, int64_t n_rows, int64_t n_vocab, const ChoiceParams& params,
                           TokenChoice* out, cudaStream_t stream);

// Device count, 0 when the driver reports none or no driver is installed (never an error).
int device_count();

}  // namespace dloop::kernels::cuda
