// Comparisons of sums and products with constants, as the lt rules of tinygrad's symbolic
// (c0+x<c1, c0*x<c1, x//d<c, lt_folding, -x<-y).
//
// CMPLT reads order, so a rule that moves a constant or a factor across it first proves that the
// side it rewrites cannot have wrapped (Linear::exact). CMPEQ and CMPNE only read equality, which
// adding a constant preserves in any ring, so those move constants without a guard.
#include "core/symbolic/rules.hpp"

namespace tunebed::symbolic_detail {

namespace {

i128 ceildiv(i128 a, i128 b) { return -floordiv(-a, b); }

// x + c0 does not wrap for any value of x.
bool add_exact(const Match& m) { return Linear{{{m["x"], 1}}, m["c0"].const_int(), m["x"].dtype()}.exact(); }

// (x + c0) < c1 -> x < c1 - c0, and c1 < (x + c0) -> c1 - c0 < x
UOp lt_add_const(const Match& m) {
  i128 c = i128{m["c1"].const_int()} - m["c0"].const_int();
  const UOp& x = m["x"];
  if (!fits(c, x.dtype()) || !add_exact(m)) return {};
  bool const_left = m.root.src(0).is_const();
  return const_left ? const_like(x, c).lt(x) : x.lt(const_like(x, c));
}

// x*c0 < c1 -> x < ceil(c1/c0), and c1 < x*c0 -> floor(c1/c0) < x, for c0 > 1; for c0 < -1 the
// same on -x, which the guard keeps from wrapping (x*c0 == (-x)*|c0|).
UOp lt_mul_const(const Match& m) {
  i128 c0 = m["c0"].const_int(), c1 = m["c1"].const_int();
  if ((c0 >= -1 && c0 <= 1) || !mul_exact(m["x"], m["c0"])) return {};
  UOp x = m["x"];
  if (c0 < 0) {
    if (!negation_exact(x)) return {};
    x = -x, c0 = -c0;
  }
  if (m.root.src(0).is_const()) return const_like(x, floordiv(c1, c0)).lt(x);
  return x.lt(const_like(x, ceildiv(c1, c0)));
}

// x//d < c for d > 0: truncation rounds toward zero, so a positive bound counts from the floor
// and a non-positive one from the ceiling.
UOp lt_div(const Match& m) {
  i128 d = m["d"].const_int(), c = m["c"].const_int();
  const UOp& x = m["x"];
  if (d <= 0) return {};
  i128 bound = c > 0 ? c * d : c * d - (d - 1);
  if (!fits(bound, x.dtype())) return {};
  return x.lt(const_like(x, bound));
}

// lt_folding: sum(f_i*v_i) + p < c where d = gcd(f_i, c) > 1 and the unit terms p lie in [0, d):
// the comparison is sum(f_i/d * v_i) < c/d.
UOp lt_gcd(const Match& m) {
  const UOp& x = m["x"];
  i128 c = m["c"].const_int();
  if (c <= 0) return {};
  Linear l = Linear::of(x);
  if (!l.exact()) return {};
  Linear units{{}, l.k == 1 ? 1 : 0, l.dtype}, scaled{{}, l.k == 1 ? 0 : l.k, l.dtype};
  for (const Linear::Term& t : l.terms) (t.f == 1 ? units : scaled).terms.push_back(t);
  if (scaled.terms.empty()) return {};
  i128 d = gcd(c, scaled.k);
  for (const Linear::Term& t : scaled.terms) d = gcd(d, t.f);
  if (d <= 1 || units.lo() < 0 || units.hi() >= d) return {};
  for (Linear::Term& t : scaled.terms) t.f /= d;
  scaled.k /= d;
  return scaled.build().lt(const_like(x, c / d));
}

// A simplex with positive coefficients is below 1 only at its origin: sum(a_i*x_i) < 1 with
// a_i >= 1 and x_i >= 0 is sum(x_i) < 1 (tinygrad's canonicalize_simplex).
UOp lt_simplex(const Match& m) {
  Linear l = Linear::of(m["x"]);
  if (l.k != 0 || !l.exact()) return {};
  bool scaled = false;
  for (Linear::Term& t : l.terms) {
    if (t.f < 1 || t.v.vmin() < 0) return {};
    scaled |= t.f > 1;
    t.f = 1;
  }
  if (!scaled) return {};
  UOp x = l.build();
  return x.lt(const_like(x, 1));
}

}  // namespace

PatternMatcher compare_rules() {
  UPat x = sivar("x"), y = sivar("y"), c0 = icvar("c0"), c1 = icvar("c1");
  auto not_const = [](const UOp& u) { return !u.is_const(); };
  UPat xi = ivar("x");
  return PatternMatcher({
      {"lt-add-const", (x + c0).lt(c1), lt_add_const},
      {"const-lt-add", c1.lt(x + c0), lt_add_const},
      {"eq-add-const", (xi + c0).eq(c1), [](const Match& m) { return m["x"].eq(fold_const(Ops::SUB, m["c1"], m["c0"])); }},
      {"ne-add-const", (xi + c0).ne(c1), [](const Match& m) { return m["x"].ne(fold_const(Ops::SUB, m["c1"], m["c0"])); }},
      {"lt-mul-const", (x * c0).lt(c1), lt_mul_const},
      {"const-lt-mul", c1.lt(x * c0), lt_mul_const},
      {"lt-div", (x / icvar("d")).lt(icvar("c")), lt_div},
      {"lt-gcd", UPat::var("x").where(is_sint).where(not_const).lt(icvar("c")), lt_gcd},
      {"lt-simplex", sivar("x").lt(UPat::cnst(1)), lt_simplex},
      {"lt-neg", (x * -1).lt(y * -1), [](const Match& m) { return m["y"].lt(m["x"]); },
       [](const Match& m) { return negation_exact(m["x"]) && negation_exact(m["y"]); }},
  });
}

}  // namespace tunebed::symbolic_detail
