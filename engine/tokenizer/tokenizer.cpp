// Tokenizer encode/decode and accessors (see tokenizer.h). encode: special tokens are cut out
// first (leftmost, longest), each remaining segment is pre-tokenized and every piece is BPE
// merged. decode: byte strings are concatenated. Thread-safe: the Impl is immutable and each call
// has its own workspace.
#include "dloop/engine/tokenizer.h"

#include "tokenizer_impl.h"

namespace dloop::engine {
namespace {

const std::shared_ptr<const Tokenizer::Impl>& empty_impl() {
  static const std::shared_ptr<const Tokenizer::Impl> impl = std::make_shared<Tokenizer::Impl>();
  return impl;
}

// The longest special token that starts at text[i] and may match, as (id, length); id -1 if none.
std::pair<int32_t, size_t> match_special(const Tokenizer::Impl& t, std::string_view text, size_t i,
                                         bool parse_special) {
  for (const Tokenizer::Impl::Special& s : t.specials_by_byte[static_cast<unsigned char>(text[i])]) {
    if (s.control && !parse_special) continue;
    const std::string& b = t.bytes[s.id];
    if (text.compare(i, b.size(), b) == 0) return {s.id, b.size()};
  }
  return {-1, 0};
}

struct EncodeState {
  std::vector<std::string_view> pieces;
  BpeMerges::Workspace ws;
};

void encode_plain(const Tokenizer::Impl& t, std::string_view text, std::vector<int32_t>& out, EncodeState& st) {
  if (text.empty()) return;
  st.pieces.clear();
  t.pre.split(text, st.pieces);
  for (std::string_view piece : st.pieces) t.merges.apply(piece, t.byte_tokens, out, st.ws);
}

}  // namespace

Tokenizer::Tokenizer() : impl_(empty_impl()) {}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool parse_special) const {
  std::vector<int32_t> out;
  const Impl& t = *impl_;
  if (t.bytes.empty()) return out;
  out.reserve(text.size() / 3 + 1);
  EncodeState st;
  size_t plain = 0;  // start of the text not yet encoded
  for (size_t i = 0; i < text.size();) {
    auto [id, len] = match_special(t, text, i, parse_special);
    if (id < 0) {
      ++i;
      continue;
    }
    encode_plain(t, text.substr(plain, i - plain), out, st);
    out.push_back(id);
    i += len;
    plain = i;
  }
  encode_plain(t, text.substr(plain), out, st);
  return out;
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool render_special) const {
  std::string out;
  const Impl& t = *impl_;
  for (int32_t id : ids) {
    if (id < 0 || id >= n_vocab()) continue;
    if (!render_special && t.types[id] == TokenType::kControl) continue;
    out += t.bytes[id];
  }
  return out;
}

std::string Tokenizer::token_text(int32_t id) const {
  return id >= 0 && id < n_vocab() ? impl_->bytes[id] : std::string();
}

TokenType Tokenizer::token_type(int32_t id) const {
  return id >= 0 && id < n_vocab() ? impl_->types[id] : TokenType::kUndefined;
}

std::optional<int32_t> Tokenizer::find_special(std::string_view text) const {
  auto it = impl_->special_ids.find(std::string(text));
  if (it == impl_->special_ids.end()) return std::nullopt;
  return it->second;
}

int32_t Tokenizer::n_vocab() const { return static_cast<int32_t>(impl_->bytes.size()); }
int32_t Tokenizer::bos_id() const { return impl_->bos; }
int32_t Tokenizer::eos_id() const { return impl_->eos; }
int32_t Tokenizer::eot_id() const { return impl_->eot; }
int32_t Tokenizer::pad_id() const { return impl_->pad; }
int32_t Tokenizer::mask_id() const { return impl_->mask; }
bool Tokenizer::add_bos() const { return impl_->add_bos; }
const std::string& Tokenizer::pre_name() const { return impl_->pre.name(); }

}  // namespace dloop::engine
