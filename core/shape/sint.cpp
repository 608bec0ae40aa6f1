// sint arithmetic: checked int64 on the fast path, simplified UOp expressions on the symbolic one.
#include "core/shape/sint.hpp"

#include <stdexcept>

#include "core/symbolic/symbolic.hpp"

namespace tunebed {

namespace {

int64_t checked(bool overflowed, int64_t v, const char* what) {
  if (overflowed) throw std::overflow_error(std::string("shape arithmetic overflows int64 in ") + what);
  return v;
}

// Both operands as UOps of the symbolic one's dtype (a variable may be int64, not the index dtype).
std::pair<UOp, UOp> uops(const sint& a, const sint& b) {
  DType d = a.is_int() ? b.uop().dtype() : a.uop().dtype();
  return {a.to_uop(d), b.to_uop(d)};
}

// A symbolic result: simplified, so equal expressions intern to the same node and constants fold.
sint sym(const UOp& u) { return sint(simplify(u)); }

}  // namespace

sint::sint(UOp u) {
  if (!u) throw std::invalid_argument("sint from a null UOp");
  if (u.is_const())
    i_ = u.const_int();
  else if (!u.dtype().is_int())
    throw std::invalid_argument("a symbolic shape entry must have an integer dtype");
  else
    u_ = std::move(u);
}

int64_t sint::to_int() const {
  if (u_) throw std::invalid_argument("symbolic value where an int is needed");
  return i_;
}

UOp sint::to_uop(DType d) const { return u_ ? u_.cast(d) : UOp::const_int(d, i_); }

sint operator+(const sint& a, const sint& b) {
  int64_t r;
  if (a.is_int() && b.is_int()) return checked(__builtin_add_overflow(a.to_int(), b.to_int(), &r), r, "+");
  auto [x, y] = uops(a, b);
  return sym(x + y);
}

sint operator-(const sint& a, const sint& b) {
  int64_t r;
  if (a.is_int() && b.is_int()) return checked(__builtin_sub_overflow(a.to_int(), b.to_int(), &r), r, "-");
  auto [x, y] = uops(a, b);
  return sym(x - y);
}

sint operator-(const sint& a) { return sint(0) - a; }

sint operator*(const sint& a, const sint& b) {
  int64_t r;
  if (a.is_int() && b.is_int()) return checked(__builtin_mul_overflow(a.to_int(), b.to_int(), &r), r, "*");
  auto [x, y] = uops(a, b);
  return sym(x * y);
}

sint floordiv(const sint& a, const sint& b) {
  if (a.is_int() && b.is_int()) {
    int64_t x = a.to_int(), y = b.to_int();
    if (y == 0) throw std::domain_error("shape arithmetic divides by zero");
    if (y == -1) return -a;  // INT64_MIN / -1 overflows: let negation report it
    int64_t q = x / y;
    return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
  }
  auto [x, y] = uops(a, b);
  return sym(x / y);
}

sint floormod(const sint& a, const sint& b) {
  if (a.is_int() && b.is_int()) return a - floordiv(a, b) * b;
  auto [x, y] = uops(a, b);
  return sym(x % y);
}

sint ceildiv(const sint& a, const sint& b) { return -floordiv(-a, b); }

sint smax(const sint& a, const sint& b) {
  if (a.is_int() && b.is_int()) return std::max(a.to_int(), b.to_int());
  auto [x, y] = uops(a, b);
  return sym(x.max(y));
}

sint smin(const sint& a, const sint& b) {
  if (a.is_int() && b.is_int()) return std::min(a.to_int(), b.to_int());
  auto [x, y] = uops(a, b);
  return sym(x.min(y));
}

sint prod(const SymShape& s) {
  sint r = 1;
  for (const sint& x : s) r = r * x;
  return r;
}

bool all_int(const SymShape& s) {
  for (const sint& x : s)
    if (!x.is_int()) return false;
  return true;
}

std::vector<int64_t> to_ints(const SymShape& s) {
  std::vector<int64_t> out;
  out.reserve(s.size());
  for (const sint& x : s) out.push_back(x.to_int());
  return out;
}

// Symbolic comparisons look at the range of the simplified difference, as tinygrad's resolve()
// looks at the range of the simplified comparison.
SBool lt(const sint& a, const sint& b) {
  if (a.is_int() && b.is_int()) return a.to_int() < b.to_int();
  sint d = a - b;
  if (d.vmax() < 0) return true;
  if (d.vmin() >= 0) return false;
  return std::nullopt;
}

SBool le(const sint& a, const sint& b) { return lt(a, b + 1); }

SBool eq(const sint& a, const sint& b) {
  if (a == b) return true;
  if (a.is_int() && b.is_int()) return false;
  sint d = a - b;
  if (d.vmin() == 0 && d.vmax() == 0) return true;
  if (d.vmax() < 0 || d.vmin() > 0) return false;
  return std::nullopt;
}

SBool ne(const sint& a, const sint& b) {
  SBool e = eq(a, b);
  return e ? SBool(!*e) : std::nullopt;
}

Arg to_arg(const sint& s) { return s.is_int() ? Arg(s.to_int()) : Arg(s.uop()); }

sint sint_from_arg(const Arg& a) {
  if (a.is<UOp>()) return sint(a.as_uop());
  return a.as_int();
}

namespace {

// Infix text of a symbolic entry for messages: "(N*2)", variables by name.
std::string render(const UOp& u) {
  switch (u.op()) {
    case Ops::CONST:
      return std::to_string(u.const_int());
    case Ops::DEFINE_VAR:
      return u.arg().as_tuple().at(0).as_string();
    case Ops::ADD:
      return "(" + render(u.src(0)) + "+" + render(u.src(1)) + ")";
    case Ops::MUL:
      return "(" + render(u.src(0)) + "*" + render(u.src(1)) + ")";
    case Ops::IDIV:
      return "(" + render(u.src(0)) + "//" + render(u.src(1)) + ")";
    case Ops::MOD:
      return "(" + render(u.src(0)) + "%" + render(u.src(1)) + ")";
    default:
      return std::string(op_name(u.op())) + "(...)";
  }
}

}  // namespace

std::string to_string(const sint& s) { return s.is_int() ? std::to_string(s.to_int()) : render(s.uop()); }

std::string to_string(const SymShape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); i++) out += (i ? ", " : "") + to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

}  // namespace tunebed
