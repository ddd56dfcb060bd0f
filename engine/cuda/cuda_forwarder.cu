// CudaForwarder: the decoder's passes on the GPU, with CachedForwarder's row selection
// (forwarder.h) over K/V rows kept in device memory: cache mode none recomputes the whole canvas
// every pass; prefix recomputes from the first row that may have changed; dual also keeps an
// unchanged suffix after the live block. Prompt reuse across requests (PromptCache) is not done
// on the GPU. Also the backend's registration with device.h and the public entry points of
// cuda_backend.h. Thread-safety: a forwarder belongs to one request; passes serialize on the
// CudaModel.
#include <algorithm>
#include <cmath>

#include "cuda_model.h"
#include "dloop/engine/cuda/cuda_backend.h"

namespace dloop::engine::cuda {
namespace {

class CudaForwarder final : public DeviceForwarder {
 public:
  CudaForwarder(CudaModel& model, CacheMode mode) : model_(model), mode_(mode) {}

  base::Status forward(std::span<const int32_t> canvas, std::span<const int32_t> rows, float* logits,
                       const PassHint& hint, int stream) override {
    if (!rows.empty() && logits == nullptr) return base::invalid_argument("forward: no logits buffer");
    return run(canvas, rows, logits, nullptr, ChoiceOptions{}, hint, stream);
  }

  base::Status forward_choices(std::span<const int32_t> canvas, std::span<const int32_t> rows,
                               const ChoiceOptions& choice, TokenChoice* out, const PassHint& hint,
                               int stream) override {
    if (!rows.empty() && out == nullptr) return base::invalid_argument("forward: no choices buffer");
    if (!(choice.temperature >= 0) || std::isinf(choice.temperature)) {
      return base::invalid_argument("forward: temperature must be finite and >= 0");
    }
    if (choice.temperature > 0 && choice.draws_per_row < model_.config().n_vocab) {
      return base::invalid_argument("forward: draws_per_row must be at least the vocabulary size when sampling");
    }
    return run(canvas, rows, nullptr, out, choice, hint, stream);
  }

 private:
  struct Stream {
    DeviceKv kv;
    std::vector<int32_t> ref;  // the canvas the cached rows were computed from
    bool valid = false;
  };

  base::Status run(std::span<const int32_t> canvas, std::span<const int32_t> rows, float* logits, TokenChoice* choices,
                   const ChoiceOptions& choice, const PassHint& hint, int stream) {
    const ModelConfig& c = model_.config();
    const auto t = static_cast<int64_t>(canvas.size());
    if (t == 0) return base::invalid_argument("forward: empty canvas");
    if (t > c.n_ctx) {
      return base::invalid_argument("canvas of " + std::to_string(t) + " tokens exceeds the model's context length " +
                                    std::to_string(c.n_ctx));
    }
    if (stream < 0 || stream > 1) return base::invalid_argument("forward: stream must be 0 or 1");
    Stream& st = streams_[stream];
    int64_t min_row = t, max_row = -1;
    for (int32_t r : rows) {
      if (r < 0 || r >= t) return base::invalid_argument("forward: logits row " + std::to_string(r) + " out of range");
      min_row = std::min<int64_t>(min_row, r);
      max_row = std::max<int64_t>(max_row, r);
    }
    const auto same = [&](int64_t lo, int64_t hi) {
      if (hi > static_cast<int64_t>(st.ref.size()) || hi > t) return false;
      return std::equal(canvas.begin() + lo, canvas.begin() + hi, st.ref.begin() + lo);
    };
    int64_t lo = 0, hi = t;
    bool full = mode_ == CacheMode::kNone || hint.refresh || !st.valid;
    if (!full) {
      lo = std::max<int64_t>(0, std::min(hint.stable_end, min_row));
      if (!same(0, lo)) {
        full = true;
        lo = 0;
      }
    }
    if (!full && mode_ == CacheMode::kDual && hint.live_end > 0 && t == static_cast<int64_t>(st.ref.size())) {
      const int64_t end = std::max(hint.live_end, max_row + 1);
      if (end < t && same(end, t)) hi = end;
    }
    if (lo >= hi) {
      if (!rows.empty()) return base::internal_error("forward: logits rows inside the cached prefix");
      return base::Status();
    }
    DLOOP_RETURN_IF_ERROR(model_.reserve_kv(st.kv, t));
    CudaPass pass;
    pass.canvas = canvas;
    pass.lo = lo;
    pass.hi = hi;
    pass.kv_end = t;
    pass.kv = &st.kv;
    pass.rows = rows;
    pass.logits = logits;
    pass.choices = choices;
    pass.choice = choice;
    st.valid = false;  // K/V rows are being overwritten: invalid until the pass succeeds
    DLOOP_RETURN_IF_ERROR(model_.run_pass(pass));
    ++stats_.passes;
    if (full) ++stats_.refreshes;
    stats_.rows_computed += hi - lo;
    stats_.rows_canvas += t;
    if (full) {
      st.ref.assign(canvas.begin(), canvas.end());
    } else {
      st.ref.resize(static_cast<size_t>(t));
      std::copy(canvas.begin() + lo, canvas.begin() + hi, st.ref.begin() + lo);
    }
    st.valid = true;
    return base::Status();
  }

  CudaModel& model_;
  CacheMode mode_;
  Stream streams_[2];
};

base::Result<std::unique_ptr<DeviceModel>> factory(const Model& model) { return open_cuda_model(model); }

// Registers the backend when the program starts; the linker keeps this object file because
// dloop_cuda's consumers are linked with --undefined=dloop_cuda_backend_anchor (CMakeLists).
struct Registrar {
  Registrar() { register_device_backend(Device::kCuda, &factory); }
};
const Registrar registrar;

}  // namespace

std::unique_ptr<DeviceForwarder> CudaModel::make_forwarder(CacheMode mode) {
  return std::make_unique<CudaForwarder>(*this, mode);
}

base::Result<std::unique_ptr<DeviceModel>> open_cuda_model(const Model& model) {
  auto m = CudaModel::upload(model);
  if (!m.ok()) return m.status();
  return std::unique_ptr<DeviceModel>(std::move(m).value());
}

int cuda_device_count() { return kernels::cuda::device_count(); }

}  // namespace dloop::engine::cuda

extern "C" {
// Referenced by the link line of every dloop_cuda consumer so the registrar above is linked in.
int dloop_cuda_backend_anchor = 0;
}
