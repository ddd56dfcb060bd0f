// calculator: evaluates an arithmetic expression with a recursive-descent parser over doubles.
// Grammar: + - * / % ^ (right-associative power, binding tighter than unary minus: -2^2 = -4),
// parentheses, numbers (1, 2.5, 1e-3), constants pi and e, and the functions sqrt abs min max
// round floor ceil log exp (log(x) is natural, log(x, base) any base). Nothing else: there are no
// variables, no assignment, no code execution. Division by zero and non-finite results are tool
// errors. `with: {max_length}` caps the expression. Pure computation; thread-safe.
#include <cmath>
#include <cstdlib>
#include <numbers>
#include <string>

#include "builtin/builtin.h"

namespace dloop::tools::builtin {
namespace {

constexpr size_t kMaxDepth = 100;

class Evaluator {
 public:
  explicit Evaluator(std::string_view text) : text_(text) {}

  // The value, or an error message for the model.
  base::Result<double> run() {
    auto v = expr(0);
    if (!v.ok()) return v;
    skip_space();
    if (pos_ < text_.size()) return error("unexpected '" + std::string(1, text_[pos_]) + "'");
    if (!std::isfinite(*v)) return base::out_of_range("the result is not a finite number");
    return v;
  }

 private:
  base::Status error(const std::string& what) const {
    return base::invalid_argument(what + " at position " + std::to_string(pos_ + 1));
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n')) ++pos_;
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) { ++pos_; return true; }
    return false;
  }

  // expr := term (('+' | '-') term)*
  base::Result<double> expr(size_t depth) {
    if (depth > kMaxDepth) return error("expression nests too deeply");
    DLOOP_ASSIGN_OR_RETURN(double v, term(depth));
    while (true) {
      if (eat('+')) { DLOOP_ASSIGN_OR_RETURN(double r, term(depth)); v += r; }
      else if (eat('-')) { DLOOP_ASSIGN_OR_RETURN(double r, term(depth)); v -= r; }
      else return v;
    }
  }

  // term := unary (('*' | '/' | '%') unary)*
  base::Result<double> term(size_t depth) {
    DLOOP_ASSIGN_OR_RETURN(double v, unary(depth));
    while (true) {
      char op;
      if (eat('*')) op = '*';
      else if (eat('/')) op = '/';
      else if (eat('%')) op = '%';
      else return v;
      DLOOP_ASSIGN_OR_RETURN(double r, unary(depth));
      if (op == '*') { v *= r; continue; }
      if (r == 0) return base::out_of_range(op == '/' ? "division by zero" : "modulo by zero");
      v = op == '/' ? v / r : std::fmod(v, r);
    }
  }

  // unary := ('-' | '+') unary | power
  base::Result<double> unary(size_t depth) {
    if (depth > kMaxDepth) return error("expression nests too deeply");
    if (eat('-')) { DLOOP_ASSIGN_OR_RETURN(double v, unary(depth + 1)); return -v; }
    if (eat('+')) return unary(depth + 1);
    return power(depth);
  }

  // power := primary ('^' unary)?   (right-associative; 2^-1 allowed)
  base::Result<double> power(size_t depth) {
    DLOOP_ASSIGN_OR_RETURN(double base, primary(depth));
    if (!eat('^')) return base;
    DLOOP_ASSIGN_OR_RETURN(double exponent, unary(depth + 1));
    return std::pow(base, exponent);
  }

  base::Result<double> primary(size_t depth) {
    skip_space();
    if (pos_ >= text_.size()) return error("unexpected end of the expression");
    char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      DLOOP_ASSIGN_OR_RETURN(double v, expr(depth + 1));
      if (!eat(')')) return error("missing ')'");
      return v;
    }
    if ((c >= '0' && c <= '9') || c == '.') return number();
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return call(depth);
    return error("unexpected '" + std::string(1, c) + "'");
  }

