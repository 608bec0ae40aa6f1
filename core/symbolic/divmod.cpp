// Division and modulo of sums by constants: tinygrad's div_and_mod_folding and the div rules of
// symbolic, re-derived for C's truncating division.
//
// For x = sum(f_i * v_i) + k divided by a constant c > 0, every rule first proves that x's value
// is its true sum (Linear::exact: no wraparound). Then:
//   - two-valued x: x//c and x%c are a line through the two values (any sign);
//   - common factor g of every f_i, k and c: x//c = (x/g)//(c/g), x%c = ((x/g)%(c/g))*g, which
//     holds for truncation too, so x may be negative;
//   - x >= 0, where truncation is floor division: reduce each f_i mod c. If the remainder part
//     stays inside one multiple of c, x%c and x//c are sums; otherwise the multiples of c split
//     out of the division (x = c*Q + R, x//c = Q + R//c when R >= 0), and inside a MOD a term
//     (v%(c*n)) is v, since both are congruent mod c;
//   - x >= 0 whose non-constant terms are all <= 0 ((256 - i)//c): floor turns into a ceiling
//     of the negated terms, a division of a non-negative sum again;
//   - x <= 0 is turned into -((-x)//c), a negative divisor into -(x//(-d)), and x%(-c) is x%c.
// Nested divisions fold too: (x//c1)//c2 == x//(c1*c2) for truncation of any sign.
#include "core/symbolic/rules.hpp"

