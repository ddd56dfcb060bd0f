// Names of every ggml tensor type id, including those dloop cannot run, so that the GGUF reader
// can say "type Q5_K (id 13) is not supported" instead of "unknown type id 13". Private to
// engine/gguf. Pure; thread-safe.
#pragma once

#include <cstdint>

namespace dloop::engine {

// The ggml name of a type id ("Q5_K"), or nullptr for an id ggml does not define (or retired).
inline const char* ggml_type_name(uint32_t id) {
  static const char* const kNames[] = {
      "F32",  "F16",  "Q4_0",    "Q4_1",    nullptr, nullptr, "Q5_0", "Q5_1", "Q8_0",  "Q8_1",
      "Q2_K", "Q3_K", "Q4_K",    "Q5_K",    "Q6_K",  "Q8_K",  "IQ2_XXS", "IQ2_XS", "IQ3_XXS",
      "IQ1_S", "IQ4_NL", "IQ3_S", "IQ2_S", "IQ4_XS", "I8", "I16", "I32", "I64", "F64", "IQ1_M",
      "BF16", nullptr, nullptr, nullptr, "TQ1_0", "TQ2_0", nullptr, nullptr, nullptr, "MXFP4", "NVFP4",
  };
  return id < sizeof(kNames) / sizeof(kNames[0]) ? kNames[id] : nullptr;
}

}  // namespace dloop::engine
