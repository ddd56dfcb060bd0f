// GPT-2 bytes-to-unicode alphabet and UTF-8 helpers (see byte_alphabet.h). The tables are built
// once, at first use, by a thread-safe static initialiser.
#include "byte_alphabet.h"

#include <array>

namespace dloop::engine {
namespace {

struct Alphabet {
  std::array<uint32_t, 256> to_cp{};
  std::array<int16_t, 512> from_cp{};  // every alphabet code point is below 0x144

  Alphabet() {
    from_cp.fill(-1);
    uint32_t extra = 0;
    for (uint32_t b = 0; b < 256; ++b) {
      bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      to_cp[b] = printable ? b : 256 + extra++;
      from_cp[to_cp[b]] = static_cast<int16_t>(b);
    }
  }
};

const Alphabet& alphabet() {
  static const Alphabet a;
  return a;
}

bool is_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

}  // namespace

uint32_t byte_to_codepoint(uint8_t b) { return alphabet().to_cp[b]; }

int byte_from_codepoint(uint32_t cp) { return cp < 512 ? alphabet().from_cp[cp] : -1; }

std::string byte_char(uint8_t b) {
  std::string out;
  append_utf8(out, byte_to_codepoint(b));
  return out;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

size_t utf8_sequence_length(std::string_view s, size_t i) {
  auto c0 = static_cast<unsigned char>(s[i]);
  if (c0 < 0x80) return 1;
  size_t n = 0;
  uint32_t cp = 0;
  if ((c0 & 0xE0) == 0xC0) {
    n = 2;
    cp = c0 & 0x1F;
  } else if ((c0 & 0xF0) == 0xE0) {
    n = 3;
    cp = c0 & 0x0F;
  } else if ((c0 & 0xF8) == 0xF0) {
    n = 4;
    cp = c0 & 0x07;
  } else {
    return 0;
  }
  if (s.size() - i < n) return 0;
  for (size_t k = 1; k < n; ++k) {
    auto c = static_cast<unsigned char>(s[i + k]);
    if (!is_continuation(c)) return 0;
    cp = (cp << 6) | (c & 0x3F);
  }
  static constexpr uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

std::string decode_alphabet(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    size_t n = utf8_sequence_length(text, i);
    if (n == 0) {  // invalid byte: keep it
      out += text[i++];
      continue;
    }
    uint32_t cp = static_cast<unsigned char>(text[i]) & (n == 1 ? 0x7F : (0xFF >> (n + 1)));
    for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    int b = byte_from_codepoint(cp);
    if (b >= 0) {
      out += static_cast<char>(b);
    } else {
      out.append(text.substr(i, n));
    }
    i += n;
  }
  return out;
}

}  // namespace dloop::engine
