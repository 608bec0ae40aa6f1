#include "core/symbolic/expr_text.hpp"

#include <cctype>
#include <limits>
#include <vector>

namespace tunebed {

ExprError::ExprError(int c, const std::string& msg) : std::runtime_error("column " + std::to_string(c) + ": " + msg), col(c) {}

namespace {

// ---- parser ----------------------------------------------------------------------------------

class Parser {
 public:
  Parser(std::string_view text, const ExprOptions& opts) : s_(text), opts_(opts) {}

  UOp parse() {
    UOp e = expr();
    skip_space();
    if (pos_ < s_.size()) fail("unexpected '" + std::string(1, s_[pos_]) + "'");
    return e;
  }

 private:
  // A recursion bound, so a deeply nested input is an error rather than a stack overflow.
  static constexpr int kMaxDepth = 256;

  [[noreturn]] void fail(const std::string& msg, size_t at) const { throw ExprError(static_cast<int>(at) + 1, msg); }
  [[noreturn]] void fail(const std::string& msg) const { fail(msg, pos_); }

  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) pos_++;
  }
  bool peek(std::string_view tok) {
    skip_space();
    return s_.substr(pos_, tok.size()) == tok;
  }
  bool accept(std::string_view tok) {
    if (!peek(tok)) return false;
    pos_ += tok.size();
    return true;
  }
  void expect(std::string_view tok) {
    if (!accept(tok)) fail("expected '" + std::string(tok) + "'");
  }

  bool is_bool(const UOp& u) const { return u.dtype().is_bool(); }
  void need_int(const UOp& u, size_t at, std::string_view what) const {
    if (is_bool(u)) fail("'" + std::string(what) + "' needs an integer operand, got a condition", at);
  }
  void need_bool(const UOp& u, size_t at, std::string_view what) const {
    if (!is_bool(u)) fail("'" + std::string(what) + "' needs a condition (a comparison), got an integer", at);
  }
  void need_same(const UOp& a, const UOp& b, size_t at, std::string_view what) const {
    if (is_bool(a) != is_bool(b)) fail(std::string(what) + " mixes a condition and an integer", at);
  }

  UOp expr() {
    if (++depth_ > kMaxDepth) fail("expression nested too deeply");
    UOp e = bitwise(0);
    depth_--;
    return e;
  }

  // Levels 0..2: | ^ & (C's order, all looser than comparisons).
  UOp bitwise(int level) {
    static constexpr std::string_view toks[] = {"|", "^", "&"};
    static constexpr Ops ops[] = {Ops::OR, Ops::XOR, Ops::AND};
    UOp lhs = level < 2 ? bitwise(level + 1) : comparison();
    for (;;) {
      skip_space();
      size_t at = pos_;
      if (!accept(toks[level])) return lhs;
      UOp rhs = level < 2 ? bitwise(level + 1) : comparison();
      need_same(lhs, rhs, at, toks[level]);
      lhs = lhs.alu(ops[level], rhs);
    }
  }

  UOp comparison() {
    UOp lhs = sum();
    skip_space();
    size_t at = pos_;
    Ops op;
    if (accept("==")) op = Ops::CMPEQ;
    else if (accept("!=")) op = Ops::CMPNE;
    else if (accept("<") ) op = Ops::CMPLT;
    else return lhs;
    UOp rhs = sum();
    need_same(lhs, rhs, at, "comparison");
    if (op == Ops::CMPLT) need_int(lhs, at, "<");
    if (peek("<") || peek("==") || peek("!=")) fail("comparisons do not chain; add parentheses");
    return lhs.alu(op, rhs);
  }

  UOp sum() {
    UOp lhs = product();
    for (;;) {
      skip_space();
      size_t at = pos_;
      bool plus = accept("+");
      if (!plus && !accept("-")) return lhs;
      UOp rhs = product();
      need_int(lhs, at, plus ? "+" : "-");
      need_int(rhs, at, plus ? "+" : "-");
      lhs = plus ? lhs + rhs : lhs - rhs;
    }
  }

  UOp product() {
    UOp lhs = unary();
    for (;;) {
      skip_space();
      size_t at = pos_;
      std::string_view tok = peek("//") ? "//" : peek("*") ? "*" : peek("%") ? "%" : "";
      if (tok.empty() && peek("/")) fail("'/' is not an operator here; integer division is '//'");
      if (tok.empty()) return lhs;
      pos_ += tok.size();
      UOp rhs = unary();
      need_int(lhs, at, tok);
      need_int(rhs, at, tok);
      lhs = lhs.alu(tok == "*" ? Ops::MUL : tok == "//" ? Ops::IDIV : Ops::MOD, rhs);
    }
  }

