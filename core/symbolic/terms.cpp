// The helpers that rules.hpp declares: patterns, constant arithmetic, the Linear view of a sum,
// and the canonical order of operands.
#include <algorithm>

#include "core/ir/exec_alu.hpp"
#include "core/symbolic/rules.hpp"

namespace tunebed::symbolic_detail {

UPat ivar(const std::string& name) { return UPat::var(name).where(is_int); }
UPat sivar(const std::string& name) { return UPat::var(name).where(is_sint); }
UPat bvar(const std::string& name) { return UPat::var(name).where(is_bool); }
UPat icvar(const std::string& name) { return UPat::cvar(name).where(is_int); }

UOp const_like(const UOp& u, i128 v) {
  // Wrap through the unsigned 64-bit pattern: the dtype's own wraparound.
  return UOp::const_int(u.dtype(), static_cast<int64_t>(static_cast<uint64_t>(v)));
}

UOp fold_const(Ops op, const UOp& a, const UOp& b) {
  ConstValue ops[2] = {ConstValue::of(a), ConstValue::of(b)};
  return exec_alu(op, a.dtype(), ops).to_uop();
}

bool fits(i128 v, const DType& d) { return v >= d.int_min() && v <= d.int_max(); }

i128 floordiv(i128 a, i128 b) {
  i128 q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
i128 floormod(i128 a, i128 b) { return a - floordiv(a, b) * b; }

i128 gcd(i128 a, i128 b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b != 0) a = std::exchange(b, a % b);
  return a;
}

bool negation_exact(const UOp& x) { return range_trusted(x.dtype()) && x.vmin() > x.dtype().int_min(); }

bool mul_exact(const UOp& x, const UOp& y) {
  if (!range_trusted(x.dtype()) || !range_trusted(y.dtype()) || x.dtype().is_bool()) return false;
  i128 a0 = x.vmin(), a1 = x.vmax(), b0 = y.vmin(), b1 = y.vmax();
  for (i128 p : {a0 * b0, a0 * b1, a1 * b0, a1 * b1})
    if (!fits(p, x.dtype())) return false;
  return true;
}

std::vector<UOp> split_uop(const UOp& x, Ops sep) {
  std::vector<UOp> out;
  std::vector<const UOp*> stack{&x};
  while (!stack.empty()) {
    const UOp* u = stack.back();
    stack.pop_back();
    if (u->op() == sep) {
      for (auto it = u->src().rbegin(); it != u->src().rend(); ++it) stack.push_back(&*it);
    } else {
      out.push_back(*u);
    }
  }
  return out;
}

Linear Linear::of(const UOp& x) {
  Linear l;
  l.dtype = x.dtype();
  for (const UOp& u : split_uop(x, Ops::ADD)) {
    if (u.is_const()) {
      l.k += u.const_int();
    } else if (u.op() == Ops::MUL && u.src(1).is_const()) {
      l.terms.push_back({u.src(0), u.src(1).const_int()});
    } else if (u.op() == Ops::MUL && u.src(0).is_const()) {
      l.terms.push_back({u.src(1), u.src(0).const_int()});
    } else {
      l.terms.push_back({u, 1});
    }
  }
  return l;
}

i128 Linear::lo() const {
  i128 s = k;
  for (const Term& t : terms) s += t.f >= 0 ? t.f * t.v.vmin() : t.f * t.v.vmax();
  return s;
}

i128 Linear::hi() const {
  i128 s = k;
  for (const Term& t : terms) s += t.f >= 0 ? t.f * t.v.vmax() : t.f * t.v.vmin();
  return s;
}

bool Linear::exact() const {
  if (!range_trusted(dtype) || dtype.is_bool()) return false;
  // Coefficients and bounds are at most 64-bit, so every product and the sum of a few hundred
  // of them stay far inside 128 bits.
  for (const Term& t : terms)
    if (!range_trusted(t.v.dtype()) || !fits(t.f, dtype)) return false;
  return fits(lo(), dtype) && fits(hi(), dtype);
}

UOp Linear::build() const {
  // In normalize_sum's order (terms sorted, constant last), so the result is already normal and
  // graph_rewrite does not rebuild it.
  std::vector<const Term*> order;
  for (const Term& t : terms)
    if (t.f != 0) order.push_back(&t);
  std::stable_sort(order.begin(), order.end(), [](const Term* a, const Term* b) { return compare_uops(a->v, b->v) < 0; });
  UOp out;
  for (const Term* t : order) {
    UOp term = t->f == 1 ? t->v : t->v * const_like(t->v, t->f);
    out = out ? out + term : term;
  }
  if (!out) return const_like(UOp::const_int(dtype, 0), k);
  return k == 0 ? out : out + const_like(out, k);
}

namespace {

// Constants sort last, so `x + 3` and `x * 2` are the canonical forms, as in tinygrad, where
// CONST has the largest op value.
int op_rank(Ops op) { return op == Ops::CONST ? 1000 : static_cast<int>(op); }

int leaf_compare(const UOp& a, const UOp& b) {
  if (a.op() == Ops::DEFINE_VAR) {
    const std::string& x = a.arg().as_tuple().at(0).as_string();
    const std::string& y = b.arg().as_tuple().at(0).as_string();
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.op() == Ops::CONST) {
    double x = a.const_value(), y = b.const_value();
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return 0;
}

int compare_depth(const UOp& a, const UOp& b, int depth) {
  if (a == b) return 0;
  if (int d = op_rank(a.op()) - op_rank(b.op())) return d < 0 ? -1 : 1;
  if (int d = leaf_compare(a, b)) return d;
  if (depth > 0) {
    size_t n = std::min(a.src().size(), b.src().size());
    for (size_t i = 0; i < n; i++)
      if (int d = compare_depth(a.src(i), b.src(i), depth - 1)) return d;
    if (a.src().size() != b.src().size()) return a.src().size() < b.src().size() ? -1 : 1;
  }
  return a.hash() < b.hash() ? -1 : a.hash() > b.hash() ? 1 : 0;
}

}  // namespace

// Three levels of sources decide nearly every order by what a reader sees (i before j, i*4 before
// j); beyond that the structural hash breaks the tie, stable from run to run.
int compare_uops(const UOp& a, const UOp& b) { return compare_depth(a, b, 3); }

}  // namespace tunebed::symbolic_detail
