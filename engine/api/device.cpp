// The registry of device backends (device.h): one factory slot per Device, filled by the
// backend libraries' static initializers. Thread-safe (a mutex; registration is start-up only).
#include "dloop/engine/device.h"

#include <mutex>

namespace dloop::engine {
namespace {

struct Registry {
  std::mutex mutex;
  DeviceModelFactory cuda = nullptr;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

std::optional<Device> parse_device(std::string_view name) {
  if (name == "cpu") return Device::kCpu;
  if (name == "cuda") return Device::kCuda;
  return std::nullopt;
}

const char* device_name(Device device) { return device == Device::kCuda ? "cuda" : "cpu"; }

void register_device_backend(Device device, DeviceModelFactory factory) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (device == Device::kCuda) r.cuda = factory;
}

bool device_backend_available(Device device) {
  if (device == Device::kCpu) return true;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.cuda != nullptr;
}

base::Result<std::unique_ptr<DeviceModel>> open_device_model(Device device, const Model& model) {
  if (device == Device::kCpu) return base::invalid_argument("the CPU path needs no device model");
  DeviceModelFactory factory = nullptr;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    factory = r.cuda;
  }
  if (factory == nullptr) {
    return base::unavailable("this build has no CUDA backend (configure with -DDLOOP_CUDA=ON on a machine with nvcc)");
  }
  return factory(model);
}

}  // namespace dloop::engine
