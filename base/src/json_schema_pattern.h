// Private: the compiled form of a JSON Schema `pattern`. A Thompson NFA over Unicode code points:
// matching keeps a set of live states per input position, so time is O(text x program) and the
// stack never grows with the input (std::regex recurses per character and overflows on long
// strings). Immutable after compile; safe to share between threads.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "dloop/base/json_schema.h"

namespace dloop::base {

class SchemaPattern {
 public:
  // A set of code points as sorted, disjoint, inclusive ranges.
  using Ranges = std::vector<std::pair<uint32_t, uint32_t>>;

  enum class Op : uint8_t {
    kSet,    // consume one code point in sets[arg]
    kSplit,  // continue at next and at arg
    kJmp,    // continue at arg
    kStart,  // assert position 0
    kEnd,    // assert end of text
    kMatch,
  };
  struct Inst {
    Op op;
    uint32_t arg = 0;   // set index or jump target
    uint32_t next = 0;  // kSplit's first branch (always pc + 1 when emitted)
  };

  std::vector<Inst> program;  // entry at 0
  std::vector<Ranges> sets;

  bool set_contains(uint32_t set, uint32_t cp) const;
};

}  // namespace dloop::base