  UOp unary() {
    skip_space();
    size_t at = pos_;
    if (accept("-")) {
      skip_space();
      // A negative literal is a constant, not a negation; this also admits INT64_MIN.
      if (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) return literal(true);
      if (++depth_ > kMaxDepth) fail("expression nested too deeply");
      UOp e = unary();
      depth_--;
      need_int(e, at, "-");
      return -e;
    }
    if (accept("!")) {
      if (++depth_ > kMaxDepth) fail("expression nested too deeply");
      UOp e = unary();
      depth_--;
      need_bool(e, at, "!");
      return e.logical_not();
    }
    return atom();
  }

  UOp literal(bool negated) {
    size_t at = pos_;
    unsigned __int128 v = 0;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      v = v * 10 + static_cast<unsigned>(s_[pos_++] - '0');
      if (v > (unsigned __int128){1} << 64) fail("integer literal out of range", at);
    }
    __int128 x = negated ? -static_cast<__int128>(v) : static_cast<__int128>(v);
    if (x < opts_.dtype.int_min() || x > opts_.dtype.int_max())
      fail("integer literal out of range of " + to_string(opts_.dtype), at);
    return UOp::const_int(opts_.dtype, static_cast<int64_t>(x));
  }

  std::vector<UOp> call_args(size_t n, std::string_view name) {
    expect("(");
    std::vector<UOp> args;
    for (size_t i = 0; i < n; i++) {
      if (i) {
        skip_space();
        if (!accept(",")) fail(std::string(name) + " takes " + std::to_string(n) + " arguments");
      }
      args.push_back(expr());
    }
    if (!accept(")")) fail(peek(",") ? std::string(name) + " takes " + std::to_string(n) + " arguments" : "expected ')'");
    return args;
  }

  UOp atom() {
    skip_space();
    size_t at = pos_;
    if (pos_ >= s_.size()) fail("unexpected end of expression");
    char ch = s_[pos_];
    if (std::isdigit(static_cast<unsigned char>(ch))) return literal(false);
    if (accept("(")) {
      UOp e = expr();
      expect(")");
      return e;
    }
    if (!(std::isalpha(static_cast<unsigned char>(ch)) || ch == '_')) fail("unexpected '" + std::string(1, ch) + "'");
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) pos_++;
    std::string name(s_.substr(at, pos_ - at));
    if (name == "true" || name == "false") return UOp::const_bool(name == "true");
    if (name == "max" || name == "min") {
      std::vector<UOp> a = call_args(2, name);
      need_int(a[0], at, name);
      need_int(a[1], at, name);
      return name == "max" ? a[0].max(a[1]) : a[0].min(a[1]);
    }
    if (name == "where") {
      std::vector<UOp> a = call_args(3, name);
      need_bool(a[0], at, "where");
      need_same(a[1], a[2], at, "where");
      return a[0].where(a[1], a[2]);
    }
    if (peek("(")) fail("unknown function '" + name + "' (expected max, min or where)", at);
    auto it = opts_.vars.find(name);
    VarBounds b = it == opts_.vars.end() ? opts_.default_bounds : it->second;
    return UOp::variable(name, b.min, b.max, opts_.dtype);
  }

  std::string_view s_;
  const ExprOptions& opts_;
  size_t pos_ = 0;
  int depth_ = 0;
};

// ---- printer ---------------------------------------------------------------------------------

// Binding strength, loosest first; an operand looser than its context gets parentheses.
enum Prec { kOr = 1, kXor, kAnd, kCmp, kSum, kProduct, kUnary, kAtom };

struct Printed {
  std::string text;
  int prec;
};

Printed print(const UOp& u);

std::string at_least(const UOp& u, int prec) {
  Printed p = print(u);
  return p.prec >= prec ? p.text : "(" + p.text + ")";
}

bool is_neg_one(const UOp& u) { return u.is_const() && !u.dtype().is_bool() && u.is_const(-1); }
// MUL(x, c) with a negative constant c: printed as a negation.
bool negative_scale(const UOp& u) {
  return u.op() == Ops::MUL && u.src(1).is_const() && !u.dtype().is_float() && !u.dtype().is_bool() &&
         u.src(1).const_int() < 0 && u.src(1).const_int() != std::numeric_limits<int64_t>::min();
}

