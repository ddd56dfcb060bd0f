// GGUF v3 parser: header, key/value pairs, tensor infos, alignment and tensor placement. Reads
// through a bounds-checked cursor, so every length and count is compared with the bytes left
// before anything is allocated or dereferenced; the first problem becomes a data_loss Status that
// names the byte offset and the key or tensor. Also the mmap / from_bytes entry points.
// Not a writer. Thread-safety: parsing works on one GgufFile being built; nothing is shared.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <string>
#include <unordered_set>

#include "dloop/engine/gguf.h"
#include "ggml_type_names.h"

namespace dloop::engine {

static_assert(std::endian::native == std::endian::little, "the GGUF reader assumes a little-endian host");

using base::Result;
using base::Status;

namespace {

// Reservations are capped: a count is checked against the bytes left, but storage grows only as
// records actually parse, so memory tracks what the file really contains.
constexpr uint64_t kMaxReserve = 4096;
constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr uint64_t kMaxNameBytes = 63;   // ggml's GGML_MAX_NAME (64) minus the NUL
constexpr int kMaxDims = 4;
constexpr uint32_t kMaxType = static_cast<uint32_t>(GgufType::kF64);

// Payload bytes of one scalar element; 0 for string and array.
uint64_t scalar_bytes(GgufType t) {
  switch (t) {
    case GgufType::kU8: case GgufType::kI8: case GgufType::kBool: return 1;
    case GgufType::kU16: case GgufType::kI16: return 2;
    case GgufType::kU32: case GgufType::kI32: case GgufType::kF32: return 4;
    case GgufType::kU64: case GgufType::kI64: case GgufType::kF64: return 8;
    default: return 0;
  }
}

// A key or tensor name for an error message: quoted, control bytes escaped, long names cut.
std::string quoted(std::string_view s) {
  constexpr size_t kMaxShown = 96;
  std::string out = "'";
  for (char c : s.substr(0, kMaxShown)) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      static const char* kHex = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  if (s.size() > kMaxShown) out += "...";
  return out + "'";
}

// a * b, or nullopt on overflow (both non-negative).
std::optional<uint64_t> mul_checked(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<uint64_t> align_up(uint64_t x, uint64_t align) {
  uint64_t r = 0;
  if (__builtin_add_overflow(x, align - 1, &r)) return std::nullopt;
  return r / align * align;
}

}  // namespace

class GgufParser {
 public:
  explicit GgufParser(GgufFile& f) : f_(f), p_(f.bytes_), size_(f.size_) {}

  Status parse() {
    DLOOP_RETURN_IF_ERROR(read_header());
    DLOOP_RETURN_IF_ERROR(read_kvs());
    DLOOP_RETURN_IF_ERROR(read_alignment());
    DLOOP_RETURN_IF_ERROR(read_tensor_infos());
    return place_tensors();
  }

 private:
  Status fail(uint64_t at, const std::string& msg) const {
    return base::data_loss(f_.name_ + ": byte " + std::to_string(at) + ": " + msg);
  }
  uint64_t left() const { return size_ - pos_; }

  // Fails unless n more bytes exist; `what` + `suffix` names the field ("key 'x'" ": value").
  // The message is built only on failure: this runs once per vocabulary string.
  Status need(uint64_t n, std::string_view what, std::string_view suffix = {}) const {
    if (n <= left()) return Status();
    return fail(pos_, std::string(what) + std::string(suffix) + " is truncated (needs " + std::to_string(n) +
                          " bytes, " + std::to_string(left()) + " left)");
  }

