// Identities: rules that remove an op whatever its operands' values (tinygrad's "self folding",
// "zero folding" and the WHERE and bool rules of symbolic_simple and symbolic).
//
// Checked against C semantics and wraparound: x//-1 is -x also at INT_MIN (both wrap); x%x is 0
// also for x == 0 (x%0 == x); (x*y)//y needs y != 0 and x*y not to wrap. Floats keep only what
// IEEE keeps: x*1 and x/1, not x+0 (-0.0+0.0 is +0.0) nor x*0 (NaN*0 is NaN).
#include "core/symbolic/rules.hpp"

namespace tunebed::symbolic_detail {

namespace {

UOp constant(const UOp& like, int64_t v) { return UOp::const_int(like.dtype(), v); }
UOp false_like(const UOp& x) { return UOp::const_bool(false).cast(dtypes::bool_.vec(x.dtype().count)); }
UOp true_like(const UOp& x) { return UOp::const_bool(true).cast(dtypes::bool_.vec(x.dtype().count)); }

bool excludes_zero(const UOp& y) { return range_trusted(y.dtype()) && (y.vmin() > 0 || y.vmax() < 0); }

// Every value x can take is exactly representable in `to` (both integers or bools).
bool holds_every_value(const DType& to, const UOp& x) {
  const DType& from = x.dtype();
  if (!to.is_int() || !(from.is_int() || from.is_bool()) || to.count != 1 || from.count != 1) return false;
  if (from.is_bool()) return true;
  if (range_trusted(from) && x.vmin() >= to.int_min() && x.vmax() <= to.int_max()) return true;
  return to.is_unsigned() == from.is_unsigned() ? to.itemsize() >= from.itemsize()
                                                : !to.is_unsigned() && to.itemsize() > from.itemsize();
}

}  // namespace

PatternMatcher identity_rules() {
  UPat x = UPat::var("x"), y = UPat::var("y"), xi = ivar("x"), xb = bvar("x"), yb = bvar("y");
  UPat c = UPat::cvar("c");
  UPat t = UPat::var("t"), f = UPat::var("f"), cond = UPat::var("cond");
  UPat bool_true = UPat::cnst(1).where(is_bool), bool_false = UPat::cnst(0).where(is_bool);
  auto X = [](const Match& m) { return m["x"]; };
  return PatternMatcher({
      // ** self folding **
      {"add-zero", xi + 0, xi},
      {"mul-one", x * 1, x},
      {"xor-zero", xi ^ UPat::cnst(0), xi},
      {"div-one", x / 1, x},
      {"div-neg-one", xi / -1, [](const Match& m) { return -m["x"]; }},
      {"div-self", x / x, [](const Match& m) { return constant(m["x"], 1); },
       [](const Match& m) { return excludes_zero(m["x"]); }},
      {"mul-div", (x * y) / y, X, [](const Match& m) { return excludes_zero(m["y"]) && mul_exact(m["x"], m["y"]); }},
      {"mod-mod", (UPat::var() % y).named("base") % y, [](const Match& m) { return m["base"]; }},
      // ** zero folding **
      {"mul-zero", xi * 0, [](const Match& m) { return constant(m["x"], 0); }},
      {"mod-one", xi % 1, [](const Match& m) { return constant(m["x"], 0); }},
      {"mod-neg-one", xi % -1, [](const Match& m) { return constant(m["x"], 0); }},
      {"mod-self", xi % xi, [](const Match& m) { return constant(m["x"], 0); }},
      {"lt-self", x.lt(x), [](const Match& m) { return false_like(m["x"]); }},
      {"ne-self", xi.ne(xi), [](const Match& m) { return false_like(m["x"]); }},
      {"eq-self", xi.eq(xi), [](const Match& m) { return true_like(m["x"]); }},
      // ** bool algebra: MUL is AND, ADD and MAX are OR **
      {"bool-mul", xb * yb, [](const Match& m) { return m["x"] & m["y"]; }},
      {"bool-add", xb + yb, [](const Match& m) { return m["x"] | m["y"]; }},
      {"bool-max", xb.max(yb), [](const Match& m) { return m["x"] | m["y"]; }},
      {"and-true", xb & bool_true, xb},
      {"and-false", xb & bool_false.named("c"), c},
      {"or-true", xb | bool_true.named("c"), c},
      {"or-false", xb | bool_false, xb},
      {"idempotent", UPat::ops({Ops::AND, Ops::OR, Ops::MAX}, {x, x}), X},
      {"or-absorb", x | (x & UPat::var()), X},
      {"not-not", xb.ne(bool_true).ne(bool_true), xb},
      // ** where **
      {"where-same", UPat::var().where(x, x), X},
      {"where-const-cond", c.where(t, f), [](const Match& m) { return m["c"].const_value() != 0 ? m["t"] : m["f"]; }},
      {"where-not", bvar("cond").ne(bool_true).where(t, f), [](const Match& m) { return m["cond"].where(m["f"], m["t"]); }},
      {"where-is-cond", xb.where(bool_true, bool_false), xb},
      // a.where(b.where(c, d), d) -> (a & b).where(c, d)
      {"where-where", bvar("a").where(bvar("b").where(UPat::var("c"), UPat::var("d")), UPat::var("d")),
       [](const Match& m) { return (m["a"] & m["b"]).where(m["c"], m["d"]); }},
      // two WHEREs on one condition combine when a branch pair is constant (so it folds)
      {"where-alu-where",
       UPat::ops(GroupOp::Binary, {cond.where(t, f), cond.where(UPat::var("tt"), UPat::var("ff"))}).named("alu"),
       [](const Match& m) {
         Ops op = m["alu"].op();
         return m["cond"].where(UOp::make(op, m["alu"].dtype(), {m["t"], m["tt"]}),
                                UOp::make(op, m["alu"].dtype(), {m["f"], m["ff"]}));
       },
       [](const Match& m) {
         return (m["t"].is_const() && m["tt"].is_const()) || (m["f"].is_const() && m["ff"].is_const());
       }},
      // ** cast **
      {"cast-noop", UPat::ops({Ops::CAST, Ops::BITCAST}).named("root"),
       [](const Match& m) { return m["root"].dtype() == m["root"].src(0).dtype() ? m["root"].src(0) : UOp(); }},
      // x.cast(a).cast(b) -> x.cast(b) when a holds every value of x: by its dtype (tinygrad's
      // can_safe_cast) or by its range
      {"cast-through", UPat::var("x").cast().named("a").cast().named("b"),
       [](const Match& m) { return m["x"].cast(m["b"].dtype()); },
       [](const Match& m) { return holds_every_value(m["a"].dtype(), m["x"]); }},
  });
}

}  // namespace tunebed::symbolic_detail
