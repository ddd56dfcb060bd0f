// matmul: y = x * w^T as a packed, register-tiled GEMM in BLIS loop order.
//  - Rows of x are taken in chunks of at most kRowChunk, so one k block of packed x ("A block",
//    rows x kKBlock floats) stays in L2 while it is reused against a group of weight panels.
//  - For each chunk, x is packed once into A panels (mr rows, k-major), in parallel.
//  - Threads split w's rows into contiguous ranges of nr-row panels, taken in groups of
//    kPanelGroup. For each group, k block and panel, a thread converts that kKBlock x nr slice of
//    w (any dtype) to f32, transposed into a B panel that stays in L1, and runs every A panel of
//    the block through the micro-kernel, accumulating into y from the second k block on.
// Each weight element is decoded once per row chunk (once per call for m <= kRowChunk), and a
// y element is produced by one thread in a fixed order, so results do not depend on the thread
// count. Scratch is per thread (thread_local) and reused across calls.
// Thread-safety: see matmul.h.
#include <algorithm>
#include <functional>

#include "buffer.h"
#include "dloop/base/assert.h"
#include "dloop/kernels/matmul.h"
#include "isa.h"

namespace dloop::kernels {
namespace {

// A multiple of every block size (256 for the K-quants), so B slices start on block boundaries;
// a 256 x 32 f32 B panel is 32 KiB, within L1.
constexpr int64_t kKBlock = 256;
// 384 rows x 256 floats = 384 KiB of A block, well inside a 1 MiB L2.
constexpr int64_t kRowChunk = 384;
// Weight panels swept per k block before moving on: the y block they write (rows x 8*nr floats,
// 320 KiB at 320 rows and nr = 32) stays in L2 across the k blocks, while the A block is
// re-read from L3 only once per group.
constexpr int64_t kPanelGroup = 8;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

void matmul(ThreadPool& pool, const float* x, int64_t m, const WeightView& w, float* y) {
  DLOOP_ASSERT_MSG(m >= 1 && w.rows >= 1 && w.cols >= 1, "matmul: empty shape");
  DLOOP_ASSERT_MSG(w.cols % dtype_info(w.type).block_elems == 0,
                   "matmul: cols is not a multiple of the weight block size");
  const cpu::CpuKernels& kern = cpu::active_kernels();
  const int64_t k = w.cols, n = w.rows, mr = kern.mr, nr = kern.nr;
  const int64_t n_panels = ceil_div(n, nr);
  const int64_t k_blocks = ceil_div(k, kKBlock);
  const int64_t w_row_bytes = row_bytes(w.type, k);
  const auto* w_base = static_cast<const uint8_t*>(w.data);
  // Even row chunks, each a whole number of A panels.
  const int64_t row_chunk = ceil_div(ceil_div(m, ceil_div(m, kRowChunk)), mr) * mr;

  thread_local cpu::ScratchBuffer a_scratch;
  float* a = a_scratch.get(std::min(row_chunk, ceil_div(m, mr) * mr) * k);
  for (int64_t m0 = 0; m0 < m; m0 += row_chunk) {
    const int64_t mc = std::min(row_chunk, m - m0);
    const int64_t mc_panels = ceil_div(mc, mr);
    // A: k block b at a + b*kKBlock*mc_panels*mr, holding mc_panels panels of [kc][mr].
    // Panel-major, so each row of x is read as one long stream.
    pool.parallel_for(mc_panels * k_blocks, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t p = t / k_blocks, k0 = t % k_blocks * kKBlock;
        const int64_t kc = std::min(kKBlock, k - k0);
        kern.pack_a(x + (m0 + p * mr) * k + k0, k, std::min(mr, mc - p * mr), kc,
                    a + k0 * mc_panels * mr + p * mr * kc);
      }
    });
    pool.parallel_for(n_panels, [&](int64_t j0, int64_t j1) {
      thread_local cpu::ScratchBuffer b_scratch;
      float* b = b_scratch.get(kKBlock * nr);  // one B panel: [kc][nr]
      for (int64_t jb = j0; jb < j1; jb += kPanelGroup) {
        const int64_t jb_end = std::min(j1, jb + kPanelGroup);
        for (int64_t k0 = 0; k0 < k; k0 += kKBlock) {
          const int64_t kc = std::min(kKBlock, k - k0);
          for (int64_t j = jb; j < jb_end; ++j) {
            const int64_t n_valid = std::min(nr, n - j * nr);
            kern.pack_b(w.type, w_base + j * nr * w_row_bytes + row_bytes(w.type, k0),
                        w_row_bytes, n_valid, kc, b);
            // The slice the next pack_b reads, in this loop order.
            int64_t next_j = j + 1, next_k0 = k0;
            if (next_j == jb_end && k0 + kKBlock < k) {
              next_j = jb;
              next_k0 = k0 + kKBlock;
            } else if (next_j == jb_end) {
              next_k0 = 0;
            }
            cpu::PrefetchRows next;
            if (next_j < j1) {
              next.base = w_base + next_j * nr * w_row_bytes + row_bytes(w.type, next_k0);
              next.stride = w_row_bytes;
              next.rows = std::min(nr, n - next_j * nr);
              next.bytes = row_bytes(w.type, std::min(kKBlock, k - next_k0));
            }
            kern.gemm_panel(mc, n_valid, kc, a + k0 * mc_panels * mr, b, y + m0 * n + j * nr, n,
                            k0 > 0, next);
          }
        }
      }
    });
  }
}

}  // namespace dloop::kernels
