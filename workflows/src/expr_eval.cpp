// The evaluator of the expression language: walks the AST over an EvalContext. Values read from
// the context are borrowed, not copied, until an operator needs its own copy. Evaluation is
// linear in the size of the AST (no loops, no recursion beyond the parsed depth) and never
// touches anything outside the context. Thread-safe for concurrent evaluations of one Expr.
#include <algorithm>
#include <string>

#include "dloop/base/strings.h"
#include "diagnostics.h"
#include "dloop/workflows/expr.h"
#include "expr_ast.h"

namespace dloop::workflows {
namespace detail {

const char* json_type_phrase(const base::Json& v) {
  switch (v.type()) {
    case base::Json::Type::kNull: return "null";
    case base::Json::Type::kBool: return "a boolean";
    case base::Json::Type::kInt:
    case base::Json::Type::kDouble: return "a number";
    case base::Json::Type::kString: return "a string";
    case base::Json::Type::kArray: return "a list";
    case base::Json::Type::kObject: return "an object";
  }
  return "a value";
}

bool json_equal(const base::Json& a, const base::Json& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_int() && b.is_int()) return a.as_int() == b.as_int();
    return a.as_double() == b.as_double();
  }
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case base::Json::Type::kNull: return true;
    case base::Json::Type::kBool: return a.as_bool() == b.as_bool();
    case base::Json::Type::kString: return a.as_string() == b.as_string();
    case base::Json::Type::kArray: {
      const auto& x = a.as_array();
      const auto& y = b.as_array();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!json_equal(x[i], y[i])) return false;
      }
      return true;
    }
    case base::Json::Type::kObject: {
      if (a.size() != b.size()) return false;
      for (const auto& [k, v] : a.as_object()) {
        const base::Json* other = b.find(k);
        if (!other || !json_equal(v, *other)) return false;
      }
      return true;
    }
    default: return false;
  }
}

class Evaluator {
 public:
  Evaluator(std::string_view text, const EvalContext& context) : text_(text), context_(context) {}

  base::Status eval(const Node& n, Val& out) {
    switch (n.kind) {
      case NodeKind::kLiteral: out.ref = &n.literal; return {};
      case NodeKind::kArray: return eval_array(n, out);
      case NodeKind::kName: return eval_name(n, out);
      case NodeKind::kMember: return eval_member(n, out);
      case NodeKind::kIndex: return eval_index(n, out);
      case NodeKind::kNot: {
        Val v;
        DLOOP_RETURN_IF_ERROR(eval(*n.kids[0], v));
        out.own = base::Json(!truthy(v.get()));
        return {};
      }
      case NodeKind::kAnd:
      case NodeKind::kOr: {
        DLOOP_RETURN_IF_ERROR(eval(*n.kids[0], out));
        const bool t = truthy(out.get());
        if ((n.kind == NodeKind::kAnd) != t) return {};  // short-circuit: the left operand
        out = Val();
        return eval(*n.kids[1], out);
      }
      case NodeKind::kCompare: return eval_compare(n, out);
      case NodeKind::kCall: return eval_call(n, out);
    }
    return base::internal_error("bad expression node");
  }

 private:
  std::string src(const Node& n) const { return std::string(text_.substr(n.begin, n.end - n.begin)); }

  base::Status eval_array(const Node& n, Val& out) {
    out.own = base::Json::array();
    for (const auto& k : n.kids) {
      Val v;
      DLOOP_RETURN_IF_ERROR(eval(*k, v));
      out.own.push_back(std::move(v).take());
    }
    return {};
  }

  base::Status eval_name(const Node& n, Val& out) {
    const base::Json* v = context_.lookup(n.name);
    if (!v) {
      std::string msg = "unknown name '" + n.name + "'";
      if (auto close = detail::closest_name(n.name, context_.names())) msg += " (did you mean '" + *close + "'?)";
      return base::not_found(msg);
    }
    out.ref = v;
    return {};
  }

  // Replaces `out` by its child `child` (borrowed when out is borrowed).
  static void descend(Val& out, const base::Json& child) {
    if (out.ref) {
      out.ref = &child;
    } else {
      base::Json copy = child;
      out.own = std::move(copy);
    }
  }

  base::Status eval_member(const Node& n, Val& out) {
    DLOOP_RETURN_IF_ERROR(eval(*n.kids[0], out));
    return member(src(*n.kids[0]), n.name, out);
  }

  static base::Status member(const std::string& base_text, const std::string& key, Val& out) {
    const base::Json& v = out.get();
    if (v.is_null()) return base::not_found(base_text + " is null, so it has no key '" + key + "'");
    if (!v.is_object()) {
      return base::invalid_argument(base_text + " is " + json_type_phrase(v) + ", not an object (reading '" + key + "')");
    }
    const base::Json* child = v.find(key);
    if (!child) {
      std::string msg = base_text + " has no key '" + key + "'";
      std::vector<std::string> keys;
      for (const auto& m : v.as_object()) keys.push_back(m.first);
      if (auto close = detail::closest_name(key, keys)) msg += " (did you mean '" + *close + "'?)";
      return base::not_found(msg);
    }
    descend(out, *child);
    return {};
  }