  template <typename T>
  Result<T> read(std::string_view what, std::string_view suffix = {}) {
    DLOOP_RETURN_IF_ERROR(need(sizeof(T), what, suffix));
    T v;
    std::memcpy(&v, p_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  Result<std::string_view> read_string(std::string_view what) {
    uint64_t at = pos_;
    DLOOP_ASSIGN_OR_RETURN(uint64_t n, read<uint64_t>(what, " length"));
    if (n > left()) {
      return fail(at, std::string(what) + ": string length " + std::to_string(n) + " exceeds the file (" +
                          std::to_string(left()) + " bytes left)");
    }
    std::string_view s(reinterpret_cast<const char*>(p_ + pos_), n);
    pos_ += n;
    return s;
  }

  // Reads a count and checks that `count` elements of at least `min_bytes` each can fit.
  Result<uint64_t> read_count(std::string_view what, uint64_t min_bytes) {
    uint64_t at = pos_;
    DLOOP_ASSIGN_OR_RETURN(uint64_t n, read<uint64_t>(what));
    if (n > left() / min_bytes) {
      return fail(at, std::string(what) + " " + std::to_string(n) + " exceeds the file (" +
                          std::to_string(left()) + " bytes left)");
    }
    return n;
  }

  Status read_header() {
    DLOOP_ASSIGN_OR_RETURN(uint32_t magic, read<uint32_t>("magic"));
    if (magic != kMagic) return fail(0, "bad magic (not a GGUF file)");
    DLOOP_ASSIGN_OR_RETURN(uint32_t version, read<uint32_t>("version"));
    if (version != 2 && version != 3) {
      std::string hint = version == 0x03000000u ? " (a big-endian file?)" : "";
      return base::unimplemented(f_.name_ + ": byte 4: GGUF version " + std::to_string(version) +
                                 hint + " is not supported (only 2 and 3)");
    }
    f_.version_ = version;
    // Lower bounds per record keep a huge count from justifying a huge reservation: a key/value
    // pair is at least 8 + 1 + 4 + 1 bytes, a tensor info at least 8 + 1 + 4 + 4 + 8.
    DLOOP_ASSIGN_OR_RETURN(n_tensors_, read_count("tensor count", 25));
    DLOOP_ASSIGN_OR_RETURN(n_kv_, read_count("key/value count", 14));
    return Status();
  }

  Status read_kvs() {
    f_.kvs_.reserve(std::min(n_kv_, kMaxReserve));
    for (uint64_t i = 0; i < n_kv_; ++i) {
      uint64_t at = pos_;
      GgufKv kv;
      DLOOP_ASSIGN_OR_RETURN(kv.key, read_string("key #" + std::to_string(i)));
      if (kv.key.empty()) return fail(at, "key #" + std::to_string(i) + " is empty");
      if (!f_.kv_index_.emplace(kv.key, f_.kvs_.size()).second) {
        return fail(at, "duplicate key " + quoted(kv.key));
      }
      DLOOP_RETURN_IF_ERROR(read_value(kv));
      f_.kvs_.push_back(std::move(kv));
    }
    return Status();
  }

  Result<GgufType> read_type(std::string_view what) {
    uint64_t at = pos_;
    DLOOP_ASSIGN_OR_RETURN(uint32_t t, read<uint32_t>(what));
    if (t > kMaxType) return fail(at, std::string(what) + " " + std::to_string(t) + " is unknown");
    return static_cast<GgufType>(t);
  }

  Status read_value(GgufKv& kv) {
    std::string ctx = "key " + quoted(kv.key);
    GgufValue& v = kv.value;
    DLOOP_ASSIGN_OR_RETURN(v.type_, read_type(ctx + ": value type"));
    v.elem_type_ = v.type_;
    v.count_ = 1;
    if (v.type_ == GgufType::kArray) {
      DLOOP_ASSIGN_OR_RETURN(v.elem_type_, read_type(ctx + ": array element type"));
      if (v.elem_type_ == GgufType::kArray) return fail(pos_ - 4, ctx + ": nested arrays are not supported");
      uint64_t min_bytes = v.elem_type_ == GgufType::kString ? 8 : scalar_bytes(v.elem_type_);
      DLOOP_ASSIGN_OR_RETURN(v.count_, read_count(ctx + ": array count", min_bytes));
    }
    if (v.elem_type_ == GgufType::kString) {
      v.strings_.reserve(std::min(v.count_, kMaxReserve));
      for (uint64_t i = 0; i < v.count_; ++i) {
        DLOOP_ASSIGN_OR_RETURN(std::string_view s, read_string(ctx));
        v.strings_.push_back(s);
      }
      return Status();
    }
    uint64_t n = v.count_ * scalar_bytes(v.elem_type_);  // cannot overflow: read_count bounded it
    DLOOP_RETURN_IF_ERROR(need(n, ctx + ": value"));
    v.raw_ = p_ + pos_;
    if (v.elem_type_ == GgufType::kBool) {
      for (uint64_t i = 0; i < n; ++i) {
        if (v.raw_[i] > 1) {
          return fail(pos_ + i, ctx + ": bool value " + std::to_string(v.raw_[i]) + " is not 0 or 1");
        }
      }
    }
    pos_ += n;
    return Status();
  }

  Status read_alignment() {
    const GgufValue* v = f_.find("general.alignment");
    if (v == nullptr) return Status();
    std::string where = f_.name_ + ": key 'general.alignment': ";
    if (v->type() != GgufType::kU32) {
      return base::data_loss(where + "expected u32, got " + gguf_type_name(v->type()));
    }
    uint64_t a = *v->uint_at(0);
    if (a == 0 || (a & (a - 1)) != 0) {
      return base::data_loss(where + "alignment " + std::to_string(a) + " is not a power of two");
    }
    f_.alignment_ = static_cast<uint32_t>(a);
    return Status();
  }

  Status read_tensor_infos() {
    f_.tensors_.reserve(std::min(n_tensors_, kMaxReserve));
    for (uint64_t i = 0; i < n_tensors_; ++i) {
      GgufTensor t;
      DLOOP_RETURN_IF_ERROR(read_tensor_info(i, t));
      f_.tensors_.push_back(std::move(t));
    }
    // Indexed only now: the names live in tensors_, which no longer moves.
    for (size_t i = 0; i < f_.tensors_.size(); ++i) f_.tensor_index_.emplace(f_.tensors_[i].name, i);
    return Status();
  }

  Status read_tensor_info(uint64_t index, GgufTensor& t) {
    uint64_t at = pos_;
    std::string ctx = "tensor #" + std::to_string(index);
    DLOOP_ASSIGN_OR_RETURN(std::string_view name, read_string(ctx + " name"));
    if (name.empty()) return fail(at, ctx + " has an empty name");
    if (name.size() > kMaxNameBytes) {
      return fail(at, ctx + ": name length " + std::to_string(name.size()) + " exceeds " +
                          std::to_string(kMaxNameBytes) + " bytes");
    }
    t.name = std::string(name);
    ctx = "tensor " + quoted(name);
    if (!names_.emplace(name).second) return fail(at, "duplicate " + ctx);
    uint64_t dims_at = pos_;
    DLOOP_ASSIGN_OR_RETURN(uint32_t n_dims, read<uint32_t>(ctx + ": n_dims"));
    if (n_dims > kMaxDims) {
      return fail(dims_at, ctx + ": n_dims " + std::to_string(n_dims) + " exceeds " + std::to_string(kMaxDims));
    }
    t.n_dims = static_cast<int>(n_dims);
    for (int d = 0; d < t.n_dims; ++d) {
      uint64_t ne_at = pos_;
      DLOOP_ASSIGN_OR_RETURN(t.ne[d], read<int64_t>(ctx + ": ne[" + std::to_string(d) + "]"));
      if (t.ne[d] < 0) {
        return fail(ne_at, ctx + ": ne[" + std::to_string(d) + "] = " + std::to_string(t.ne[d]) + " is negative");
      }
    }
    uint64_t type_at = pos_;
    DLOOP_ASSIGN_OR_RETURN(uint32_t type_id, read<uint32_t>(ctx + ": type"));
    DLOOP_RETURN_IF_ERROR(set_type(t, type_id, type_at, ctx));
    DLOOP_ASSIGN_OR_RETURN(t.offset, read<uint64_t>(ctx + ": offset"));
    return compute_size(t, dims_at, ctx);
  }

  Status set_type(GgufTensor& t, uint32_t type_id, uint64_t at, const std::string& ctx) {
    std::optional<kernels::DTypeInfo> info = kernels::dtype_info(type_id);
    if (info) {
      t.type = info->type;
      return Status();
    }
    const char* known = ggml_type_name(type_id);
    if (known != nullptr) {
      return base::unimplemented(f_.name_ + ": byte " + std::to_string(at) + ": " + ctx + ": type " + known +
                                 " (id " + std::to_string(type_id) + ") is not supported");
    }
    return fail(at, ctx + ": unknown type id " + std::to_string(type_id));
  }

  Status compute_size(GgufTensor& t, uint64_t at, const std::string& ctx) {
    kernels::DTypeInfo info = kernels::dtype_info(t.type);
    auto ne0 = static_cast<uint64_t>(t.ne[0]);
    if (ne0 % static_cast<uint64_t>(info.block_elems) != 0) {
      return fail(at, ctx + ": ne[0] = " + std::to_string(ne0) + " is not a multiple of the " + info.name +
                          " block size " + std::to_string(info.block_elems));
    }
    // Elements and bytes, both checked for overflow (n_elements() must stay in int64 range).
    std::optional<uint64_t> elems = 1;
    std::optional<uint64_t> bytes = mul_checked(ne0 / static_cast<uint64_t>(info.block_elems),
                                                static_cast<uint64_t>(info.block_bytes));
    for (int d = 0; d < 4 && elems && bytes; ++d) {
      elems = mul_checked(*elems, static_cast<uint64_t>(t.ne[d]));
      if (d > 0 && bytes) bytes = mul_checked(*bytes, static_cast<uint64_t>(t.ne[d]));
    }
    if (!elems || !bytes || *elems > static_cast<uint64_t>(INT64_MAX)) {
      return fail(at, ctx + ": shape overflows");
    }
    if (*bytes > size_) {
      return fail(at, ctx + ": " + std::to_string(*bytes) + " bytes of data exceed the file (" +
                          std::to_string(size_) + " bytes)");
    }
    t.n_bytes = *bytes;
    return Status();
  }

  // Tensors must follow info order: the first at 0, each next at the previous end padded to the
  // alignment, and every one inside the file.
  Status place_tensors() {
    std::optional<uint64_t> data = align_up(pos_, f_.alignment_);
    if (!data) return fail(pos_, "data blob offset overflows");
    f_.data_offset_ = *data;
    uint64_t expected = 0;
    for (GgufTensor& t : f_.tensors_) {
      std::string ctx = f_.name_ + ": tensor " + quoted(t.name) + ": ";
      if (t.offset != expected) {
        return base::data_loss(ctx + "has offset " + std::to_string(t.offset) + ", expected " +
                               std::to_string(expected));
      }
      // Offsets grow by sizes each below the file size, so these sums cannot overflow.
      uint64_t begin = f_.data_offset_ + t.offset;
      uint64_t end = begin + t.n_bytes;
      if (begin > size_ || end > size_) {
        return base::data_loss(ctx + "data at bytes [" + std::to_string(begin) + ", " + std::to_string(end) +
                               ") lies outside the file (" + std::to_string(size_) + " bytes)");
      }
      t.data = p_ + begin;
      expected = *align_up(t.offset + t.n_bytes, f_.alignment_);
    }
    return Status();
  }

  GgufFile& f_;
  const uint8_t* p_;
  uint64_t size_;
  uint64_t pos_ = 0;
  uint64_t n_tensors_ = 0;
  uint64_t n_kv_ = 0;
  std::unordered_set<std::string_view> names_;  // tensor names seen (views into the file)
};

Result<std::unique_ptr<GgufFile>> GgufFile::from_bytes(std::string bytes, std::string name) {
  std::unique_ptr<GgufFile> f(new GgufFile());
  f->name_ = std::move(name);
  f->owned_ = std::move(bytes);
  f->bytes_ = reinterpret_cast<const uint8_t*>(f->owned_.data());
  f->size_ = f->owned_.size();
  DLOOP_RETURN_IF_ERROR(GgufParser(*f).parse());
  return f;
}

Result<std::unique_ptr<GgufFile>> GgufFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return base::io_error(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return base::io_error(path + ": cannot stat: " + std::strerror(err));
  }
  std::unique_ptr<GgufFile> f(new GgufFile());
  f->name_ = path;
  f->size_ = static_cast<uint64_t>(st.st_size);
  if (f->size_ > 0) {
    void* m = ::mmap(nullptr, f->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      return base::io_error(path + ": cannot map: " + std::strerror(err));
    }
    f->map_ = m;
    f->map_size_ = f->size_;
    f->bytes_ = static_cast<const uint8_t*>(m);
  }
  ::close(fd);  // the mapping stays valid without the descriptor
  DLOOP_RETURN_IF_ERROR(GgufParser(*f).parse());
  return f;
}

GgufFile::~GgufFile() {
  if (map_ != nullptr) ::munmap(map_, map_size_);
}

}  // namespace dloop::engine
