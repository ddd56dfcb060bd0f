// matmul: y = x * w^T as a packed, register-tiled GEMM (BLIS-style loop order, simplified).
//  1. x is packed once per call into A panels (mr rows, k-major), in parallel over panels.
//  2. Threads split w's rows into contiguous ranges of nr-row panels. For each panel a thread
//     converts those nr weight rows (any dtype) to f32 and transposes them into a k-major B panel
//     (K x nr floats, in L2), then sweeps every A panel through the micro-kernel in k blocks.
// So each weight element is decoded exactly once per call and x is read from packed memory only.
// Scratch is per thread (thread_local) and reused across calls.
// Thread-safety: see matmul.h.
#include <algorithm>
#include <functional>

#include "buffer.h"
#include "dloop/base/assert.h"
#include "dloop/kernels/matmul.h"
#include "isa.h"

namespace dloop::kernels {

void matmul(ThreadPool& pool, const float* x, int64_t m, const WeightView& w, float* y) {
  DLOOP_ASSERT_MSG(m >= 1 && w.rows >= 1 && w.cols >= 1, "matmul: empty shape");
  DLOOP_ASSERT_MSG(w.cols % dtype_info(w.type).block_elems == 0,
                   "matmul: cols is not a multiple of the weight block size");
  const cpu::CpuKernels& kern = cpu::active_kernels();
  const int64_t k = w.cols, n = w.rows, mr = kern.mr, nr = kern.nr;
  const int64_t a_panels = (m + mr - 1) / mr;
  const int64_t n_panels = (n + nr - 1) / nr;
  const int64_t w_row_bytes = row_bytes(w.type, k);
  const auto* w_base = static_cast<const uint8_t*>(w.data);

  thread_local cpu::ScratchBuffer a_scratch;
  float* a = a_scratch.get(a_panels * mr * k);  // A panels: [a_panels][k][mr]
  pool.parallel_for(a_panels, [&](int64_t p0, int64_t p1) {
    kern.pack_a(x + p0 * mr * k, k, std::min(m, p1 * mr) - p0 * mr, k, a + p0 * mr * k);
  });

  pool.parallel_for(n_panels, [&](int64_t j0, int64_t j1) {
    thread_local cpu::ScratchBuffer b_scratch;
    float* b = b_scratch.get(k * nr);  // one B panel: [k][nr]
    for (int64_t j = j0; j < j1; ++j) {
      const int64_t n_valid = std::min(nr, n - j * nr);
      kern.pack_b(w.type, w_base + j * nr * w_row_bytes, w_row_bytes, n_valid, k, b);
      kern.gemm_panel(m, n_valid, k, a, b, y + j * nr, n);
    }
  });
}

}  // namespace dloop::kernels
