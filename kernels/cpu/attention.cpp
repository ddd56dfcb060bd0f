// attention_f32: bidirectional softmax attention computed head by head with the GEMM building
// blocks of the active ISA, in transposed form so that the softmax runs down contiguous columns:
//   S^T [n_kv x nr]  = K_h [n_kv x d] * Q_blk^T [d x nr]      (A = packed K_h, B = packed Q^T)
//   P^T              = exp(scale * S^T - max) per column, with column sums
//   O^T [d x nr]     = V_h^T [d x n_kv] * P^T [n_kv x nr]     (A = packed V^T, B = P^T as is)
// then O^T is transposed into out and divided by the sums. Query blocks are nr wide, so only a
// [n_kv x nr] score panel exists at a time. Work is split over (head, query-range) tasks; K_h and
// V_h are packed once per task range and reused across heads sharing a kv head (GQA). The column
// softmax has scalar, AVX2 and AVX-512 variants here; the GEMM blocks live in gemm_*.cpp.
// Thread-safety: see attention.h.
#include <algorithm>
#include <cmath>
#include <functional>

#include "buffer.h"
#include "dloop/base/assert.h"
#include "dloop/kernels/attention.h"
#include "isa.h"
#include "isa_impl.h"
#include "vec_math.h"

namespace dloop::kernels {
namespace cpu {

namespace scalar {

void softmax_cols(float* panel, int64_t rows, float scale, float* sum_col) {
  for (int64_t j = 0; j < kNr; ++j) {
    float mx = -INFINITY;
    for (int64_t r = 0; r < rows; ++r) mx = std::max(mx, panel[r * kNr + j] * scale);
    float sum = 0;
    for (int64_t r = 0; r < rows; ++r) sum += panel[r * kNr + j] = std::exp(panel[r * kNr + j] * scale - mx);
    sum_col[j] = sum;
  }
}

}  // namespace scalar

#if DLOOP_KERNELS_X86
namespace avx2 {

DLOOP_TARGET_AVX2 void softmax_cols(float* panel, int64_t rows, float scale, float* sum_col) {
  const __m256 vs = _mm256_set1_ps(scale);
  __m256 mx0 = _mm256_set1_ps(-INFINITY), mx1 = mx0;
  for (int64_t r = 0; r < rows; ++r) {
    mx0 = _mm256_max_ps(mx0, _mm256_mul_ps(_mm256_load_ps(panel + r * kNr), vs));
    mx1 = _mm256_max_ps(mx1, _mm256_mul_ps(_mm256_load_ps(panel + r * kNr + 8), vs));
  }
  __m256 s0 = _mm256_setzero_ps(), s1 = s0;
  for (int64_t r = 0; r < rows; ++r) {
    float* p = panel + r * kNr;
    const __m256 e0 = exp_ps(_mm256_fmsub_ps(_mm256_load_ps(p), vs, mx0));
    const __m256 e1 = exp_ps(_mm256_fmsub_ps(_mm256_load_ps(p + 8), vs, mx1));
    _mm256_store_ps(p, e0);
    _mm256_store_ps(p + 8, e1);
    s0 = _mm256_add_ps(s0, e0);
    s1 = _mm256_add_ps(s1, e1);
  }
  _mm256_storeu_ps(sum_col, s0);
  _mm256_storeu_ps(sum_col + 8, s1);
}

}  // namespace avx2

namespace avx512 {

DLOOP_TARGET_AVX512 void softmax_cols(float* panel, int64_t rows, float scale, float* sum_col) {
  const __m512 vs = _mm512_set1_ps(scale);
  __m512 mx0 = _mm512_set1_ps(-INFINITY), mx1 = mx0;
  for (int64_t r = 0; r < rows; ++r) {
    mx0 = _mm512_max_ps(mx0, _mm512_mul_ps(_mm512_load_ps(panel + r * kNr), vs));
    mx1 = _mm512_max_ps(mx1, _mm512_mul_ps(_mm512_load_ps(panel + r * kNr + 16), vs));
  }
  __m512 s0 = _mm512_setzero_ps(), s1 = s0;
  for (int64_t r = 0; r < rows; ++r) {
    float* p = panel + r * kNr;
    const __m512 e0 = exp_ps(_mm512_fmsub_ps(_mm512_load_ps(p), vs, mx0));
    const __m512 e1 = exp_ps(_mm512_fmsub_ps(_mm512_load_ps(p + 16), vs, mx1));
    _mm512_store_ps(p, e0);
    _mm512_store_ps(p + 16, e1);
    s0 = _mm512_add_ps(s0, e0);
    s1 = _mm512_add_ps(s1, e1);
  }
  _mm512_storeu_ps(sum_col, s0);
  _mm512_storeu_ps(sum_col + 16, s1);
}

}  // namespace avx512
#endif  // DLOOP_KERNELS_X86

}  // namespace cpu

namespace {

int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

// V_h^T as A panels: panel p holds rows (head dims) p*mr.. as [n_kv][mr].
void pack_v_transposed(const float* v, int64_t ldv, int64_t n_kv, int64_t d, int64_t mr,
                       float* dst) {
  for (int64_t p0 = 0; p0 < d; p0 += mr) {
    float* panel = dst + p0 * n_kv;
    const int64_t rows = std::min(mr, d - p0);
    for (int64_t j = 0; j < n_kv; ++j) {
      const float* vj = v + j * ldv + p0;
      for (int64_t i = 0; i < mr; ++i) panel[j * mr + i] = i < rows ? vj[i] : 0.0f;
    }
  }
}

}  // namespace

void attention_f32(ThreadPool& pool, const AttentionShape& s, const float* q, const float* k,
                   const float* v, float* out) {
  DLOOP_ASSERT_MSG(s.n_kv >= 1 && s.n_head >= 1 && s.n_head_kv >= 1 && s.head_dim >= 1,
                   "attention_f32: empty shape");
  DLOOP_ASSERT_MSG(s.n_head % s.n_head_kv == 0, "attention_f32: n_head % n_head_kv != 0");
  if (s.n_q <= 0) return;
  const cpu::CpuKernels& kern = cpu::active_kernels();
  const int64_t mr = kern.mr, nr = kern.nr, d = s.head_dim;
  const int64_t ldq = s.n_head * d, ldkv = s.n_head_kv * d, group = s.n_head / s.n_head_kv;
  const int64_t q_panels = (s.n_q + nr - 1) / nr;
  // Enough tasks to keep every thread busy when there are fewer heads than threads.
  const int64_t splits =
      std::clamp<int64_t>((2 * pool.size() + s.n_head - 1) / s.n_head, 1, q_panels);

  pool.parallel_for(s.n_head * splits, [&](int64_t t0, int64_t t1) {
    const int64_t a1_size = round_up(round_up(s.n_kv, mr) * d, 16);  // K_h panels
    const int64_t a2_size = round_up(round_up(d, mr) * s.n_kv, 16);  // V_h^T panels
    const int64_t b1_size = round_up(d * nr, 16);                    // Q block^T: [d][nr]
    const int64_t sp_size = round_up(s.n_kv * nr, 16);               // S^T, then P^T: [n_kv][nr]
    const int64_t o_size = round_up(d * nr, 16);                     // O^T: [d][nr]
    thread_local cpu::ScratchBuffer scratch;
    float* a1 = scratch.get(a1_size + a2_size + b1_size + sp_size + o_size + nr);
    float* a2 = a1 + a1_size;
    float* b1 = a2 + a2_size;
    float* sp = b1 + b1_size;
    float* o = sp + sp_size;
    float* sums = o + o_size;
    int64_t packed_hk = -1;
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t h = t / splits, part = t % splits, hk = h / group;
      if (hk != packed_hk) {
        kern.pack_a(k + hk * d, ldkv, s.n_kv, d, a1);
        pack_v_transposed(v + hk * d, ldkv, s.n_kv, d, mr, a2);
        packed_hk = hk;
      }
      const int64_t p_begin = q_panels * part / splits, p_end = q_panels * (part + 1) / splits;
      for (int64_t qp = p_begin; qp < p_end; ++qp) {
        const int64_t q0 = qp * nr, nq = std::min(nr, s.n_q - q0);
        kern.pack_b(DType::kF32, q + q0 * ldq + h * d, ldq * static_cast<int64_t>(sizeof(float)),
                    nq, d, b1);
        kern.gemm_panel(s.n_kv, nq, d, a1, b1, sp, nr, false, {});
        kern.softmax_cols(sp, s.n_kv, s.scale, sums);
        kern.gemm_panel(d, nq, s.n_kv, a2, sp, o, nr, false, {});
        for (int64_t j = 0; j < nq; ++j) {
          const float inv = 1.0f / sums[j];
          float* oj = out + (q0 + j) * ldq + h * d;
          for (int64_t i = 0; i < d; ++i) oj[i] = o[i * nr + j] * inv;
        }
      }
    }
  });
}

}  // namespace dloop::kernels
