// GGUF v3 serialisation; see gguf_writer.h.
#include "dloop/engine/gguf_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace dloop::engine {
namespace {

constexpr uint64_t kAlignment = 32;

template <typename T>
void put(std::string& out, T v) {
  char buf[sizeof(T)];
  std::memcpy(buf, &v, sizeof(T));
  out.append(buf, sizeof(T));
}

void put_string(std::string& out, const std::string& s) {
  put<uint64_t>(out, s.size());
  out += s;
}

}  // namespace

void GgufWriter::add_u32(const std::string& key, uint32_t v) { put_string(kv_bytes_, key); put<uint32_t>(kv_bytes_, 4); put(kv_bytes_, v); ++n_kv_; }
void GgufWriter::add_i32(const std::string& key, int32_t v) { put_string(kv_bytes_, key); put<uint32_t>(kv_bytes_, 5); put(kv_bytes_, v); ++n_kv_; }
void GgufWriter::add_f32(const std::string& key, float v) { put_string(kv_bytes_, key); put<uint32_t>(kv_bytes_, 6); put(kv_bytes_, v); ++n_kv_; }
void GgufWriter::add_bool(const std::string& key, bool v) { put_string(kv_bytes_, key); put<uint32_t>(kv_bytes_, 7); put<uint8_t>(kv_bytes_, v ? 1 : 0); ++n_kv_; }
void GgufWriter::add_string(const std::string& key, const std::string& v) { put_string(kv_bytes_, key); put<uint32_t>(kv_bytes_, 8); put_string(kv_bytes_, v); ++n_kv_; }

void GgufWriter::add_string_array(const std::string& key, const std::vector<std::string>& v) {
  put_string(kv_bytes_, key);
  put<uint32_t>(kv_bytes_, 9);
  put<uint32_t>(kv_bytes_, 8);
  put<uint64_t>(kv_bytes_, v.size());
  for (const auto& s : v) put_string(kv_bytes_, s);
  ++n_kv_;
}

void GgufWriter::add_i32_array(const std::string& key, const std::vector<int32_t>& v) {
  put_string(kv_bytes_, key);
  put<uint32_t>(kv_bytes_, 9);
  put<uint32_t>(kv_bytes_, 5);
  put<uint64_t>(kv_bytes_, v.size());
  for (int32_t x : v) put(kv_bytes_, x);
  ++n_kv_;
}

void GgufWriter::add_tensor(const std::string& name, kernels::DType type, std::vector<int64_t> ne, Fill fill) {
  uint64_t rows = 1;
  for (size_t i = 1; i < ne.size(); ++i) rows *= static_cast<uint64_t>(ne[i]);
  uint64_t n_bytes = static_cast<uint64_t>(kernels::row_bytes(type, ne[0])) * rows;
  tensors_.push_back({name, type, std::move(ne), std::move(fill), n_bytes});
}

base::Status GgufWriter::write(const std::string& path) const {
  std::string head = "GGUF";
  put<uint32_t>(head, 3);
  put<int64_t>(head, static_cast<int64_t>(tensors_.size()));
  put<int64_t>(head, static_cast<int64_t>(n_kv_));
  head += kv_bytes_;
  uint64_t offset = 0;
  for (const Tensor& t : tensors_) {
    put_string(head, t.name);
    put<uint32_t>(head, static_cast<uint32_t>(t.ne.size()));
    for (int64_t n : t.ne) put<int64_t>(head, n);
    put<uint32_t>(head, static_cast<uint32_t>(t.type));
    put<uint64_t>(head, offset);
    offset += (t.n_bytes + kAlignment - 1) / kAlignment * kAlignment;
  }
  head.append((kAlignment - head.size() % kAlignment) % kAlignment, '\0');
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f) return base::io_error(path + ": " + std::strerror(errno));
  if (std::fwrite(head.data(), 1, head.size(), f.get()) != head.size()) return base::io_error(path + ": write failed");
  std::vector<uint8_t> buf;
  for (const Tensor& t : tensors_) {
    uint64_t padded = (t.n_bytes + kAlignment - 1) / kAlignment * kAlignment;
    buf.assign(padded, 0);
    t.fill(buf.data(), t.n_bytes);
    if (std::fwrite(buf.data(), 1, buf.size(), f.get()) != buf.size()) return base::io_error(path + ": write failed");
  }
  if (std::fflush(f.get()) != 0) return base::io_error(path + ": " + std::strerror(errno));
  return base::Status();
}

}  // namespace dloop::engine
