// The expression AST shared by the parser, the evaluator and the function table (private to
// workflows/). Nodes are immutable once parsed; an Expr shares its tree between copies.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "dloop/base/json.h"
#include "dloop/base/status.h"

namespace dloop::workflows::detail {

enum class NodeKind {
  kLiteral,  // literal
  kArray,    // [kids...]
  kName,     // a root name: name
  kMember,   // kids[0].name
  kIndex,    // kids[0][kids[1]]
  kNot,      // !kids[0]
  kAnd,      // kids[0] && kids[1]
  kOr,       // kids[0] || kids[1]
  kCompare,  // kids[0] op kids[1]
  kCall,     // name(kids...)
};

enum class CompareOp { kEq, kNe, kLt, kLe, kGt, kGe };

struct Node {
  NodeKind kind = NodeKind::kLiteral;
  size_t begin = 0;  // byte range of the node's source text
  size_t end = 0;
  size_t name_offset = 0;  // kName/kMember/kCall: where the name starts
  base::Json literal;
  std::string name;
  CompareOp op = CompareOp::kEq;
  std::vector<std::unique_ptr<Node>> kids;
};

// A value during evaluation: a borrowed reference into the context, or an owned value.
struct Val {
  const base::Json* ref = nullptr;
  base::Json own;
  const base::Json& get() const { return ref ? *ref : own; }
  base::Json take() && { return ref ? *ref : std::move(own); }
};

class Evaluator;

// One entry of the function table. Arguments are evaluated before the call except for lazy
// functions (default), which get the evaluator and the argument nodes.
struct Function {
  const char* name;
  size_t min_args;
  size_t max_args;  // SIZE_MAX: variadic
  base::Result<base::Json> (*call)(const std::vector<base::Json>& args);
  bool lazy = false;
};

const Function* find_function(const std::string& name);
const std::vector<Function>& functions();

// "a number", "a string", ... for error messages.
const char* json_type_phrase(const base::Json& v);

}  // namespace dloop::workflows::detail

namespace dloop::workflows::detail {
// Deep equality where numbers compare by value (1 == 1.0) and object key order does not matter.
bool json_equal(const base::Json& a, const base::Json& b);
}  // namespace dloop::workflows::detail
