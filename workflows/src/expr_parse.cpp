// Tokenizer and recursive-descent parser of the `${{ }}` expression language (grammar in expr.h).
// Errors carry the byte offset of the offending token. Bounded: the text length is capped and
// every recursive rule counts its depth, so hostile input cannot exhaust the stack.
// Thread-safe: no shared state.
#include <charconv>
#include <cstdint>
#include <string>

#include "dloop/base/strings.h"
#include "diagnostics.h"
#include "dloop/workflows/expr.h"
#include "expr_ast.h"

namespace dloop::workflows {
namespace {

using detail::CompareOp;
using detail::Node;
using detail::NodeKind;

enum class Tok {
  kEnd, kNumber, kString, kName, kDot, kLBracket, kRBracket, kLParen, kRParen, kComma,
  kEq, kNe, kLt, kLe, kGt, kGe, kAndAnd, kOrOr, kBang,
};

struct Token {
  Tok kind = Tok::kEnd;
  size_t begin = 0;
  size_t end = 0;
  base::Json value;  // kNumber, kString
  std::string text;  // kName
};

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c) || c == '-'; }

struct Failure {
  size_t offset;
  std::string message;
};

class Lexer {
 public:
  explicit Lexer(std::string_view text) : s_(text) {}

  // Reads the next token into `out`; false with `fail` set on a lexical error.
  bool next(Token& out, Failure& fail) {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
    out = Token();
    out.begin = pos_;
    if (pos_ >= s_.size()) { out.end = pos_; return true; }
    char c = s_[pos_];
    char d = pos_ + 1 < s_.size() ? s_[pos_ + 1] : '\0';
    if (is_digit(c) || (c == '-' && is_digit(d))) return number(out, fail);
    if (c == '\'' || c == '"') return string(out, fail);
    if (is_name_start(c)) {
      size_t b = pos_;
      while (pos_ < s_.size() && is_name_char(s_[pos_])) ++pos_;
      // A name never ends with '-' (keeps `a-` from swallowing a typo silently).
      while (pos_ > b + 1 && s_[pos_ - 1] == '-') --pos_;
      out.kind = Tok::kName;
      out.text = std::string(s_.substr(b, pos_ - b));
      out.end = pos_;
      return true;
    }
    switch (c) {
      case '=': if (d == '=') { out.kind = Tok::kEq; pos_ += 2; break; }
        fail = {pos_, "'=' is not an operator (did you mean '=='?)"}; return false;
      case '!': if (d == '=') { out.kind = Tok::kNe; pos_ += 2; } else { out.kind = Tok::kBang; ++pos_; } break;
      case '<': if (d == '=') { out.kind = Tok::kLe; pos_ += 2; } else { out.kind = Tok::kLt; ++pos_; } break;
      case '>': if (d == '=') { out.kind = Tok::kGe; pos_ += 2; } else { out.kind = Tok::kGt; ++pos_; } break;
      case '&': if (d == '&') { out.kind = Tok::kAndAnd; pos_ += 2; break; }
        fail = {pos_, "'&' is not an operator (did you mean '&&'?)"}; return false;
      case '|': if (d == '|') { out.kind = Tok::kOrOr; pos_ += 2; break; }
        fail = {pos_, "'|' is not an operator (did you mean '||'?)"}; return false;
      case '.': out.kind = Tok::kDot; ++pos_; break;
      case '[': out.kind = Tok::kLBracket; ++pos_; break;
      case ']': out.kind = Tok::kRBracket; ++pos_; break;
      case '(': out.kind = Tok::kLParen; ++pos_; break;
      case ')': out.kind = Tok::kRParen; ++pos_; break;
      case ',': out.kind = Tok::kComma; ++pos_; break;
      default: {
        std::string shown = (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
                                ? "byte 0x" + hex(static_cast<unsigned char>(c))
                                : std::string("'") + c + "'";
        std::string msg = "unexpected character " + shown;
        if (c == '+' || c == '-' || c == '*' || c == '/' || c == '%') msg += " (there is no arithmetic)";
        fail = {pos_, msg};
        return false;
      }
    }
    out.end = pos_;
    return true;
  }

 private:
  static std::string hex(unsigned v) {
    const char* digits = "0123456789abcdef";
    return std::string{digits[(v >> 4) & 15], digits[v & 15]};
  }

  bool number(Token& out, Failure& fail) {
    size_t b = pos_;
    if (s_[pos_] == '-') ++pos_;
    bool is_float = false;
    while (pos_ < s_.size() && is_digit(s_[pos_])) ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '.' && pos_ + 1 < s_.size() && is_digit(s_[pos_ + 1])) {
      is_float = true;
      ++pos_;
      while (pos_ < s_.size() && is_digit(s_[pos_])) ++pos_;
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      size_t e = pos_ + 1;
      if (e < s_.size() && (s_[e] == '+' || s_[e] == '-')) ++e;
      if (e < s_.size() && is_digit(s_[e])) {
        is_float = true;
        pos_ = e;
        while (pos_ < s_.size() && is_digit(s_[pos_])) ++pos_;
      }
    }
    if (pos_ < s_.size() && is_name_start(s_[pos_])) {
      fail = {b, "bad number '" + std::string(s_.substr(b, pos_ + 1 - b)) + "'"};
      return false;
    }
    std::string digits(s_.substr(b, pos_ - b));
    out.kind = Tok::kNumber;
    out.end = pos_;
    int64_t iv = 0;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), iv);
    if (!is_float && ec == std::errc() && p == digits.data() + digits.size()) {
      out.value = base::Json(iv);
    } else {
      out.value = base::Json(std::strtod(digits.c_str(), nullptr));
    }
    return true;
  }

  bool string(Token& out, Failure& fail) {
    const size_t b = pos_;
    const char quote = s_[pos_++];
    std::string value;
    while (pos_ < s_.size() && s_[pos_] != quote) {
      char c = s_[pos_];
      if (c != '\\') { value += c; ++pos_; continue; }
      if (pos_ + 1 >= s_.size()) break;
      char e = s_[pos_ + 1];
      switch (e) {
        case '\\': value += '\\'; break;
        case '\'': value += '\''; break;
        case '"': value += '"'; break;
        case 'n': value += '\n'; break;
        case 't': value += '\t'; break;
        case 'r': value += '\r'; break;
        default:
          fail = {pos_, std::string("bad escape '\\") + e + "' in string (use \\\\, \\', \\\", \\n, \\t or \\r)"};
          return false;
      }
      pos_ += 2;
    }
    if (pos_ >= s_.size()) {
      fail = {b, "unterminated string"};
      return false;
    }
    ++pos_;
    out.kind = Tok::kString;
    out.value = base::Json(std::move(value));
    out.end = pos_;
    return true;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text), lexer_(text) {}

  std::unique_ptr<Node> parse_all(Failure& fail) {
    if (!advance()) { fail = fail_; return nullptr; }
    if (tok_.kind == Tok::kEnd) { fail = {0, "empty expression"}; return nullptr; }
    auto root = parse_or();
    if (root && tok_.kind != Tok::kEnd) {
      error("unexpected " + describe(tok_) + " after the end of the expression");
      root = nullptr;
    }
    if (!root) fail = fail_;
    return root;
  }

 private:
  using NodePtr = std::unique_ptr<Node>;

  bool advance() {
    if (failed_) return false;
    if (!lexer_.next(tok_, fail_)) { failed_ = true; return false; }
    return true;
  }

  NodePtr error(std::string message) { return error_at(tok_.begin, std::move(message)); }
  NodePtr error_at(size_t offset, std::string message) {
    if (!failed_) fail_ = {offset, std::move(message)};
    failed_ = true;
    return nullptr;
  }

  std::string describe(const Token& t) const {
    if (t.kind == Tok::kEnd) return "end of expression";
    std::string out = "'";  // built by appends: GCC 12 warns (-Wrestrict) on "'" + string
    out.append(text_.substr(t.begin, t.end - t.begin));
    out += '\'';
    return out;
  }

  bool is_word(const char* word) const { return tok_.kind == Tok::kName && tok_.text == word; }

  // Depth guard, entered once per nesting level: '(', '[', a call, a '!'.
  struct Enter {
    Parser& p;
    bool ok;
    explicit Enter(Parser& parser) : p(parser), ok(++parser.depth_ <= kMaxExpressionDepth) {
      if (!ok) p.error("expression nests too deeply (the limit is " + std::to_string(kMaxExpressionDepth) + " levels)");
    }
    ~Enter() { --p.depth_; }
  };

  static NodePtr make(NodeKind kind, size_t begin, size_t end) {
    auto n = std::make_unique<Node>();
    n->kind = kind;
    n->begin = begin;
    n->end = end;
    return n;
  }
  static NodePtr binary(NodeKind kind, NodePtr a, NodePtr b) {
    auto n = make(kind, a->begin, b->end);
    n->kids.push_back(std::move(a));
    n->kids.push_back(std::move(b));
    return n;
  }

  NodePtr parse_or() {
    NodePtr left = parse_and();
    while (left && (tok_.kind == Tok::kOrOr || is_word("or"))) {
      if (!advance()) return nullptr;
      NodePtr right = parse_and();
      if (!right) return nullptr;
      left = binary(NodeKind::kOr, std::move(left), std::move(right));
    }
    return left;
  }

  NodePtr parse_and() {
    NodePtr left = parse_compare(0);
    while (left && (tok_.kind == Tok::kAndAnd || is_word("and"))) {
      if (!advance()) return nullptr;
      NodePtr right = parse_compare(0);
      if (!right) return nullptr;
      left = binary(NodeKind::kAnd, std::move(left), std::move(right));
    }
    return left;
  }

  // level 0: == !=, level 1: < <= > >=.
  NodePtr parse_compare(int level) {
    NodePtr left = level == 0 ? parse_compare(1) : parse_unary();
    while (left) {
      CompareOp op;
      Tok k = tok_.kind;
      if (level == 0 && k == Tok::kEq) op = CompareOp::kEq;
      else if (level == 0 && k == Tok::kNe) op = CompareOp::kNe;
      else if (level == 1 && k == Tok::kLt) op = CompareOp::kLt;
      else if (level == 1 && k == Tok::kLe) op = CompareOp::kLe;
      else if (level == 1 && k == Tok::kGt) op = CompareOp::kGt;
      else if (level == 1 && k == Tok::kGe) op = CompareOp::kGe;
      else break;
      if (!advance()) return nullptr;
      NodePtr right = level == 0 ? parse_compare(1) : parse_unary();
      if (!right) return nullptr;
      left = binary(NodeKind::kCompare, std::move(left), std::move(right));
      left->op = op;
    }
    return left;
  }

  NodePtr parse_unary() {
    if (tok_.kind == Tok::kBang || is_word("not")) {
      Enter guard(*this);
      if (!guard.ok) return nullptr;
      size_t begin = tok_.begin;
      if (!advance()) return nullptr;
      NodePtr operand = parse_unary();
      if (!operand) return nullptr;
      auto n = make(NodeKind::kNot, begin, operand->end);
      n->kids.push_back(std::move(operand));
      return n;
    }
    return parse_postfix();
  }

  NodePtr parse_postfix() {
    NodePtr left = parse_primary();
    while (left) {
      if (tok_.kind == Tok::kDot) {
        if (!advance()) return nullptr;
        if (tok_.kind != Tok::kName) return error("expected a property name after '.' but found " + describe(tok_));
        auto n = make(NodeKind::kMember, left->begin, tok_.end);
        n->name = tok_.text;
        n->name_offset = tok_.begin;
        n->kids.push_back(std::move(left));
        left = std::move(n);
        if (!advance()) return nullptr;
      } else if (tok_.kind == Tok::kLBracket) {
        Enter guard(*this);
        if (!guard.ok || !advance()) return nullptr;
        NodePtr index = parse_or();
        if (!index) return nullptr;
        if (tok_.kind != Tok::kRBracket) return error("expected ']' but found " + describe(tok_));
        auto n = make(NodeKind::kIndex, left->begin, tok_.end);
        n->kids.push_back(std::move(left));
        n->kids.push_back(std::move(index));
        left = std::move(n);
        if (!advance()) return nullptr;
      } else if (tok_.kind == Tok::kLParen) {
        return error("only functions can be called: unexpected '('");
      } else {
        break;
      }
    }
    return left;
  }

  NodePtr parse_primary() {
    const Token t = tok_;
    switch (t.kind) {
      case Tok::kNumber:
      case Tok::kString: {
        auto n = make(NodeKind::kLiteral, t.begin, t.end);
        n->literal = t.value;
        if (!advance()) return nullptr;
        return n;
      }
      case Tok::kLParen: {
        Enter guard(*this);
        if (!guard.ok || !advance()) return nullptr;
        NodePtr inner = parse_or();
        if (!inner) return nullptr;
        if (tok_.kind != Tok::kRParen) return error("expected ')' but found " + describe(tok_));
        inner->begin = t.begin;
        inner->end = tok_.end;
        if (!advance()) return nullptr;
        return inner;
      }
      case Tok::kLBracket: return parse_array();
      case Tok::kName: return parse_name();
      default: return error("expected a value but found " + describe(t));
    }
  }

  NodePtr parse_array() {
    Enter guard(*this);
    if (!guard.ok) return nullptr;
    auto n = make(NodeKind::kArray, tok_.begin, tok_.end);
    if (!advance()) return nullptr;
    if (!parse_list(Tok::kRBracket, "']'", n->kids)) return nullptr;
    n->end = tok_.end;
    if (!advance()) return nullptr;
    return n;
  }

  // Parses `a, b, c` up to the closing token (left current, not consumed).
  bool parse_list(Tok close, const char* close_text, std::vector<NodePtr>& out) {
    if (tok_.kind == close) return true;
    while (true) {
      NodePtr item = parse_or();
      if (!item) return false;
      out.push_back(std::move(item));
      if (tok_.kind == close) return true;
      if (tok_.kind != Tok::kComma) {
        error(std::string("expected ',' or ") + close_text + " but found " + describe(tok_));
        return false;
      }
      if (!advance()) return false;
    }
  }

  NodePtr parse_name() {
    const Token t = tok_;
    if (t.text == "true" || t.text == "false" || t.text == "null") {
      auto n = make(NodeKind::kLiteral, t.begin, t.end);
      n->literal = t.text == "null" ? base::Json() : base::Json(t.text == "true");
      if (!advance()) return nullptr;
      return n;
    }
    if (t.text == "and" || t.text == "or") return error("expected a value but found '" + t.text + "'");
    if (!advance()) return nullptr;
    if (tok_.kind != Tok::kLParen) {
      auto n = make(NodeKind::kName, t.begin, t.end);
      n->name = t.text;
      n->name_offset = t.begin;
      return n;
    }
    return parse_call(t);
  }

  NodePtr parse_call(const Token& name) {
    const detail::Function* f = detail::find_function(name.text);
    if (!f) {
      std::string msg = "unknown function '" + name.text + "'";
      if (auto close = detail::closest_name(name.text, function_names())) msg += " (did you mean '" + *close + "'?)";
      return error_at(name.begin, msg);
    }
    Enter guard(*this);
    if (!guard.ok) return nullptr;
    auto n = make(NodeKind::kCall, name.begin, name.end);
    n->name = name.text;
    n->name_offset = name.begin;
    if (!advance()) return nullptr;
    if (!parse_list(Tok::kRParen, "')'", n->kids)) return nullptr;
    n->end = tok_.end;
    const size_t got = n->kids.size();
    if (got < f->min_args || got > f->max_args) {
      return error_at(name.begin, name.text + "() takes " + arity(*f) + ", got " + std::to_string(got));
    }
    if (!advance()) return nullptr;
    return n;
  }

  static std::string arity(const detail::Function& f) {
    auto args = [](size_t n) { return std::to_string(n) + (n == 1 ? " argument" : " arguments"); };
    if (f.max_args == SIZE_MAX) return "at least " + args(f.min_args);
    if (f.min_args == f.max_args) return args(f.min_args);
    return std::to_string(f.min_args) + " or " + args(f.max_args);
  }

  std::string_view text_;
  Lexer lexer_;
  Token tok_;
  Failure fail_{0, ""};
  bool failed_ = false;
  int depth_ = 0;
};