namespace tunebed::symbolic_detail {

namespace {

// x takes two values, at v = v0 and v0+1 (times f, plus k): the result is the line through both,
// v*(y2-y1) + (y1 - v0*(y2-y1)), for any signs.
UOp two_valued(const Linear& l, i128 c, Ops which) {
  const Linear::Term& t = l.terms[0];
  i128 a = t.f * t.v.vmin() + l.k, b = t.f * t.v.vmax() + l.k;
  i128 y1 = which == Ops::MOD ? cmod(a, c) : cdiv(a, c);
  i128 y2 = which == Ops::MOD ? cmod(b, c) : cdiv(b, c);
  // Ring arithmetic: the constant may wrap, the line's value (y1 or y2) does not.
  return Linear{{{t.v, y2 - y1}}, y1 - t.v.vmin() * (y2 - y1), l.dtype}.build();
}

// Reduce each coefficient to its remainder nearest zero; when the remainder sum lies inside one
// multiple of c, x%c and x//c are sums. Needs floor semantics: x >= 0.
UOp fold_by_remainders(const Linear& l, i128 c, Ops which) {
  Linear rem{{}, floormod(l.k, c), l.dtype}, quo{{}, floordiv(l.k, c), l.dtype};
  for (const Linear::Term& t : l.terms) {
    i128 r = floormod(t.f, c);
    if (r > c - r) r -= c;
    if (r != 0) rem.terms.push_back({t.v, r});
    if (t.f != r) quo.terms.push_back({t.v, (t.f - r) / c});
  }
  if (!rem.exact()) return {};
  i128 q0 = floordiv(rem.lo(), c);
  if (floordiv(rem.hi(), c) != q0) return {};
  if (which == Ops::MOD) {
    rem.k -= q0 * c;
    return rem.build();
  }
  quo.k += q0;
  return quo.build();
}

// x = c*Q + R with Q the terms whose coefficient c divides: x//c = Q + R//c and x%c = R%c, both
// when R >= 0. R's common factor with c cancels as well. Needs x >= 0.
UOp split_multiples(const Linear& l, i128 c, Ops which, bool changed) {
  Linear rem{{}, floormod(l.k, c), l.dtype}, quo{{}, floordiv(l.k, c), l.dtype};
  changed |= l.k != rem.k;
  i128 g = c;
  for (const Linear::Term& t : l.terms) {
    i128 r = floormod(t.f, c);
    if (r == 0) {
      quo.terms.push_back({t.v, t.f / c});
      changed = true;
      continue;
    }
    i128 f = which == Ops::MOD ? r : t.f;  // a MOD only needs the coefficient mod c
    changed |= f != t.f;
    rem.terms.push_back({t.v, f});
    g = gcd(g, f);
  }
  changed |= g != 1;
  if (!changed || !rem.exact() || rem.lo() < 0) return {};
  // R = g*R1 + k with 0 <= k < c: R//c == (R1 + k//g)//(c/g), R%c == g*((R1 + k//g)%(c/g)) + k%g.
  Linear r1{{}, rem.k / g, l.dtype};
  for (const Linear::Term& t : rem.terms) r1.terms.push_back({t.v, t.f / g});
  UOp inner = r1.build(), cg = const_like(inner, c / g);
  if (which == Ops::MOD) return (inner % cg) * const_like(inner, g) + const_like(inner, rem.k % g);
  return inner / cg + quo.build();
}

// (k - y)//c with y >= 0 and k - y >= 0 (the non-constant terms are all <= 0): truncation is
// floor, and floor((k - y)/c) == k//c - ceil((y - k%c)/c) == k//c - (y + c-1 - k%c)//c, whose
// dividend is >= 0 again (tinygrad's rule for x.vmax <= 0 <= n.vmin).
UOp fold_negative_terms(const Linear& l, i128 c) {
  Linear y{{}, c - 1 - floormod(l.k, c), l.dtype};
  for (const Linear::Term& t : l.terms) y.terms.push_back({t.v, -t.f});
  if (y.lo() - y.k < 0 || !y.exact()) return {};
  UOp q = y.build();
  return const_like(q, floordiv(l.k, c)) - q / const_like(q, c);
}

UOp div_and_mod_folding(const Match& m) {
  const UOp &x = m["x"], &cu = m["c"];
  Ops which = m.root.op();
  i128 c = cu.const_int();
  if (c <= 0) return {};
  Linear l = Linear::of(x);
  if (!l.exact()) return {};
  if (l.terms.size() == 1 && i128{l.terms[0].v.vmax()} - l.terms[0].v.vmin() == 1) return two_valued(l, c, which);
  i128 g = c;
  for (const Linear::Term& t : l.terms) g = gcd(g, t.f);
  if ((g = gcd(g, l.k)) > 1) {
    Linear reduced{{}, l.k / g, l.dtype};
    for (const Linear::Term& t : l.terms) reduced.terms.push_back({t.v, t.f / g});
    UOp inner = reduced.build(), cg = const_like(inner, c / g);
    return which == Ops::IDIV ? inner / cg : (inner % cg) * const_like(inner, g);
  }
  if (l.lo() < 0) return {};
  // Inside a MOD by c, a term v%(c*n) may be v: both are congruent mod c, and x >= 0.
  bool unwrapped = false;
  if (which == Ops::MOD)
    for (Linear::Term& t : l.terms)
      if (t.v.op() == Ops::MOD && t.v.src(1).is_const() && t.v.src(1).const_int() != 0 &&
          t.v.src(1).const_int() % c == 0) {
        t.v = t.v.src(0);
        unwrapped = true;
      }
  if (UOp r = fold_by_remainders(l, c, which)) return r;
  if (UOp r = split_multiples(l, c, which, unwrapped)) return r;
  if (which == Ops::IDIV && l.hi() - l.k <= 0)
    if (UOp r = fold_negative_terms(l, c)) return r;
  // x//c == (x//d)//(c/d) for the smallest coefficient d that divides c, when x//d folds
  // (truncation nests).
  if (which == Ops::IDIV) {
    i128 d = c;
    for (const Linear::Term& t : l.terms)
      if (t.f > 1 && t.f < d && c % t.f == 0) d = t.f;
    if (d < c)
      if (UOp inner = fold_by_remainders(l, d, Ops::IDIV)) return inner / const_like(inner, c / d);
  }
  return {};
}

UOp div_div(const Match& m) {
  i128 c = i128{m["c1"].const_int()} * m["c2"].const_int();
  if (c == 0 || !fits(c, m["x"].dtype())) return {};
  return m["x"] / const_like(m["x"], c);
}

// (x//c + a)//d -> (x + a*c)//(c*d) for c, d > 0 when x and a have one sign (floor or ceil
// throughout).
UOp div_add_div(const Match& m) {
  const UOp &x = m["x"];
  i128 c = m["c"].const_int(), a = m["a"].const_int(), d = m["d"].const_int();
  if (c <= 0 || d <= 0 || !range_trusted(x.dtype())) return {};
  if (!((x.vmin() >= 0 && a >= 0) || (x.vmax() <= 0 && a <= 0))) return {};
  Linear inner = Linear::of(x);
  inner.k += a * c;
  if (!inner.exact() || !fits(a * c, x.dtype()) || !fits(c * d, x.dtype())) return {};
  return (x + const_like(x, a * c)) / const_like(x, c * d);
}

}  // namespace

PatternMatcher divmod_rules() {
  UPat x = sivar("x"), d = sivar("d"), c = icvar("c");
  auto negative_divisor = [](const Match& m) { return m["d"].vmax() < 0 && negation_exact(m["d"]); };
  auto nonpositive_dividend = [](const Match& m) {
    // vmin < 0: a dividend that is always 0 (a variable bound to [0, 0]) would negate forever.
    return m["x"].vmax() <= 0 && m["x"].vmin() < 0 && negation_exact(m["x"]) && !m["x"].is_const();
  };
  return PatternMatcher({
      {"divmod-fold", UPat::ops({Ops::IDIV, Ops::MOD}, {x, c}), div_and_mod_folding},
      {"div-div", (x / icvar("c1")) / icvar("c2"), div_div},
      {"div-add-div", (x / c + icvar("a")) / icvar("d"), div_add_div},
      {"div-neg-divisor", x / d, [](const Match& m) { return -(m["x"] / -m["d"]); }, negative_divisor},
      {"mod-neg-divisor", x % c, [](const Match& m) { return m["x"] % const_like(m["c"], -i128{m["c"].const_int()}); },
       [](const Match& m) { return m["c"].const_int() < 0 && negation_exact(m["c"]); }},
      {"div-neg-dividend", x / d, [](const Match& m) { return -(-m["x"] / m["d"]); }, nonpositive_dividend},
      {"mod-neg-dividend", x % d, [](const Match& m) { return -(-m["x"] % m["d"]); }, nonpositive_dividend},
  });
}

}  // namespace tunebed::symbolic_detail
