// The GGUF fuzz entry shared by the libFuzzer target (gguf_fuzz.cpp's LLVMFuzzerTestOneInput)
// and the GoogleTest replay (gguf_fuzz_replay_test.cpp). Thread-safe (no shared state).
#pragma once

#include <cstddef>
#include <cstdint>

namespace dloop::fuzz {

// How far an input got; the replay test checks that mutations reach every level.
enum class GgufFuzzLevel { kRejected = 0, kParsed = 1, kTokenizer = 2 };

// Parses `data` as a GGUF file; on success reads every value through every typed getter, touches
// the first and last byte of every tensor, describes the file, builds the tokenizer and, when that
// succeeds, checks the encode/decode round trip and renders a chat prompt. Aborts on a broken
// invariant (a round trip that loses bytes); errors are expected and ignored.
GgufFuzzLevel fuzz_gguf(const uint8_t* data, size_t size);

}  // namespace dloop::fuzz
