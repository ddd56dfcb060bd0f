// CudaModel: weight upload, workspace, cuBLAS matrix products and the forward pass over a batch
// of CudaPasses (see cuda_model.h). Every CUDA and cuBLAS call is checked and its failure returned as
// a Status naming the call. Thread-safety: run_pass() holds the model's mutex.
#include "cuda_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "dloop/kernels/cuda/check.h"
#include "dloop/kernels/dtype.h"

namespace dloop::engine::cuda {

namespace kc = kernels::cuda;

DeviceKv::~DeviceKv() {
  cudaFree(k_);
  cudaFree(v_);
}

base::Status DeviceKv::reserve(int64_t n_layer, int64_t kv_dim, int64_t capacity, cudaStream_t stream) {
  if (capacity <= capacity_ && n_layer == n_layer_ && kv_dim == kv_dim_) return base::Status();
  const bool keep = n_layer == n_layer_ && kv_dim == kv_dim_ && capacity_ > 0;
  const int64_t cap = std::max(capacity, keep ? capacity_ : int64_t{0});
  const size_t bytes = static_cast<size_t>(n_layer * cap * kv_dim) * sizeof(float);
  float* k = nullptr;
  float* v = nullptr;
  DLOOP_CUDA_RETURN(cudaMalloc(reinterpret_cast<void**>(&k), bytes));
  if (cudaError_t e = cudaMalloc(reinterpret_cast<void**>(&v), bytes); e != cudaSuccess) {
    cudaFree(k);
    return kc::cuda_status(e, "cudaMalloc(K/V rows)");
  }
  if (keep) {
    const size_t row_bytes = static_cast<size_t>(capacity_ * kv_dim) * sizeof(float);
    for (int64_t l = 0; l < n_layer; ++l) {
      DLOOP_CUDA_RETURN(cudaMemcpyAsync(k + l * cap * kv_dim, k_ + l * capacity_ * kv_dim, row_bytes,
                                        cudaMemcpyDeviceToDevice, stream));
      DLOOP_CUDA_RETURN(cudaMemcpyAsync(v + l * cap * kv_dim, v_ + l * capacity_ * kv_dim, row_bytes,
                                        cudaMemcpyDeviceToDevice, stream));
    }
    DLOOP_CUDA_RETURN(cudaStreamSynchronize(stream));
  }
  cudaFree(k_);
  cudaFree(v_);
  k_ = k;
  v_ = v;
  n_layer_ = n_layer;
  kv_dim_ = kv_dim;
  capacity_ = cap;
  return base::Status();
}

CudaModel::~CudaModel() {
  if (stream_ != nullptr) cudaStreamSynchronize(stream_);
  for (Buffer* b : {&x_, &xn_, &q_, &attn_, &proj_, &gate_, &up_, &k_packed_, &v_packed_, &lowp_, &tokens_,
                    &positions_, &rows_, &rows_x_, &logits_, &choices_}) {
    cudaFree(b->p);
  }
  for (Graph& g : graph_cache_) cudaGraphExecDestroy(g.exec);
  for (void* p : allocations_) cudaFree(p);
  cudaFree(cublas_workspace_);
  if (cublas_ != nullptr) cublasDestroy(cublas_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

base::Status CudaModel::alloc(size_t bytes, void** out) {
  const cudaError_t e = cudaMalloc(out, bytes);
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    return base::resource_exhausted("CUDA: out of device memory uploading the weights (" +
                                    std::to_string(weight_bytes_ + bytes) + " bytes needed so far)");
  }
  DLOOP_RETURN_IF_ERROR(kc::cuda_status(e, "cudaMalloc(weights)"));
  allocations_.push_back(*out);
  weight_bytes_ += bytes;
  return base::Status();
}

base::Status CudaModel::upload_vector(std::span<const float> v, const float** out) {
  if (v.empty()) {
    *out = nullptr;
    return base::Status();
  }
  void* p = nullptr;
  DLOOP_RETURN_IF_ERROR(alloc(v.size_bytes(), &p));
  DLOOP_CUDA_RETURN(cudaMemcpy(p, v.data(), v.size_bytes(), cudaMemcpyHostToDevice));
  *out = static_cast<const float*>(p);
  return base::Status();
}

base::Status CudaModel::upload_matrix(const kernels::WeightView& w, DeviceMatrix* out) {
  using kernels::DType;
  const int64_t src_bytes = w.rows * kernels::row_bytes(w.type, w.cols);
  StoreType t = StoreType::kF16;  // the quantized types (see cuda_model.h)
  if (w.type == DType::kF32) t = StoreType::kF32;
  if (w.type == DType::kBF16) t = StoreType::kBF16;
  const size_t bytes = static_cast<size_t>(w.rows * w.cols) * static_cast<size_t>(kc::store_type_bytes(t));
  void* p = nullptr;
  DLOOP_RETURN_IF_ERROR(alloc(bytes, &p));
  if (w.type == DType::kF32 || w.type == DType::kF16 || w.type == DType::kBF16) {
    DLOOP_CUDA_RETURN(cudaMemcpy(p, w.data, static_cast<size_t>(src_bytes), cudaMemcpyHostToDevice));
  } else {
    void* raw = nullptr;  // the blocks as stored, freed once decoded
    DLOOP_CUDA_RETURN(cudaMalloc(&raw, static_cast<size_t>(src_bytes)));
    const auto decode = [&]() -> base::Status {
      DLOOP_CUDA_RETURN(cudaMemcpy(raw, w.data, static_cast<size_t>(src_bytes), cudaMemcpyHostToDevice));
      DLOOP_RETURN_IF_ERROR(kc::dequantize(static_cast<uint32_t>(w.type), raw, w.rows, w.cols, p, t, stream_));
      DLOOP_CUDA_RETURN(cudaStreamSynchronize(stream_));
      return base::Status();
    };
    const base::Status s = decode();
    cudaFree(raw);
    DLOOP_RETURN_IF_ERROR(s);
  }
  *out = DeviceMatrix{p, t, w.rows, w.cols};
  return base::Status();
}

base::Status CudaModel::init() {
  const ModelConfig& c = model_.config();
  if (c.head_dim > 128) {
    return base::invalid_argument("CUDA backend: head_dim " + std::to_string(c.head_dim) +
                                  " is not supported (the attention kernel handles up to 128)");
  }
  DLOOP_CUDA_RETURN(cudaSetDevice(device_));
  cudaDeviceProp prop{};
  DLOOP_CUDA_RETURN(cudaGetDeviceProperties(&prop, device_));
  description_ = std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ", " +
                 std::to_string(prop.totalGlobalMem >> 30) + " GiB)";
  key_space_ = "cuda:" + std::to_string(device_);
  DLOOP_CUDA_RETURN(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  DLOOP_CUBLAS_RETURN(cublasCreate(&cublas_));
  DLOOP_CUBLAS_RETURN(cublasSetStream(cublas_, stream_));
  constexpr size_t kCublasWorkspace = size_t{32} << 20;
  DLOOP_CUDA_RETURN(cudaMalloc(&cublas_workspace_, kCublasWorkspace));
  DLOOP_CUBLAS_RETURN(cublasSetWorkspace(cublas_, cublas_workspace_, kCublasWorkspace));
  const ModelWeights& w = model_.weights();
  DLOOP_RETURN_IF_ERROR(upload_matrix(w.token_embd, &token_embd_));
  if (w.output.data == w.token_embd.data && w.output.type == w.token_embd.type) {
    output_ = token_embd_;  // tied
  } else {
    gathered_only_bytes_ = weight_bytes_;  // only token_embd is uploaded so far
    DLOOP_RETURN_IF_ERROR(upload_matrix(w.output, &output_));
  }
  DLOOP_RETURN_IF_ERROR(upload_vector(w.output_norm, &output_norm_));
  for (const LayerWeights& lw : w.layers) {
    DeviceLayer d;
    DLOOP_RETURN_IF_ERROR(upload_vector(lw.attn_norm, &d.attn_norm));
    DLOOP_RETURN_IF_ERROR(upload_vector(lw.ffn_norm, &d.ffn_norm));
    DLOOP_RETURN_IF_ERROR(upload_vector(lw.bq, &d.bq));
    DLOOP_RETURN_IF_ERROR(upload_vector(lw.bk, &d.bk));
    DLOOP_RETURN_IF_ERROR(upload_vector(lw.bv, &d.bv));
    DLOOP_RETURN_IF_ERROR(upload_matrix(lw.wq, &d.wq));
    DLOOP_RETURN_IF_ERROR(upload_matrix(lw.wk, &d.wk));
    DLOOP_RETURN_IF_ERROR(upload_matrix(lw.wv, &d.wv));
    DLOOP_RETURN_IF_ERROR(upload_matrix(lw.wo, &d.wo));
    DLOOP_RETURN_IF_ERROR(upload_matrix(lw.w_gate, &d.w_gate));
    DLOOP_RETURN_IF_ERROR(upload_matrix(lw.w_up, &d.w_up));
    DLOOP_RETURN_IF_ERROR(upload_matrix(lw.w_down, &d.w_down));
    layers_.push_back(d);
  }
  return kc::cuda_status(cudaDeviceSynchronize(), "cudaDeviceSynchronize(upload)");
}

base::Result<std::unique_ptr<CudaModel>> CudaModel::upload(const Model& model) {
  if (kc::device_count() == 0) return base::unavailable("no CUDA device found");
  std::unique_ptr<CudaModel> m(new CudaModel(model));
  DLOOP_RETURN_IF_ERROR(m->init());
  return std::move(m);
}

base::Result<double> CudaModel::copy_bandwidth(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  DLOOP_CUDA_RETURN(cudaSetDevice(device_));
  void* a = nullptr;
  void* b = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  auto run = [&]() -> base::Result<double> {
    DLOOP_CUDA_RETURN(cudaMalloc(&a, bytes));
    DLOOP_CUDA_RETURN(cudaMalloc(&b, bytes));
    DLOOP_CUDA_RETURN(cudaMemsetAsync(a, 1, bytes, stream_));
    DLOOP_CUDA_RETURN(cudaEventCreate(&start));
    DLOOP_CUDA_RETURN(cudaEventCreate(&stop));
    DLOOP_CUDA_RETURN(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, stream_));  // warm-up
    constexpr int kReps = 10;
    DLOOP_CUDA_RETURN(cudaEventRecord(start, stream_));
    for (int i = 0; i < kReps; ++i) {
      DLOOP_CUDA_RETURN(cudaMemcpyAsync(i % 2 ? a : b, i % 2 ? b : a, bytes, cudaMemcpyDeviceToDevice, stream_));
    }
    DLOOP_CUDA_RETURN(cudaEventRecord(stop, stream_));
    DLOOP_CUDA_RETURN(cudaEventSynchronize(stop));
    float ms = 0;
    DLOOP_CUDA_RETURN(cudaEventElapsedTime(&ms, start, stop));
    if (ms <= 0) return base::internal_error("copy bandwidth: no time measured");
    return 2.0 * static_cast<double>(bytes) * kReps / (static_cast<double>(ms) * 1e-3);
  };
  base::Result<double> r = run();
  cudaFree(a);
  cudaFree(b);
  if (start) cudaEventDestroy(start);
  if (stop) cudaEventDestroy(stop);
  return r;
}

base::Status CudaModel::ensure(Buffer& b, size_t bytes) {
  if (bytes <= b.bytes) return base::Status();
  cudaFree(b.p);
  b.p = nullptr;
  b.bytes = 0;
  DLOOP_CUDA_RETURN(cudaMalloc(&b.p, bytes));
  b.bytes = bytes;
  ++buffers_generation_;  // captured graphs hold the old pointers
  return base::Status();
}

base::Status CudaModel::grow(int64_t n, int64_t r) {
  const ModelConfig& c = model_.config();
  const auto f = [](int64_t a, int64_t b) { return static_cast<size_t>(a * b) * sizeof(float); };
  if (n > cap_rows_) {
    const int64_t q_dim = c.n_head * c.head_dim;
    DLOOP_RETURN_IF_ERROR(ensure(x_, f(n, c.n_embd)));
    DLOOP_RETURN_IF_ERROR(ensure(xn_, f(n, c.n_embd)));
    DLOOP_RETURN_IF_ERROR(ensure(q_, f(n, q_dim)));
    DLOOP_RETURN_IF_ERROR(ensure(attn_, f(n, q_dim)));
    DLOOP_RETURN_IF_ERROR(ensure(proj_, f(n, c.n_embd)));
    DLOOP_RETURN_IF_ERROR(ensure(gate_, f(n, c.n_ff)));
    DLOOP_RETURN_IF_ERROR(ensure(up_, f(n, c.n_ff)));
    DLOOP_RETURN_IF_ERROR(ensure(k_packed_, f(n, c.n_head_kv * c.head_dim)));
    DLOOP_RETURN_IF_ERROR(ensure(v_packed_, f(n, c.n_head_kv * c.head_dim)));
    DLOOP_RETURN_IF_ERROR(ensure(tokens_, static_cast<size_t>(n) * sizeof(int32_t)));
    DLOOP_RETURN_IF_ERROR(ensure(positions_, static_cast<size_t>(n) * sizeof(int32_t)));
    cap_rows_ = n;
  }
  const int64_t widest = std::max({c.n_embd, c.n_head * c.head_dim, c.n_ff});
  // The low-precision copy of a matmul input: the canvas rows, or the logits rows for the head.
  DLOOP_RETURN_IF_ERROR(ensure(lowp_, static_cast<size_t>(std::max(n, r) * widest) * 2));
  if (r > cap_logit_rows_) {
    DLOOP_RETURN_IF_ERROR(ensure(rows_, static_cast<size_t>(r) * sizeof(int32_t)));
    DLOOP_RETURN_IF_ERROR(ensure(rows_x_, f(r, c.n_embd)));
    DLOOP_RETURN_IF_ERROR(ensure(logits_, f(r, c.n_vocab)));
    DLOOP_RETURN_IF_ERROR(ensure(choices_, static_cast<size_t>(r) * sizeof(kc::TokenChoice)));
    cap_logit_rows_ = r;
  }
  return base::Status();
}

// y[m x w.rows] = x[m x w.cols] * w^T (row-major). In cuBLAS's column-major terms:
// y^T [w.rows x m] = W [cols x rows]^T * x^T [cols x m].
base::Status CudaModel::gemm(const float* x, int64_t m, const DeviceMatrix& w, float* y) {
  if (m <= 0 || w.rows > 0x7fffffff || w.cols > 0x7fffffff || m > 0x7fffffff) {
    return base::invalid_argument("CUDA gemm: shape out of range");
  }
  const void* a = x;
  cudaDataType_t t = CUDA_R_32F;
  if (w.type != StoreType::kF32) {
    DLOOP_RETURN_IF_ERROR(kc::convert_f32(x, lowp_.p, m * w.cols, w.type, stream_));
    a = lowp_.p;
    t = w.type == StoreType::kF16 ? CUDA_R_16F : CUDA_R_16BF;
  }
  const float alpha = 1.0f, beta = 0.0f;
  const int rows = static_cast<int>(w.rows), cols = static_cast<int>(w.cols);
  DLOOP_CUBLAS_RETURN(cublasGemmEx(cublas_, CUBLAS_OP_T, CUBLAS_OP_N, rows, static_cast<int>(m), cols, &alpha, w.data,
                                   t, cols, a, t, cols, &beta, y, CUDA_R_32F, rows, CUBLAS_COMPUTE_32F,
                                   CUBLAS_GEMM_DEFAULT));
  return base::Status();
}

base::Status CudaModel::layer(const DeviceLayer& l, int64_t li, int64_t n) {
  const ModelConfig& c = model_.config();
  const int64_t E = c.n_embd, F = c.n_ff, kv_dim = c.n_head_kv * c.head_dim, q_dim = c.n_head * c.head_dim;
  auto* x = static_cast<float*>(x_.p);
  auto* xn = static_cast<float*>(xn_.p);
  auto* q = static_cast<float*>(q_.p);
  auto* attn = static_cast<float*>(attn_.p);
  auto* proj = static_cast<float*>(proj_.p);
  auto* gate = static_cast<float*>(gate_.p);
  auto* up = static_cast<float*>(up_.p);
  const auto* pos = static_cast<const int32_t*>(positions_.p);
  // One sequence writes its K/V rows in place; a batch projects into packed rows, then copies.
  const bool packed = seqs_.size() > 1;
  const CudaPass& first = *seqs_.front().p;
  float* k_rows = packed ? static_cast<float*>(k_packed_.p) : first.kv->k(li) + first.lo * kv_dim;
  float* v_rows = packed ? static_cast<float*>(v_packed_.p) : first.kv->v(li) + first.lo * kv_dim;
  cudaStream_t s = stream_;
  DLOOP_RETURN_IF_ERROR(kc::rms_norm_f32(x, l.attn_norm, xn, n, E, c.rms_eps, s));
  DLOOP_RETURN_IF_ERROR(gemm(xn, n, l.wq, q));
  DLOOP_RETURN_IF_ERROR(gemm(xn, n, l.wk, k_rows));
  DLOOP_RETURN_IF_ERROR(gemm(xn, n, l.wv, v_rows));
  if (l.bq != nullptr) {
    DLOOP_RETURN_IF_ERROR(kc::add_bias_f32(q, l.bq, n, q_dim, s));
    DLOOP_RETURN_IF_ERROR(kc::add_bias_f32(k_rows, l.bk, n, kv_dim, s));
    DLOOP_RETURN_IF_ERROR(kc::add_bias_f32(v_rows, l.bv, n, kv_dim, s));
  }
  DLOOP_RETURN_IF_ERROR(kc::rope_f32(q, n, c.n_head, c.head_dim, pos, c.rope_theta, c.rope_type, s));
  DLOOP_RETURN_IF_ERROR(kc::rope_f32(k_rows, n, c.n_head_kv, c.head_dim, pos, c.rope_theta, c.rope_type, s));
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  for (const Seq& q_seq : seqs_) {
    const CudaPass& p = *q_seq.p;
    if (packed) {
      const size_t bytes = static_cast<size_t>(q_seq.n * kv_dim) * sizeof(float);
      DLOOP_CUDA_RETURN(cudaMemcpyAsync(p.kv->k(li) + p.lo * kv_dim, k_rows + q_seq.off * kv_dim, bytes,
                                        cudaMemcpyDeviceToDevice, s));
      DLOOP_CUDA_RETURN(cudaMemcpyAsync(p.kv->v(li) + p.lo * kv_dim, v_rows + q_seq.off * kv_dim, bytes,
                                        cudaMemcpyDeviceToDevice, s));
    }
    const kernels::AttentionShape shape{q_seq.n, p.kv_end, c.n_head, c.n_head_kv, c.head_dim, scale};
    DLOOP_RETURN_IF_ERROR(kc::attention_f32(shape, q + q_seq.off * q_dim, p.kv->k(li), p.kv->v(li),
                                            attn + q_seq.off * q_dim, s));
  }
  DLOOP_RETURN_IF_ERROR(gemm(attn, n, l.wo, proj));
  DLOOP_RETURN_IF_ERROR(kc::add_f32(x, proj, n * E, s));

  DLOOP_RETURN_IF_ERROR(kc::rms_norm_f32(x, l.ffn_norm, xn, n, E, c.rms_eps, s));
  DLOOP_RETURN_IF_ERROR(gemm(xn, n, l.w_gate, gate));
  DLOOP_RETURN_IF_ERROR(gemm(xn, n, l.w_up, up));
  DLOOP_RETURN_IF_ERROR(kc::swiglu_f32(gate, up, gate, n * F, s));
  DLOOP_RETURN_IF_ERROR(gemm(gate, n, l.w_down, proj));
  return kc::add_f32(x, proj, n * E, s);
}

base::Status CudaModel::enqueue(int64_t n, int64_t n_out) {
  const ModelConfig& c = model_.config();
  DLOOP_RETURN_IF_ERROR(kc::embed_rows(token_embd_.data, token_embd_.type, c.n_vocab, c.n_embd,
                                       static_cast<const int32_t*>(tokens_.p), n, static_cast<float*>(x_.p), stream_));
  for (size_t l = 0; l < layers_.size(); ++l) {
    DLOOP_RETURN_IF_ERROR(layer(layers_[l], static_cast<int64_t>(l), n));
  }
  if (n_out == 0) return base::Status();
  auto* rows_x = static_cast<float*>(rows_x_.p);
  auto* logits = static_cast<float*>(logits_.p);
  DLOOP_RETURN_IF_ERROR(kc::rms_norm_rows_f32(static_cast<const float*>(x_.p), static_cast<const int32_t*>(rows_.p),
                                              n_out, output_norm_, rows_x, c.n_embd, c.rms_eps, stream_));
  DLOOP_RETURN_IF_ERROR(gemm(rows_x, n_out, output_, logits));
  return base::Status();
}

base::Status CudaModel::reserve_kv(DeviceKv& kv, int64_t capacity) {
  const ModelConfig& c = model_.config();
  std::lock_guard<std::mutex> lock(mutex_);
  DLOOP_CUDA_RETURN(cudaSetDevice(device_));
  return kv.reserve(c.n_layer, c.n_head_kv * c.head_dim, capacity, stream_);
}

base::Status CudaModel::copy_kv(DeviceKv& dst, const DeviceKv& src, int64_t n) {
  const ModelConfig& c = model_.config();
  if (n > dst.capacity() || n > src.capacity()) return base::internal_error("copy_kv: rows beyond the K/V capacity");
  if (n <= 0) return base::Status();
  const int64_t kv_dim = c.n_head_kv * c.head_dim;
  const size_t bytes = static_cast<size_t>(n * kv_dim) * sizeof(float);
  std::lock_guard<std::mutex> lock(mutex_);
  DLOOP_CUDA_RETURN(cudaSetDevice(device_));
  for (int64_t l = 0; l < c.n_layer; ++l) {
    DLOOP_CUDA_RETURN(cudaMemcpyAsync(dst.k(l), src.k(l), bytes, cudaMemcpyDeviceToDevice, stream_));
    DLOOP_CUDA_RETURN(cudaMemcpyAsync(dst.v(l), src.v(l), bytes, cudaMemcpyDeviceToDevice, stream_));
  }
  return kc::cuda_status(cudaStreamSynchronize(stream_), "cudaStreamSynchronize(copy K/V rows)");
}

void CudaModel::set_graphs(bool on) {
  std::lock_guard<std::mutex> lock(mutex_);
  graphs_ = on;
}

base::Status CudaModel::launch_graph(const CudaPass& p, int64_t n, int64_t n_out) {
  GraphKey key;
  key.k = p.kv->k(0);
  key.kv_capacity = p.kv->capacity();
  key.lo = p.lo;
  key.hi = p.hi;
  key.kv_end = p.kv_end;
  key.n_out = n_out;
  key.buffers = buffers_generation_;
  auto it = std::find_if(graph_cache_.begin(), graph_cache_.end(), [&](const Graph& g) { return g.key == key; });
  if (it == graph_cache_.end()) {
    DLOOP_CUDA_RETURN(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    const base::Status captured = enqueue(n, n_out);
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(stream_, &graph);  // always ends the capture
    if (!captured.ok() || ended != cudaSuccess) {
      if (graph != nullptr) cudaGraphDestroy(graph);
      (void)cudaGetLastError();
      DLOOP_RETURN_IF_ERROR(captured);
      return kc::cuda_status(ended, "cudaStreamEndCapture(forward pass)");
    }
    cudaGraphExec_t exec = nullptr;
    const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    DLOOP_RETURN_IF_ERROR(kc::cuda_status(made, "cudaGraphInstantiate(forward pass)"));
    if (graph_cache_.size() >= kMaxGraphs) {
      cudaGraphExecDestroy(graph_cache_.front().exec);
      graph_cache_.erase(graph_cache_.begin());
    }
    graph_cache_.push_back(Graph{key, exec});
    ++graphs_captured_;
    it = graph_cache_.end() - 1;
  } else if (it != graph_cache_.end() - 1) {
    std::rotate(it, it + 1, graph_cache_.end());  // most recently used last
    it = graph_cache_.end() - 1;
  }
  DLOOP_CUDA_RETURN(cudaGraphLaunch(it->exec, stream_));
  return base::Status();
}

base::Status CudaModel::validate(const CudaPass& p) const {
  const ModelConfig& c = model_.config();
  const auto t_len = static_cast<int64_t>(p.canvas.size());
  if (!(p.lo >= 0 && p.lo < p.hi && p.hi <= p.kv_end && p.kv_end <= t_len)) {
    return base::invalid_argument("forward: bad pass range [" + std::to_string(p.lo) + ", " + std::to_string(p.hi) +
                                  ") with kv_end " + std::to_string(p.kv_end) + " over a canvas of " +
                                  std::to_string(t_len));
  }
  if (p.kv == nullptr || p.kv->capacity() < p.kv_end) return base::invalid_argument("forward: K/V rows too small");
  for (int64_t i = p.lo; i < p.hi; ++i) {
    if (p.canvas[i] < 0 || p.canvas[i] >= c.n_vocab) {
      return base::invalid_argument("forward: token id " + std::to_string(p.canvas[i]) + " at position " +
                                    std::to_string(i) + " is outside the vocabulary (" + std::to_string(c.n_vocab) + ")");
    }
  }
  for (int32_t r : p.rows) {
    if (r < p.lo || r >= p.hi) return base::invalid_argument("forward: logits row " + std::to_string(r) + " outside the computed rows");
  }
  if (!p.rows.empty() && p.logits == nullptr && p.choices == nullptr) {
    return base::invalid_argument("forward: rows wanted but no logits or choices buffer");
  }
  return base::Status();
}

base::Status CudaModel::run_passes(std::span<CudaPass* const> passes) {
  std::vector<CudaPass*> valid;
  for (CudaPass* p : passes) {
    (void)(p->status = validate(*p));  // (void): nvcc flags the [[nodiscard]] Status&
    if (p->status.ok()) valid.push_back(p);
  }
  if (!valid.empty()) {
    const base::Status s = run_valid(valid);
    if (!s.ok()) {
      for (CudaPass* p : valid) p->status = s;
    }
  }
  for (CudaPass* p : passes) {
    if (!p->status.ok()) return p->status;
  }
  return base::Status();
}

base::Status CudaModel::run_valid(const std::vector<CudaPass*>& passes) {
  const ModelConfig& c = model_.config();
  std::lock_guard<std::mutex> lock(mutex_);
  DLOOP_CUDA_RETURN(cudaSetDevice(device_));
  // Pack the sequences: their rows one after another, their logits rows likewise.
  seqs_.clear();
  host_tokens_.clear();
  host_positions_.clear();
  host_rows_.clear();
  int64_t n = 0, n_out = 0;
  for (const CudaPass* p : passes) {
    Seq q{p, n, p->hi - p->lo, n_out, static_cast<int64_t>(p->rows.size())};
    for (int64_t i = p->lo; i < p->hi; ++i) {
      host_tokens_.push_back(p->canvas[static_cast<size_t>(i)]);
      host_positions_.push_back(static_cast<int32_t>(i));
    }
    for (int32_t r : p->rows) host_rows_.push_back(static_cast<int32_t>(q.off + r - p->lo));
    n += q.n;
    n_out += q.n_out;
    seqs_.push_back(q);
  }
  DLOOP_RETURN_IF_ERROR(grow(n, std::max<int64_t>(n_out, 1)));
  DLOOP_CUDA_RETURN(cudaMemcpyAsync(tokens_.p, host_tokens_.data(), static_cast<size_t>(n) * sizeof(int32_t),
                                    cudaMemcpyHostToDevice, stream_));
  DLOOP_CUDA_RETURN(cudaMemcpyAsync(positions_.p, host_positions_.data(), static_cast<size_t>(n) * sizeof(int32_t),
                                    cudaMemcpyHostToDevice, stream_));
  if (n_out > 0) {
    DLOOP_CUDA_RETURN(cudaMemcpyAsync(rows_.p, host_rows_.data(), static_cast<size_t>(n_out) * sizeof(int32_t),
                                      cudaMemcpyHostToDevice, stream_));
  }
  if (graphs_ && seqs_.size() == 1) {
    DLOOP_RETURN_IF_ERROR(launch_graph(*passes.front(), n, n_out));
  } else {
    DLOOP_RETURN_IF_ERROR(enqueue(n, n_out));
  }
  // Per sequence: the token choice after the (possibly replayed) pass, since its parameters
  // change every step; then the logits, or 16 bytes of token choice per row, back to the host.
  const auto* logits = static_cast<const float*>(logits_.p);
  auto* choices = static_cast<kc::TokenChoice*>(choices_.p);
  std::vector<kc::TokenChoice> host(static_cast<size_t>(n_out));
  for (const Seq& q : seqs_) {
    if (q.n_out == 0) continue;
    const CudaPass& p = *q.p;
    if (p.choices != nullptr) {
      kc::ChoiceParams params;
      params.exclude = p.choice.exclude;
      params.temperature = p.choice.temperature;
      params.rng_state = p.choice.rng_state;
      params.draws_per_row = p.choice.draws_per_row;
      DLOOP_RETURN_IF_ERROR(
          kc::choose_tokens(logits + q.out * c.n_vocab, q.n_out, c.n_vocab, params, choices + q.out, stream_));
      DLOOP_CUDA_RETURN(cudaMemcpyAsync(host.data() + q.out, choices + q.out,
                                        static_cast<size_t>(q.n_out) * sizeof(kc::TokenChoice),
                                        cudaMemcpyDeviceToHost, stream_));
    }
    if (p.logits != nullptr) {
      DLOOP_CUDA_RETURN(cudaMemcpyAsync(p.logits, logits + q.out * c.n_vocab,
                                        static_cast<size_t>(q.n_out * c.n_vocab) * sizeof(float),
                                        cudaMemcpyDeviceToHost, stream_));
    }
  }
  DLOOP_CUDA_RETURN(cudaStreamSynchronize(stream_));
  for (const Seq& q : seqs_) {
    if (q.p->choices == nullptr) continue;
    for (int64_t i = 0; i < q.n_out; ++i) {
      const kc::TokenChoice& h = host[static_cast<size_t>(q.out + i)];
      q.p->choices[i] = TokenChoice{h.token, h.confidence, h.margin, h.entropy};
    }
  }
  return base::Status();
}

}  // namespace dloop::engine::cuda
