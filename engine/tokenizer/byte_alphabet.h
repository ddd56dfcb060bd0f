// GPT-2's bytes-to-unicode alphabet: every byte maps to one printable code point (printable
// Latin-1 bytes to themselves, the rest to U+0100 upwards), so byte-level BPE token texts are
// readable strings. Also the small UTF-8 helpers the tokenizer needs. Private to
// engine/tokenizer. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace dloop::engine {

// The code point that stands for byte b.
uint32_t byte_to_codepoint(uint8_t b);
// The byte a code point stands for, or -1 when it is not in the alphabet.
int byte_from_codepoint(uint32_t cp);
// UTF-8 encoding of the code point that stands for byte b ("Ġ" for 0x20).
std::string byte_char(uint8_t b);

// Decodes a token text written in the alphabet back to bytes. A code point outside the alphabet
// (or an invalid UTF-8 byte) is kept as its own bytes, so decoding never fails.
std::string decode_alphabet(std::string_view text);

// Length in bytes of the valid UTF-8 sequence starting at s[i], or 0 when s[i] does not start a
// valid, complete, shortest-form sequence. Precondition: i < s.size().
size_t utf8_sequence_length(std::string_view s, size_t i);
// Appends the UTF-8 encoding of cp.
void append_utf8(std::string& out, uint32_t cp);

}  // namespace dloop::engine
