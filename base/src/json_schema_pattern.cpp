// JSON Schema `pattern`: an ECMAScript regular-expression subset compiled to a Thompson NFA and
// matched by simulating all states at once (linear in the text, no recursion on the input).
// Supported: literals, `.`, classes `[a-z]` `[^...]`, escapes \d \D \w \W \s \S \t \n \r \f \v \0
// \xHH \uHHHH and escaped syntax characters, anchors ^ $, groups ( ) (?: ) (?<name> ),
// alternation, quantifiers * + ? {n} {n,} {n,m} (lazy forms accepted; laziness cannot change
// whether a match exists). Rejected with a reason: back references, lookaround, \b \B, \p{..}.
// Pure functions; thread-safe.
#include "json_schema_pattern.h"

#include <algorithm>
#include <string>

namespace dloop::base {
namespace {

constexpr uint32_t kMaxCodePoint = 0x10FFFF;
constexpr size_t kMaxProgram = 20000;  // instructions, after expanding counted repetition
constexpr size_t kMaxPatternDepth = 200;
constexpr int kInfinite = -1;

using Ranges = SchemaPattern::Ranges;

Ranges normalize(Ranges r) {
  std::sort(r.begin(), r.end());
  Ranges out;
  for (const auto& [lo, hi] : r) {
    if (!out.empty() && lo <= out.back().second + 1) {
      out.back().second = std::max(out.back().second, hi);
    } else {
      out.emplace_back(lo, hi);
    }
  }
  return out;
}

Ranges complement(const Ranges& r) {
  Ranges out;
  uint32_t next = 0;
  for (const auto& [lo, hi] : r) {
    if (lo > next) out.emplace_back(next, lo - 1);
    next = hi + 1;
  }
  if (next <= kMaxCodePoint) out.emplace_back(next, kMaxCodePoint);
  return out;
}

Ranges digit_ranges() { return {{'0', '9'}}; }
Ranges word_ranges() { return normalize({{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}); }
Ranges space_ranges() {
  return normalize({{'\t', '\r'}, {' ', ' '}, {0xA0, 0xA0}, {0x1680, 0x1680}, {0x2000, 0x200A},
                    {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000},
                    {0xFEFF, 0xFEFF}});
}
Ranges dot_ranges() { return complement(normalize({{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}})); }

// Decodes UTF-8 leniently (an invalid byte becomes U+FFFD); JSON strings are valid UTF-8.
std::vector<uint32_t> decode_utf8(std::string_view s) {
  std::vector<uint32_t> out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    int n = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : -1;
    if (n < 0 || i + n >= s.size()) {
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    uint32_t cp = n == 0 ? c : (c & (0x3F >> n));
    bool ok = true;
    for (int k = 1; k <= n; ++k) {
      if (i + k >= s.size() || (static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) { ok = false; break; }
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    }
    if (!ok) { out.push_back(0xFFFD); ++i; continue; }
    out.push_back(cp);
    i += n + 1;
  }
  return out;
}

struct Node {
  enum class Kind { kEmpty, kSet, kStart, kEnd, kCat, kAlt, kRepeat };
  Kind kind = Kind::kEmpty;
  Ranges set;
  std::vector<Node> kids;
  int min = 0, max = 0;  // kRepeat; max == kInfinite for unbounded
};

class Parser {
 public:
  explicit Parser(std::string_view pattern) : cps_(decode_utf8(pattern)) {}

  Result<Node> parse() {
    auto node = parse_alt(0);
    if (!node.ok()) return node;
    if (pos_ < cps_.size()) return error("unmatched ')'");
    return node;
  }

 private:
  Status error(const std::string& why) const {
    return invalid_argument(why + " at offset " + std::to_string(pos_));
  }
  bool at_end() const { return pos_ >= cps_.size(); }
  uint32_t peek(size_t ahead = 0) const { return pos_ + ahead < cps_.size() ? cps_[pos_ + ahead] : 0; }
  bool eat(uint32_t c) {
    if (!at_end() && cps_[pos_] == c) { ++pos_; return true; }
    return false;
  }

  Result<Node> parse_alt(size_t depth) {
    if (depth > kMaxPatternDepth) return error("pattern nests too deeply");
    Node alt{Node::Kind::kAlt};
    while (true) {
      auto cat = parse_concat(depth);
      if (!cat.ok()) return cat;
      alt.kids.push_back(std::move(*cat));
      if (!eat('|')) break;
    }
    if (alt.kids.size() == 1) return std::move(alt.kids[0]);
    return alt;
  }

  Result<Node> parse_concat(size_t depth) {
    Node cat{Node::Kind::kCat};
    while (!at_end() && peek() != '|' && peek() != ')') {
      auto atom = parse_atom(depth);
      if (!atom.ok()) return atom;
      auto rep = parse_quantifier(std::move(*atom));
      if (!rep.ok()) return rep;
      cat.kids.push_back(std::move(*rep));
    }
    return cat;
  }

  Result<Node> parse_quantifier(Node atom) {
    int min, max;
    size_t start = pos_;
    if (eat('*')) { min = 0; max = kInfinite; }
    else if (eat('+')) { min = 1; max = kInfinite; }
    else if (eat('?')) { min = 0; max = 1; }
    else if (peek() == '{') {
      ++pos_;
      auto lo = parse_count();
      if (!lo) return error("invalid quantifier '{'");
      min = max = *lo;
      if (eat(',')) {
        if (peek() == '}') max = kInfinite;
        else {
          auto hi = parse_count();
          if (!hi) return error("invalid quantifier upper bound");
          max = *hi;
        }
      }
      if (!eat('}')) return error("invalid quantifier: expected '}'");
      if (max != kInfinite && max < min) return error("quantifier range out of order");
    } else {
      return atom;
    }
    eat('?');  // lazy: same language
    if (atom.kind == Node::Kind::kStart || atom.kind == Node::Kind::kEnd || atom.kind == Node::Kind::kEmpty) {
      pos_ = start;
      return error("nothing to repeat");
    }
    if (!at_end() && (peek() == '*' || peek() == '+' || peek() == '?' || peek() == '{')) {
      return error("nothing to repeat");
    }
    Node rep{Node::Kind::kRepeat};
    rep.min = min;
    rep.max = max;
    rep.kids.push_back(std::move(atom));
    return rep;
  }

  std::optional<int> parse_count() {
    size_t begin = pos_;
    int64_t v = 0;
    while (!at_end() && peek() >= '0' && peek() <= '9') {
      v = v * 10 + (peek() - '0');
      if (v > 100000) return std::nullopt;
      ++pos_;
    }
    if (pos_ == begin) return std::nullopt;
    return static_cast<int>(v);
  }

  Result<Node> parse_atom(size_t depth) {
    uint32_t c = peek();
    ++pos_;
    switch (c) {
      case '^': return Node{Node::Kind::kStart};
      case '$': return Node{Node::Kind::kEnd};
      case '.': return set_node(dot_ranges());
      case '[': return parse_class();
      case '*': case '+': case '?': --pos_; return error("nothing to repeat");
      case '{': --pos_; return error("nothing to repeat");
      case '(': {
        if (eat('?')) {
          if (eat(':')) {
          } else if (peek() == '<' && peek(1) != '=' && peek(1) != '!') {
            ++pos_;  // a named group: the name does not matter for matching
            while (!at_end() && peek() != '>') ++pos_;
            if (!eat('>')) return error("unterminated group name");
          } else {
            return error("lookaround and inline flags are not supported");
          }
        }
        auto inner = parse_alt(depth + 1);
        if (!inner.ok()) return inner;
        if (!eat(')')) return error("missing ')'");
        Node group{Node::Kind::kCat};
        group.kids.push_back(std::move(*inner));
        return group;
      }
      case '\\': {
        auto set = parse_escape(/*in_class=*/false);
        if (!set.ok()) return set.status();
        return set_node(std::move(*set));
      }
      default: return set_node({{c, c}});
    }
  }

  static Node set_node(Ranges r) {
    Node n{Node::Kind::kSet};
    n.set = normalize(std::move(r));
    return n;
  }

  // After a backslash. Returns the set the escape denotes.
  Result<Ranges> parse_escape(bool in_class) {
    if (at_end()) return error("pattern ends with '\\'");
    uint32_t c = peek();
    ++pos_;
    switch (c) {
      case 'd': return digit_ranges();
      case 'D': return complement(digit_ranges());
      case 'w': return word_ranges();
      case 'W': return complement(word_ranges());
      case 's': return space_ranges();
      case 'S': return complement(space_ranges());
      case 't': return Ranges{{'\t', '\t'}};
      case 'n': return Ranges{{'\n', '\n'}};
      case 'r': return Ranges{{'\r', '\r'}};
      case 'f': return Ranges{{'\f', '\f'}};
      case 'v': return Ranges{{'\v', '\v'}};
      case '0':
        if (peek() >= '0' && peek() <= '9') return error("octal escapes are not supported");
        return Ranges{{0, 0}};
      case 'x': case 'u': {
        int digits = c == 'x' ? 2 : 4;
        uint32_t v = 0;
        for (int i = 0; i < digits; ++i) {
          uint32_t h = peek();
          int d = h >= '0' && h <= '9' ? int(h - '0') : h >= 'a' && h <= 'f' ? int(h - 'a' + 10)
                  : h >= 'A' && h <= 'F' ? int(h - 'A' + 10) : -1;
          if (d < 0) return error(std::string("invalid \\") + char(c) + " escape");
          v = v * 16 + static_cast<uint32_t>(d);
          ++pos_;
        }
        return Ranges{{v, v}};
      }
      case 'b':
        if (in_class) return Ranges{{'\b', '\b'}};
        return error("word boundary assertions (\\b) are not supported");
      case 'B': return error("word boundary assertions (\\B) are not supported");
      case 'p': case 'P': return error("Unicode property escapes are not supported");
      case 'c': return error("control escapes (\\c) are not supported");
      default: break;
    }
    if (c >= '1' && c <= '9') return error("back references are not supported");
    if (c == 'k') return error("named back references are not supported");
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      return error(std::string("unknown escape '\\") + char(c) + "'");
    }
    return Ranges{{c, c}};  // identity escape: \. \\ \/ \- \[ ...
  }

  Result<Node> parse_class() {
    bool negate = eat('^');
    Ranges ranges;
    while (true) {
      if (at_end()) return error("missing ']'");
      if (eat(']')) break;
      auto lo = parse_class_atom();
      if (!lo.ok()) return lo.status();
      bool single = lo->size() == 1 && (*lo)[0].first == (*lo)[0].second;
      if (single && peek() == '-' && peek(1) != ']' && pos_ + 1 < cps_.size()) {
        ++pos_;
        auto hi = parse_class_atom();
        if (!hi.ok()) return hi.status();
        if (hi->size() != 1 || (*hi)[0].first != (*hi)[0].second) return error("invalid class range");
        if ((*hi)[0].first < (*lo)[0].first) return error("class range out of order");
        ranges.emplace_back((*lo)[0].first, (*hi)[0].first);
        continue;
      }
      ranges.insert(ranges.end(), lo->begin(), lo->end());
    }
    ranges = normalize(std::move(ranges));
    return set_node(negate ? complement(ranges) : ranges);
  }

  Result<Ranges> parse_class_atom() {
    uint32_t c = peek();
    ++pos_;
    if (c == '\\') return parse_escape(/*in_class=*/true);
    return Ranges{{c, c}};
  }

  std::vector<uint32_t> cps_;
  size_t pos_ = 0;
};

class Compiler {
 public:
  explicit Compiler(SchemaPattern& out) : out_(out) {}

  Status emit(const Node& n) {
    if (out_.program.size() > kMaxProgram) return invalid_argument("pattern is too large once repetition is expanded");
    switch (n.kind) {
      case Node::Kind::kEmpty: return Status();
      case Node::Kind::kSet:
        out_.sets.push_back(n.set);
        push({SchemaPattern::Op::kSet, static_cast<uint32_t>(out_.sets.size() - 1)});
        return Status();
      case Node::Kind::kStart: push({SchemaPattern::Op::kStart}); return Status();
      case Node::Kind::kEnd: push({SchemaPattern::Op::kEnd}); return Status();
      case Node::Kind::kCat:
        for (const Node& k : n.kids) DLOOP_RETURN_IF_ERROR(emit(k));
        return Status();
      case Node::Kind::kAlt: return emit_alt(n, 0);
      case Node::Kind::kRepeat: return emit_repeat(n);
    }
    return Status();
  }

 private:
  uint32_t pc() const { return static_cast<uint32_t>(out_.program.size()); }
  void push(SchemaPattern::Inst inst) { out_.program.push_back(inst); }

  // split L1, L2; L1: kid[i]; jmp END; L2: rest
  Status emit_alt(const Node& n, size_t i) {
    if (i + 1 == n.kids.size()) return emit(n.kids[i]);
    uint32_t split = pc();
    push({SchemaPattern::Op::kSplit});
    out_.program[split].next = pc();
    DLOOP_RETURN_IF_ERROR(emit(n.kids[i]));
    uint32_t jmp = pc();
    push({SchemaPattern::Op::kJmp});
    out_.program[split].arg = pc();
    DLOOP_RETURN_IF_ERROR(emit_alt(n, i + 1));
    out_.program[jmp].arg = pc();
    return Status();
  }

  Status emit_repeat(const Node& n) {
    const Node& body = n.kids[0];
    for (int i = 0; i < n.min; ++i) DLOOP_RETURN_IF_ERROR(emit(body));
    if (n.max == kInfinite) {
      uint32_t loop = pc();  // loop: split body, out; body; jmp loop
      push({SchemaPattern::Op::kSplit});
      out_.program[loop].next = pc();
      DLOOP_RETURN_IF_ERROR(emit(body));
      push({SchemaPattern::Op::kJmp, loop});
      out_.program[loop].arg = pc();
      return Status();
    }
    std::vector<uint32_t> splits;  // each optional copy may be skipped to the end
    for (int i = n.min; i < n.max; ++i) {
      splits.push_back(pc());
      push({SchemaPattern::Op::kSplit});
      out_.program[splits.back()].next = pc();
      DLOOP_RETURN_IF_ERROR(emit(body));
    }
    for (uint32_t s : splits) out_.program[s].arg = pc();
    return Status();
  }

  SchemaPattern& out_;
};

// A set of program counters with O(1) insert and clear (Russ Cox's sparse set).
class StateSet {
 public:
  explicit StateSet(size_t n) : dense_(n), sparse_(n) {}
  bool contains(uint32_t pc) const { return sparse_[pc] < size_ && dense_[sparse_[pc]] == pc; }
  void insert(uint32_t pc) { sparse_[pc] = size_; dense_[size_++] = pc; }
  void clear() { size_ = 0; }
  size_t size() const { return size_; }
  uint32_t operator[](size_t i) const { return dense_[i]; }

 private:
  std::vector<uint32_t> dense_, sparse_;
  uint32_t size_ = 0;
};

// Adds pc and everything reachable from it without consuming input; true when kMatch is reached.
bool add_state(const SchemaPattern& p, StateSet& set, std::vector<uint32_t>& stack, uint32_t start,
               size_t pos, size_t len) {
  stack.clear();
  stack.push_back(start);
  while (!stack.empty()) {
    uint32_t pc = stack.back();
    stack.pop_back();
    if (set.contains(pc)) continue;
    set.insert(pc);
    const auto& inst = p.program[pc];
    switch (inst.op) {
      case SchemaPattern::Op::kMatch: return true;
      case SchemaPattern::Op::kSet: break;
      case SchemaPattern::Op::kJmp: stack.push_back(inst.arg); break;
      case SchemaPattern::Op::kSplit:
        stack.push_back(inst.arg);
        stack.push_back(inst.next);
        break;
      case SchemaPattern::Op::kStart: if (pos == 0) stack.push_back(pc + 1); break;
      case SchemaPattern::Op::kEnd: if (pos == len) stack.push_back(pc + 1); break;
    }
  }
  return false;
}

}  // namespace

bool SchemaPattern::set_contains(uint32_t set, uint32_t cp) const {
  const Ranges& r = sets[set];
  auto it = std::upper_bound(r.begin(), r.end(), std::make_pair(cp, kMaxCodePoint + 1));
  if (it == r.begin()) return false;
  --it;
  return cp >= it->first && cp <= it->second;
}

Result<std::shared_ptr<const SchemaPattern>> compile_schema_pattern(std::string_view pattern) {
  auto ast = Parser(pattern).parse();
  if (!ast.ok()) return ast.status();
  auto out = std::make_shared<SchemaPattern>();
  DLOOP_RETURN_IF_ERROR(Compiler(*out).emit(*ast));
  if (out->program.size() > kMaxProgram) return invalid_argument("pattern is too large once repetition is expanded");
  out->program.push_back({SchemaPattern::Op::kMatch});
  return std::shared_ptr<const SchemaPattern>(std::move(out));
}

bool schema_pattern_search(const SchemaPattern& p, std::string_view utf8_text) {
  std::vector<uint32_t> text = decode_utf8(utf8_text);
  StateSet cur(p.program.size()), next(p.program.size());
  std::vector<uint32_t> stack;
  for (size_t pos = 0;; ++pos) {
    // A new attempt starts at every position: the search is unanchored.
    if (add_state(p, cur, stack, 0, pos, text.size())) return true;
    if (pos == text.size()) return false;
    next.clear();
    for (size_t i = 0; i < cur.size(); ++i) {
      const auto& inst = p.program[cur[i]];
      if (inst.op == SchemaPattern::Op::kSet && p.set_contains(inst.arg, text[pos]) &&
          add_state(p, next, stack, cur[i] + 1, pos + 1, text.size())) {
        return true;
      }
    }
    std::swap(cur, next);
  }
}

}  // namespace dloop::base