  base::Result<double> number() {
    size_t start = pos_;
    while (pos_ < text_.size() && ((text_[pos_] >= '0' && text_[pos_] <= '9') || text_[pos_] == '.')) ++pos_;
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      size_t save = pos_++;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
        while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
      } else {
        pos_ = save;  // "2e" is 2 followed by the constant e: an error below
      }
    }
    std::string s(text_.substr(start, pos_ - start));
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size()) {
      pos_ = start;
      return error("malformed number '" + s + "'");
    }
    return v;
  }

  base::Result<double> call(size_t depth) {
    size_t start = pos_;
    while (pos_ < text_.size() && ((text_[pos_] >= 'a' && text_[pos_] <= 'z') || (text_[pos_] >= 'A' && text_[pos_] <= 'Z') ||
                                   (text_[pos_] >= '0' && text_[pos_] <= '9') || text_[pos_] == '_')) {
      ++pos_;
    }
    std::string name(text_.substr(start, pos_ - start));
    if (name == "pi") return std::numbers::pi;
    if (name == "e") return std::numbers::e;
    static const char* kFunctions[] = {"sqrt", "abs", "min", "max", "round", "floor", "ceil", "log", "exp"};
    bool known = false;
    for (const char* f : kFunctions) known = known || name == f;
    if (!known) {
      pos_ = start;
      return error("unknown name '" + name + "' (functions: sqrt abs min max round floor ceil log exp; constants: pi e)");
    }
    if (!eat('(')) return error("expected '(' after " + name);
    std::vector<double> args;
    if (!eat(')')) {
      do {
        DLOOP_ASSIGN_OR_RETURN(double a, expr(depth + 1));
        args.push_back(a);
      } while (eat(','));
      if (!eat(')')) return error("missing ')' after the arguments of " + name);
    }
    return apply(name, args);
  }

  base::Result<double> apply(const std::string& f, const std::vector<double>& a) {
    auto arity = [&](size_t lo, size_t hi) -> base::Status {
      if (a.size() >= lo && a.size() <= hi) return base::Status();
      std::string want = lo == hi ? std::to_string(lo) : hi == SIZE_MAX ? "at least " + std::to_string(lo)
                                                                         : std::to_string(lo) + " or " + std::to_string(hi);
      return error(f + "() takes " + want + " argument(s), got " + std::to_string(a.size()));
    };
    if (f == "min" || f == "max") {
      DLOOP_RETURN_IF_ERROR(arity(1, SIZE_MAX));
      double v = a[0];
      for (double x : a) v = f == "min" ? std::min(v, x) : std::max(v, x);
      return v;
    }
    if (f == "log") {
      DLOOP_RETURN_IF_ERROR(arity(1, 2));
      if (a[0] <= 0) return base::out_of_range("log() of a number <= 0");
      if (a.size() == 1) return std::log(a[0]);
      if (a[1] <= 0 || a[1] == 1) return base::out_of_range("log() base must be > 0 and != 1");
      return std::log(a[0]) / std::log(a[1]);
    }
    DLOOP_RETURN_IF_ERROR(arity(1, 1));
    double x = a[0];
    if (f == "sqrt") {
      if (x < 0) return base::out_of_range("sqrt() of a negative number");
      return std::sqrt(x);
    }
    if (f == "abs") return std::fabs(x);
    if (f == "round") return std::round(x);
    if (f == "floor") return std::floor(x);
    if (f == "ceil") return std::ceil(x);
    return std::exp(x);
  }

  std::string_view text_;
  size_t pos_ = 0;
};

class Calculator final : public Tool {
 public:
  Calculator(const BuiltinSpec& spec, size_t max_length)
      : Tool(name_of(spec),
             description_of(spec, "Evaluates an arithmetic expression: + - * / % ^, parentheses, sqrt abs min "
                                  "max round floor ceil log exp, pi, e. Example: \"(2 + 3) * sqrt(16)\"."),
             builtin_schema(R"({"type": "object", "properties": {"expression": {"type": "string",
                 "description": "the expression, e.g. \"2 * (3 + 4) ^ 2\""}},
                 "required": ["expression"], "additionalProperties": false})")),
        max_length_(max_length) {}

  asio::awaitable<ToolResult> invoke(Json args, ToolContext) override {
    const std::string text = string_arg(args, "expression");
    if (text.size() > max_length_) {
      co_return fail(ToolErrorKind::kInvalidArguments,
                     "the expression is longer than " + std::to_string(max_length_) + " characters");
    }
    auto v = Evaluator(text).run();
    if (!v.ok()) {
      co_return fail(v.status().code() == base::Code::kOutOfRange ? ToolErrorKind::kFailed
                                                                  : ToolErrorKind::kInvalidArguments,
                     v.status().message());
    }
    Json result = Json::object();
    // Integral results within double's exact range are written as integers: 5, not 5.0.
    if (std::floor(*v) == *v && std::fabs(*v) <= 9007199254740992.0) {
      result.set("result", Json(static_cast<int64_t>(*v)));
    } else {
      result.set("result", Json(*v));
    }
    co_return ToolResult::success(std::move(result));
  }

 private:
  size_t max_length_;
};

}  // namespace

base::Result<std::shared_ptr<Tool>> make_calculator(const BuiltinSpec& spec, const BuiltinEnv&) {
  DLOOP_ASSIGN_OR_RETURN(auto with, WithConfig::open(name_of(spec), spec.with, {"max_length"}));
  DLOOP_ASSIGN_OR_RETURN(int64_t max_length, with.get_int("max_length", 1000, 1, 1'000'000));
  return std::shared_ptr<Tool>(std::make_shared<Calculator>(spec, static_cast<size_t>(max_length)));
}

}  // namespace dloop::tools::builtin
