// A GGUF v3 writer, used to make random-weight models for benchmarks and tests (the project's
// Python writer in scripts/ makes the committed test files). Tensor bytes are produced by a
// callback while the file is written, so multi-gigabyte files never sit in memory at once.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dloop/base/status.h"
#include "dloop/kernels/dtype.h"

namespace dloop::engine {

class GgufWriter {
 public:
  // Fills `dst` with the tensor's `n_bytes` bytes (already in the tensor's type layout).
  using Fill = std::function<void(uint8_t* dst, uint64_t n_bytes)>;

  void add_u32(const std::string& key, uint32_t v);
  void add_i32(const std::string& key, int32_t v);
  void add_f32(const std::string& key, float v);
  void add_bool(const std::string& key, bool v);
  void add_string(const std::string& key, const std::string& v);
  void add_string_array(const std::string& key, const std::vector<std::string>& v);
  void add_i32_array(const std::string& key, const std::vector<int32_t>& v);
  // ne in ggml order (ne[0] contiguous); ne[0] must be a multiple of the type's block size.
  void add_tensor(const std::string& name, kernels::DType type, std::vector<int64_t> ne, Fill fill);

  // Writes header, metadata, tensor infos and 32-byte-aligned data. Errors: io_error.
  base::Status write(const std::string& path) const;

 private:
  struct Tensor {
    std::string name;
    kernels::DType type;
    std::vector<int64_t> ne;
    Fill fill;
    uint64_t n_bytes;
  };
  std::string kv_bytes_;   // serialised key/value pairs
  uint64_t n_kv_ = 0;
  std::vector<Tensor> tensors_;
};

}  // namespace dloop::engine
