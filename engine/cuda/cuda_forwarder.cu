// CudaForwarder: the decoder's passes on the GPU, with CachedForwarder's row selection
// (forwarder.h) over K/V rows kept in device memory: cache mode none recomputes the whole canvas
// every pass; prefix recomputes from the first row that may have changed; dual also keeps an
// unchanged suffix after the live block; prompt reuse computes the prompt segments once, each
// attending to itself and the segments before it, and keeps them in the PromptCache as device
// rows (DevicePromptRows) across requests. CudaBatch: cross-request batching, a PassBarrier
// (batch.h) whose batches run as one CudaModel::run_passes. Also the backend's registration with
// device.h and the public entry points of cuda_backend.h.
// Thread-safety: a forwarder belongs to one request; passes serialize on the CudaModel.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "cuda_model.h"
#include "dloop/engine/cuda/cuda_backend.h"

namespace dloop::engine::cuda {
namespace {

class CudaBatch final : public DeviceBatch {
 public:
  CudaBatch(CudaModel& model, int members)
      : barrier_(members, [&model](std::span<CudaPass* const> passes) { (void)model.run_passes(passes); }) {}
  base::Status submit(CudaPass& pass) { return barrier_.submit(pass); }
  void leave() override { barrier_.leave(); }
  BatchStats stats() const override { return barrier_.stats(); }

 private:
  PassBarrier<CudaPass> barrier_;
};

class CudaForwarder final : public DeviceForwarder {
 public:
  CudaForwarder(CudaModel& model, const DeviceForwarderOptions& options)
      : model_(model),
        mode_(options.mode),
        prompt_cache_(options.prompt_cache),
        segment_ends_(options.segment_ends),
        batch_(static_cast<CudaBatch*>(options.batch)) {}

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
    CachedCanvas cached;
  };

  base::Status submit(CudaPass& pass) { return batch_ != nullptr ? batch_->submit(pass) : model_.run_pass(pass); }

  // As CachedForwarder::prepare_prompt, with the rows in device memory.
  base::Status prepare_prompt(std::span<const int32_t> canvas, int64_t limit, Stream& st) {
    PromptSegmentOps ops;
    ops.reuse = [&](const PromptRows& entry, int64_t n) {
      return model_.copy_kv(st.kv, static_cast<const DevicePromptRows&>(entry).kv, n);
    };
    ops.compute = [&](int64_t lo, int64_t hi) {
      CudaPass pass;
      pass.canvas = canvas;
      pass.lo = lo;
      pass.hi = pass.kv_end = hi;
      pass.kv = &st.kv;
      return submit(pass);
    };
    ops.snapshot = [&](int64_t n) -> base::Result<std::shared_ptr<const PromptRows>> {
      auto entry = std::make_shared<DevicePromptRows>();
      DLOOP_RETURN_IF_ERROR(model_.reserve_kv(entry->kv, n));
      DLOOP_RETURN_IF_ERROR(model_.copy_kv(entry->kv, st.kv, n));
      return std::shared_ptr<const PromptRows>(std::move(entry));
    };
    DLOOP_ASSIGN_OR_RETURN(st.cached.frozen, prepare_prompt_segments(*prompt_cache_, model_.key_space(), canvas,
                                                                     segment_ends_, limit, ops, stats_));
    return base::Status();
  }

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
    int64_t min_row = 0, max_row = 0;
    DLOOP_RETURN_IF_ERROR(check_rows(rows, t, &min_row, &max_row));
    DLOOP_RETURN_IF_ERROR(model_.reserve_kv(st.kv, t));
    // The prompt segments: once per request, on the conditional stream.
    if (stream == 0 && !prompt_done_) {
      prompt_done_ = true;
      if (prompt_cache_ != nullptr && !segment_ends_.empty()) {
        const int64_t limit = std::min({min_row, std::max<int64_t>(hint.stable_end, 0), t - 1});
        DLOOP_RETURN_IF_ERROR(prepare_prompt(canvas, limit, st));
        st.cached.ref.assign(canvas.begin(), canvas.begin() + st.cached.frozen);
      }
    }
    st.cached.check_frozen(canvas, min_row);
    const PassRows sel = st.cached.select(mode_, hint, canvas, min_row, max_row);
    if (sel.lo >= sel.hi) {
      if (!rows.empty()) return base::internal_error("forward: logits rows inside the cached prefix");
      return base::Status();
    }
    CudaPass pass;
    pass.canvas = canvas;
    pass.lo = sel.lo;
    pass.hi = sel.hi;
    pass.kv_end = t;
    pass.kv = &st.kv;
    pass.rows = rows;
    pass.logits = logits;
    pass.choices = choices;
    pass.choice = choice;
    st.cached.valid = false;  // K/V rows are being overwritten: invalid until the pass succeeds
    DLOOP_RETURN_IF_ERROR(submit(pass));
    ++stats_.passes;
    if (sel.full) ++stats_.refreshes;
    stats_.rows_computed += sel.hi - sel.lo;
    stats_.rows_canvas += t;
    st.cached.computed(canvas, sel);
    return base::Status();
  }

  CudaModel& model_;
  CacheMode mode_;
  PromptCache* prompt_cache_;
  std::vector<int64_t> segment_ends_;
  CudaBatch* batch_;
  Stream streams_[2];
  bool prompt_done_ = false;
};

base::Result<std::unique_ptr<DeviceModel>> factory(const Model& model) { return open_cuda_model(model); }

// Registers the backend when the program starts; the linker keeps this object file because
// dloop_cuda's consumers are linked with --undefined=dloop_cuda_backend_anchor (CMakeLists).
struct Registrar {
  Registrar() { register_device_backend(Device::kCuda, &factory); }
};
const Registrar registrar;

}  // namespace

// options.batch must come from this model's make_batch().
std::unique_ptr<DeviceForwarder> CudaModel::make_forwarder(const DeviceForwarderOptions& options) {
  return std::make_unique<CudaForwarder>(*this, options);
}

std::unique_ptr<DeviceBatch> CudaModel::make_batch(int members) { return std::make_unique<CudaBatch>(*this, members); }

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
