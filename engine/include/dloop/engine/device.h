// Compute devices of the engine: the CPU (the reference, always present) and accelerator
// backends that optional libraries register at start-up (dloop_cuda, engine/cuda/). A
// DeviceModel is a loaded Model's weights on a device; its forwarders run the decoder's passes
// there. This header has no accelerator headers, so every part of dloop (runtime included) may
// use it. Errors: open_device_model() says "this build has no CUDA backend" when the library is
// not linked, and the backend's own error ("no CUDA device found", out of memory, ...) otherwise.
// Thread-safety: register_device_backend() runs during static initialization; the rest is
// thread-safe. A DeviceModel serializes the passes of its forwarders (one device stream).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <vector>

#include "dloop/base/status.h"
#include "dloop/engine/batch.h"
#include "dloop/engine/forwarder.h"
#include "dloop/engine/model.h"

namespace dloop::engine {

enum class Device { kCpu, kCuda };
std::optional<Device> parse_device(std::string_view name);  // "cpu", "cuda"
const char* device_name(Device device);

// What the decoding step needs of one masked position, computed where the logits are.
struct TokenChoice {
  int32_t token = -1;      // the chosen token (see ChoiceOptions), never the excluded id
  float confidence = 0;    // its softmax probability
  float margin = 0;        // the highest softmax probability minus the second highest
  float entropy = 0;       // of the softmax, in nats
};

// How forward_choices() chooses. temperature 0: the argmax (lowest id on ties). temperature > 0:
// float64 Gumbel-max as the CPU decoder (SPEC.md "Token choice"): score = logit / T - log(-log u),
// where row r (0-based, in the order of `rows`) and token v take the uniform of the
// (r * draws_per_row + v + 1)-th draw of a SplitMix64 generator whose state is rng_state; the
// caller advances its own generator by rows * draws_per_row afterwards.
struct ChoiceOptions {
  int32_t exclude = -1;        // a token never chosen and left out of the softmax (the mask id), or -1
  double temperature = 0;
  uint64_t rng_state = 0;
  int64_t draws_per_row = 0;   // >= n_vocab when temperature > 0
};

// The host reference of the device's choice (what the GPU kernel is tested against), for rows of
// logits [n_rows x n_vocab]: out[r] for each row. Sums in double.
void reference_choices(const float* logits, int64_t n_rows, int64_t n_vocab, const ChoiceOptions& options,
                       TokenChoice* out);

// A Forwarder on an accelerator. Cache modes and prompt reuse as CachedForwarder's (forwarder.h),
// with the K/V rows kept in device memory (prompt segments in the PromptCache under the
// device's own key space, so the cache's byte budget counts device memory too).
class DeviceForwarder : public Forwarder {
 public:
  // As forward(), but only the per-row choice returns to the host (16 bytes a row). The decoder
  // (decoding.h) uses it instead of forward() when no top-k/top-p filtering or CFG is asked for.
  virtual base::Status forward_choices(std::span<const int32_t> canvas, std::span<const int32_t> rows,
                                       const ChoiceOptions& choice, TokenChoice* out, const PassHint& hint,
                                       int stream = 0) = 0;
};

// Cross-request batching on a device, as BatchCoordinator (batch.h): each of `members` request
// threads decodes with forwarders made with this batch and calls leave() once when its request is
// done; a pass is submitted and waits until every live member has submitted one, then all of them
// run as one device pass (the rows of every request packed into each matrix product). A
// request's results are those it would get alone.
class DeviceBatch {
 public:
  virtual ~DeviceBatch() = default;
  virtual void leave() = 0;
  virtual BatchStats stats() const = 0;
};

// The batch member a request thread hands to Engine code where a PassExecutor is expected; it
// runs no host passes (run() is an error) but names the DeviceBatch the request's device
// forwarders submit to. Leaves the batch when destroyed, unless leave() was called.
class DeviceBatchMember final : public PassExecutor {
 public:
  explicit DeviceBatchMember(DeviceBatch& batch) : batch_(batch) {}
  ~DeviceBatchMember() override { leave(); }
  DeviceBatchMember(const DeviceBatchMember&) = delete;
  DeviceBatchMember& operator=(const DeviceBatchMember&) = delete;
  base::Status run(SequencePass&) override {
    return base::internal_error("a device batch member runs no host passes");
  }
  DeviceBatch* device_batch() override { return &batch_; }
  void leave() {
    if (!left_) batch_.leave();
    left_ = true;
  }

 private:
  DeviceBatch& batch_;
  bool left_ = false;
};

struct DeviceForwarderOptions {
  CacheMode mode = CacheMode::kNone;
  PromptCache* prompt_cache = nullptr;  // prompt reuse when set and segment_ends is not empty
  std::vector<int64_t> segment_ends;    // as CacheOptions (forwarder.h)
  DeviceBatch* batch = nullptr;         // submit passes to this batch, or run them alone
};

class DeviceModel {
 public:
  virtual ~DeviceModel() = default;
  virtual std::unique_ptr<DeviceForwarder> make_forwarder(const DeviceForwarderOptions& options) = 0;
  std::unique_ptr<DeviceForwarder> make_forwarder(CacheMode mode) {
    DeviceForwarderOptions o;
    o.mode = mode;
    return make_forwarder(o);
  }
  // A batch of `members` requests (see DeviceBatch); it must outlive their forwarders.
  virtual std::unique_ptr<DeviceBatch> make_batch(int members) = 0;
  virtual std::string description() const = 0;   // "NVIDIA H200 (sm_90, 139 GiB)"
  virtual uint64_t weight_bytes() const = 0;      // device bytes of the uploaded weights
  // Weight bytes one pass reads: all but an untied embedding table (a pass gathers a few rows).
  virtual uint64_t pass_weight_bytes() const = 0;
  // Device-to-device copy bandwidth measured now over `bytes` (read + write bytes per second).
  virtual base::Result<double> copy_bandwidth(uint64_t bytes) = 0;
  // Replays each pass shape from a captured graph instead of launching its kernels one by one
  // (CUDA graphs); off by default. Results are identical either way.
  virtual void set_graphs(bool on) = 0;
};

// Uploads `model` (which must outlive the result) to the first device of the backend.
using DeviceModelFactory = base::Result<std::unique_ptr<DeviceModel>> (*)(const Model& model);

// Called by a backend library's static initializer; a second registration replaces the first.
void register_device_backend(Device device, DeviceModelFactory factory);
bool device_backend_available(Device device);  // the library is linked (not: a device exists)

// kCpu is not a DeviceModel (the CPU path is the Engine's own); asking for it is invalid_argument.
base::Result<std::unique_ptr<DeviceModel>> open_device_model(Device device, const Model& model);

}  // namespace dloop::engine
