// Decisions from range analysis (vmin/vmax): a node whose range is one value is that constant
// (which decides comparisons, x%c of a small x, x//c of a bounded x), MAX of ordered ranges picks
// a side, and a modulo whose quotient is the same over the whole range is a subtraction, as the
// first case of tinygrad's div_and_mod_folding.
#include "core/symbolic/rules.hpp"

namespace tunebed::symbolic_detail {

namespace {

bool sources_trusted(const UOp& u) {
  for (const UOp& s : u.src())
    if (!range_trusted(s.dtype()) && !s.dtype().is_float()) return false;
  return true;
}

// The bounds describe the value only when they are the range analysis of a trusted dtype: a
// comparison of uint64s has a bool dtype but reads untrusted bounds.
bool single_value(const UOp& u) {
  return !u.is_const() && range_trusted(u.dtype()) && sources_trusted(u) && u.vmin() == u.vmax();
}

// x%y where the quotient x//y is one q for every x and y in range: y does not change sign, and
// the truncated quotient is monotone in both, so the four corners bound it. (The same question
// for x//y is answered by range-const: the range analysis of IDIV takes the same corners.)
UOp mod_by_range(const Match& m) {
  const UOp &x = m["x"], &y = m["y"];
  if (!range_trusted(x.dtype()) || x.dtype().is_unsigned()) return {};
  i128 x0 = x.vmin(), x1 = x.vmax(), y0 = y.vmin(), y1 = y.vmax();
#ifdef TUNEBED_PLANT_BUG_SYMBOLIC_MOD  // planted (scripts/fuzz-planted): x%c is x only for x < c
  if (x0 >= 0 && y0 == y1 && x1 <= y0) return x;
#endif
  if (y0 * y1 <= 0) return {};
  i128 q = cdiv(x0, y0);
  if (cdiv(x0, y1) != q || cdiv(x1, y0) != q || cdiv(x1, y1) != q) return {};
  return q == 0 ? x : x - y * const_like(y, q);  // x - q*y never wraps: it is x%y
}

// max(x, y) is x when every x is at least every y.
UOp max_ordered(const Match& m) {
  const UOp &x = m["x"], &y = m["y"];
  if (!range_trusted(x.dtype())) return {};
  if (x.vmin() >= y.vmax()) return x;
  if (y.vmin() >= x.vmax()) return y;
  return {};
}

}  // namespace

PatternMatcher range_rules() {
  return PatternMatcher({
      {"range-const", UPat::ops(GroupOp::ALU | OpSet{Ops::DEFINE_VAR, Ops::SPECIAL, Ops::RANGE, Ops::CAST}).named("u"),
       [](const Match& m) { return const_like(m["u"], m["u"].vmin()); },
       [](const Match& m) { return single_value(m["u"]); }},
      {"max-ordered", ivar("x").max(ivar("y")), max_ordered},
      {"mod-range", sivar("x") % sivar("y"), mod_by_range},
  });
}

}  // namespace tunebed::symbolic_detail
