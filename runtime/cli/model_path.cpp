// Bundled-model lookup; see model_path.h.
#include "model_path.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

namespace dloop::cli {
namespace fs = std::filesystem;

base::Result<std::string> resolve_model_path(const std::string& spec) {
  if (!spec.empty() && spec != "default") {
    std::error_code ec;
    if (!fs::is_regular_file(spec, ec)) return base::not_found("model file '" + spec + "' does not exist");
    return spec;
  }
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("DLOOP_MODEL"); env != nullptr && *env) candidates.emplace_back(env);
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    candidates.push_back(exe.parent_path() / "models/default.gguf");
    candidates.push_back(exe.parent_path().parent_path() / "models/default.gguf");
    candidates.push_back(exe.parent_path().parent_path() / "share/dloop/models/default.gguf");
  }
#ifdef DLOOP_SOURCE_MODELS_DIR
  candidates.push_back(fs::path(DLOOP_SOURCE_MODELS_DIR) / "default.gguf");
#endif
  for (const auto& c : candidates) {
    if (fs::is_regular_file(c, ec)) return c.string();
  }
  std::string tried;
  for (const auto& c : candidates) tried += "\n  " + c.string();
  return base::not_found("the bundled model (models/default.gguf) was not found; looked in:" + tried +
                         "\nset DLOOP_MODEL or pass --model FILE");
}

}  // namespace dloop::cli

namespace dloop::cli {

base::Result<engine::Device> resolve_device(const std::optional<std::string>& flag, const std::string& fallback) {
  const std::string name = flag.value_or(fallback);
  const auto device = engine::parse_device(name);
  if (!device) return base::invalid_argument("--device: unknown device '" + name + "' (cpu or cuda)");
  if (*device == engine::Device::kCuda && !engine::device_backend_available(*device)) {
    return base::unavailable("--device cuda: this build has no CUDA backend");
  }
  return *device;
}

}  // namespace dloop::cli