// min(a, b) is -max(-a, -b) in tinygrad's IR.
bool is_min(const UOp& u) {
  return u.op() == Ops::MUL && is_neg_one(u.src(1)) && u.src(0).op() == Ops::MAX && negative_scale(u.src(0).src(0)) &&
         negative_scale(u.src(0).src(1)) && is_neg_one(u.src(0).src(0).src(1)) && is_neg_one(u.src(0).src(1).src(1));
}

// What follows the '-' of x*-c: "x" or "x*c". After a binary minus (in a sum) x binds like a
// product operand (a-b*3); after a unary minus it must bind tighter ((-x)*3 is -(x*3)).
std::string negated(const UOp& u, bool in_sum) {
  int64_t c = -u.src(1).const_int();
  std::string x = at_least(u.src(0), in_sum ? kProduct : kUnary);
  return c == 1 ? x : x + "*" + std::to_string(c);
}

std::string call(std::string_view name, const std::vector<UOp>& args) {
  std::string s(name);
  s += "(";
  for (size_t i = 0; i < args.size(); i++) s += (i ? ", " : "") + print(args[i]).text;
  return s + ")";
}

Printed print_sum(const UOp& u) {
  std::vector<UOp> terms;
  std::vector<const UOp*> stack{&u};
  while (!stack.empty()) {  // the ADD tree's summands, left to right
    const UOp* t = stack.back();
    stack.pop_back();
    if (t->op() == Ops::ADD) {
      stack.push_back(&t->src(1));
      stack.push_back(&t->src(0));
    } else {
      terms.push_back(*t);
    }
  }
  std::string s;
  for (size_t i = 0; i < terms.size(); i++) {
    const UOp& t = terms[i];
    bool neg_const = t.is_const() && t.const_int() < 0 && t.const_int() != std::numeric_limits<int64_t>::min();
    if (i > 0 && neg_const) s += "-" + std::to_string(-t.const_int());
    else if (i > 0 && negative_scale(t) && !is_min(t)) s += "-" + negated(t, true);
    else s += (i > 0 ? "+" : "") + at_least(t, i > 0 ? kSum + 1 : kSum);
  }
  return {s, kSum};
}

Printed print(const UOp& u) {
  switch (u.op()) {
    case Ops::CONST:
      if (u.dtype().is_bool()) return {u.const_int() ? "true" : "false", kAtom};
      if (u.dtype().is_float()) return {std::to_string(u.const_value()), kAtom};
      return {std::to_string(u.const_int()), u.const_int() < 0 ? kUnary : kAtom};
    case Ops::DEFINE_VAR: return {u.arg().as_tuple().at(0).as_string(), kAtom};
    case Ops::ADD:
      if (!u.dtype().is_float() && !u.dtype().is_bool()) return print_sum(u);
      break;
    case Ops::MUL:
      if (is_min(u)) return {call("min", {u.src(0).src(0).src(0), u.src(0).src(1).src(0)}), kAtom};
      if (negative_scale(u)) return {"-" + negated(u, false), u.src(1).is_const(-1) ? kUnary : kProduct};
      break;
    case Ops::CMPNE:
      if (u.src(0).dtype().is_bool() && u.src(1).is_const() && u.src(1).const_int() == 1)
        return {"!" + at_least(u.src(0), kUnary), kUnary};
      break;
    case Ops::MAX: return {call("max", u.src()), kAtom};
    case Ops::WHERE: return {call("where", u.src()), kAtom};
    default: break;
  }
  struct Infix {
    Ops op;
    std::string_view tok;
    int prec;
  };
  static constexpr Infix infix[] = {
      {Ops::ADD, "+", kSum},      {Ops::MUL, "*", kProduct}, {Ops::IDIV, "//", kProduct}, {Ops::MOD, "%", kProduct},
      {Ops::CMPLT, "<", kCmp},    {Ops::CMPEQ, "==", kCmp},  {Ops::CMPNE, "!=", kCmp},    {Ops::AND, "&", kAnd},
      {Ops::XOR, "^", kXor},      {Ops::OR, "|", kOr},
  };
  for (const Infix& f : infix) {
    if (f.op != u.op() || u.src().size() != 2) continue;
    // Left-associative: the right operand binds tighter; comparisons do not chain at all.
    int left = f.prec == kCmp ? kCmp + 1 : f.prec;
    return {at_least(u.src(0), left) + std::string(f.tok) + at_least(u.src(1), f.prec + 1), f.prec};
  }
  std::string name(op_name(u.op()));
  for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return {call(name, u.src()), kAtom};
}

}  // namespace

UOp parse_expr(std::string_view text, const ExprOptions& opts) { return Parser(text, opts).parse(); }

std::string print_expr(const UOp& u) { return print(u).text; }

}  // namespace tunebed