// Builds the static path of a chain of kMember / kIndex on a kName root. `open` turns false at
// the first dynamic index: later segments are not static and are left out.
bool path_of(const Node& n, PathRef& out, bool& open) {
  if (n.kind == NodeKind::kName) {
    out.segments.push_back(n.name);
    out.offsets.push_back(n.name_offset);
    return true;
  }
  if (n.kind != NodeKind::kMember && n.kind != NodeKind::kIndex) return false;
  if (!path_of(*n.kids[0], out, open)) return false;
  if (!open) return true;
  if (n.kind == NodeKind::kMember) {
    out.segments.push_back(n.name);
    out.offsets.push_back(n.name_offset);
    return true;
  }
  const Node& idx = *n.kids[1];
  if (idx.kind == NodeKind::kLiteral && (idx.literal.is_string() || idx.literal.is_int())) {
    out.segments.push_back(idx.literal.is_string() ? idx.literal.as_string() : std::to_string(idx.literal.as_int()));
    out.offsets.push_back(idx.begin);
  } else {
    open = false;
  }
  return true;
}

void collect_paths(const Node& n, std::vector<PathRef>& out) {
  if (n.kind == NodeKind::kName || n.kind == NodeKind::kMember || n.kind == NodeKind::kIndex) {
    PathRef p;
    bool open = true;
    if (path_of(n, p, open)) {
      out.push_back(std::move(p));
      // Index expressions inside the chain may read paths of their own.
      std::vector<const Node*> indexes;
      for (const Node* cur = &n; cur->kind != NodeKind::kName; cur = cur->kids[0].get()) {
        if (cur->kind == NodeKind::kIndex) indexes.push_back(cur->kids[1].get());
      }
      for (auto it = indexes.rbegin(); it != indexes.rend(); ++it) collect_paths(**it, out);
      return;
    }
  }
  for (const auto& k : n.kids) collect_paths(*k, out);
}

}  // namespace

base::Result<Expr> parse_expression(std::string_view text, SyntaxError& error) {
  if (text.size() > kMaxExpressionLength) {
    error = {0, "expression is too long (" + std::to_string(text.size()) + " bytes; the limit is " +
                    std::to_string(kMaxExpressionLength) + ")"};
    return base::invalid_argument("column 1: " + error.message);
  }
  Parser parser(text);
  Failure fail{0, ""};
  auto root = parser.parse_all(fail);
  if (!root) {
    error = {fail.offset, fail.message};
    return base::invalid_argument("column " + std::to_string(fail.offset + 1) + ": " + fail.message);
  }
  Expr e;
  e.text_ = std::string(text);
  e.root_ = std::shared_ptr<const Node>(std::move(root));
  return e;
}

base::Result<Expr> parse_expression(std::string_view text) {
  SyntaxError ignored;
  return parse_expression(text, ignored);
}

std::vector<PathRef> Expr::paths() const {
  std::vector<PathRef> out;
  if (root_) collect_paths(*root_, out);
  return out;
}

const base::Json* Expr::literal() const {
  return root_ && root_->kind == NodeKind::kLiteral ? &root_->literal : nullptr;
}

}  // namespace dloop::workflows
