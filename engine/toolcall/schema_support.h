// What the infilling decoder needs from a compiled JSON Schema node: the decodable-subset check
// (errors carry the JSON path), numeric ranges, the candidate literals of enum/const/boolean nodes
// and the value-start texts used to score alternatives. Thread-safe (pure functions).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dloop/base/json_schema.h"
#include "dloop/base/status.h"

namespace dloop::engine::toolcall {

constexpr size_t kMaxEnumValues = 256;     // larger enums are refused (scoring cost grows with them)
constexpr int64_t kMaxArrayItems = 8;      // array length considered when maxItems is absent or larger
constexpr int kMaxNesting = 16;            // object/array nesting the decoder lays out

// ok, or invalid_argument "#/path: reason" for a node the decoder cannot guarantee.
base::Status check_decodable(const base::SchemaNode& node, const std::string& path = "#", int depth = 0);

// The accepted range of a number node (inclusive after exclusive bounds are applied).
struct NumberRange {
  double lo = -1e300, hi = 1e300;
  bool allow_minus() const { return lo < 0; }
};
// Empty when no value of the type fits (e.g. exclusiveMinimum 1, exclusiveMaximum 2 for an integer).
std::optional<NumberRange> number_range(const base::SchemaNode& node, bool integer);
// The value clamped into the range, as JSON number text.
std::string clamp_number_text(const std::string& text, const NumberRange& range, bool integer);

// Whether a literal value satisfies the node's own (non-structural) constraints: type, bounds,
// lengths, enum, const. Used to filter enum/const candidates.
bool literal_fits(const base::SchemaNode& node, uint8_t types, const base::Json& value);
// The JSON texts (Python style) of the literal candidates of a node with enum/const, or of a
// boolean node ("true", "false"); empty when the node is not a literal choice.
std::vector<std::string> literal_candidates(const base::SchemaNode& node, uint8_t types);
// Texts a value of this node can start with (for scoring alternatives): "\"", "{", "[", "null",
// "true"/"false", digits and "-", or the literal candidates.
std::vector<std::string> start_texts(const base::SchemaNode& node, uint8_t types);
// types with integer folded into number when both are present, and the "any" schema narrowed to
// the scalar types plus object and array.
int count_types(uint8_t types);

}  // namespace dloop::engine::toolcall
