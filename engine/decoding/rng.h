// SplitMix64: the one random generator of the decoder, shared bit for bit with the NumPy
// reference (tests/reference/SPEC.md). Not thread-safe; one per request.
#pragma once

#include <cstdint>

namespace dloop::engine::detail {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    state_ += 0x9E3779B97F4A7C15ull;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // A float64 in [0, 1) from the top 53 bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // The generator is a counter: the k-th draw from state s is mix(s + k * gamma), so a device
  // (or any other thread) can draw number k without the k - 1 before it.
  uint64_t state() const { return state_; }
  void skip(uint64_t n) { state_ += n * 0x9E3779B97F4A7C15ull; }

 private:
  uint64_t state_;
};

}  // namespace dloop::engine::detail