  base::Status eval_index(const Node& n, Val& out) {
    Val idx;
    DLOOP_RETURN_IF_ERROR(eval(*n.kids[1], idx));
    DLOOP_RETURN_IF_ERROR(eval(*n.kids[0], out));
    const base::Json& i = idx.get();
    const std::string base_text = src(*n.kids[0]);
    if (i.is_string()) return member(base_text, i.as_string(), out);
    const base::Json& v = out.get();
    if (!i.is_int()) {
      return base::invalid_argument("an index must be an integer or a string, got " + std::string(json_type_phrase(i)));
    }
    if (v.is_null()) return base::not_found(base_text + " is null, so it has no element " + std::to_string(i.as_int()));
    if (!v.is_array()) {
      return base::invalid_argument(base_text + " is " + json_type_phrase(v) + ", not a list (indexing with " +
                                    std::to_string(i.as_int()) + ")");
    }
    const int64_t size = static_cast<int64_t>(v.size());
    int64_t k = i.as_int();
    if (k < 0) k += size;  // -1 is the last element
    if (k < 0 || k >= size) {
      return base::not_found("index " + std::to_string(i.as_int()) + " is out of range for " + base_text +
                             " (length " + std::to_string(size) + ")");
    }
    descend(out, v.as_array()[static_cast<size_t>(k)]);
    return {};
  }

  base::Status eval_compare(const Node& n, Val& out) {
    Val a, b;
    DLOOP_RETURN_IF_ERROR(eval(*n.kids[0], a));
    DLOOP_RETURN_IF_ERROR(eval(*n.kids[1], b));
    const base::Json& x = a.get();
    const base::Json& y = b.get();
    if (n.op == CompareOp::kEq || n.op == CompareOp::kNe) {
      out.own = base::Json(json_equal(x, y) == (n.op == CompareOp::kEq));
      return {};
    }
    int c;
    if (x.is_number() && y.is_number()) {
      if (x.is_int() && y.is_int()) c = x.as_int() < y.as_int() ? -1 : (x.as_int() > y.as_int() ? 1 : 0);
      else c = x.as_double() < y.as_double() ? -1 : (x.as_double() > y.as_double() ? 1 : 0);
      if (!x.is_int() || !y.is_int()) {
        // NaN compares false with everything.
        if (x.as_double() != x.as_double() || y.as_double() != y.as_double()) { out.own = base::Json(false); return {}; }
      }
    } else if (x.is_string() && y.is_string()) {
      int r = x.as_string().compare(y.as_string());
      c = r < 0 ? -1 : (r > 0 ? 1 : 0);
    } else {
      static const char* names[] = {"==", "!=", "<", "<=", ">", ">="};
      return base::invalid_argument(std::string("cannot compare ") + json_type_phrase(x) + " with " +
                                    json_type_phrase(y) + " using '" + names[static_cast<int>(n.op)] +
                                    "' (only numbers with numbers and strings with strings)");
    }
    bool r = false;
    switch (n.op) {
      case CompareOp::kLt: r = c < 0; break;
      case CompareOp::kLe: r = c <= 0; break;
      case CompareOp::kGt: r = c > 0; break;
      case CompareOp::kGe: r = c >= 0; break;
      default: break;
    }
    out.own = base::Json(r);
    return {};
  }

  base::Status eval_call(const Node& n, Val& out) {
    const Function* f = find_function(n.name);
    if (!f) return base::internal_error("unknown function '" + n.name + "'");
    if (f->lazy) {  // default(x, fallback): x unless it is missing or null
      base::Status s = eval(*n.kids[0], out);
      if (s.ok() && !out.get().is_null()) return {};
      if (!s.ok() && s.code() != base::Code::kNotFound) return s;
      out = Val();
      return eval(*n.kids[1], out);
    }
    std::vector<base::Json> args;
    args.reserve(n.kids.size());
    for (const auto& k : n.kids) {
      Val v;
      DLOOP_RETURN_IF_ERROR(eval(*k, v));
      args.push_back(std::move(v).take());
    }
    auto r = f->call(args);
    if (!r.ok()) return base::Status(r.status().code(), n.name + "(): " + r.status().message());
    out.own = std::move(r).value();
    return {};
  }

  std::string_view text_;
  const EvalContext& context_;
};

}  // namespace detail

void EvalContext::set(std::string name, base::Json value) {
  auto owned = std::make_shared<const base::Json>(std::move(value));
  const base::Json* p = owned.get();
  for (auto& e : entries_) {
    if (e.name == name) { e.owned = std::move(owned); e.value = p; return; }
  }
  entries_.push_back({std::move(name), std::move(owned), p});
}

void EvalContext::bind(std::string name, const base::Json& value) {
  for (auto& e : entries_) {
    if (e.name == name) { e.owned.reset(); e.value = &value; return; }
  }
  entries_.push_back({std::move(name), nullptr, &value});
}

const base::Json* EvalContext::lookup(std::string_view name) const {
  for (const auto& e : entries_) {
    if (e.name == name) return e.value;
  }
  return nullptr;
}

std::vector<std::string> EvalContext::names() const {
  std::vector<std::string> out;
  for (const auto& e : entries_) out.push_back(e.name);
  return out;
}

base::Result<base::Json> evaluate(const Expr& expr, const EvalContext& context) {
  if (!expr.root_) return base::invalid_argument("empty expression");
  detail::Evaluator ev(expr.text_, context);
  detail::Val out;
  base::Status s = ev.eval(*expr.root_, out);
  if (!s.ok()) return base::Status(s.code(), "${{ " + expr.text_ + " }}: " + s.message());
  return std::move(out).take();
}

bool truthy(const base::Json& v) {
  switch (v.type()) {
    case base::Json::Type::kNull: return false;
    case base::Json::Type::kBool: return v.as_bool();
    case base::Json::Type::kInt: return v.as_int() != 0;
    case base::Json::Type::kDouble: return v.as_double() != 0;
    case base::Json::Type::kString: return !v.as_string().empty();
    case base::Json::Type::kArray:
    case base::Json::Type::kObject: return v.size() != 0;
  }
  return false;
}

std::string to_text(const base::Json& v) {
  if (v.is_string()) return v.as_string();
  if (v.is_null()) return "";
  return v.dump(base::Json::Style::kCompact);
}

}  // namespace dloop::workflows
