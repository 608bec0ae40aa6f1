// REDUCEs that need no loop, tinygrad's reduce_unparented and reduce_collapse
// (codegen/devectorizer.py). tinygrad builds arange as a cumulative sum and indexing as a one-hot
// sum, so real models are full of sums like
//
//   arange:     sum over r < N of  WHERE(r + i < c, 0, 1)          = clamp(N - (c - i), 0, N)
//   embedding:  sum over r < V of  WHERE(idx == r, w[r*D + d], 0)  = w[idx*D + d] if 0 <= idx < V
//
// which are O(N) loops per output element (tinygrad's dataset has 10^14-iteration ones) and have
// closed forms. reduce_collapse tries the rules below on the reduce alone, with every value it
// reads that does not depend on r standing in as a variable, and keeps the result only when no
// loop is left; a partial result (a sum split into sums, one of which keeps its loop) is thrown
// away. Each rule is an equality by itself (tinygrad's "WHERE on LOAD" is not: it moves a sum's
// gate into a load, and holds only once the next rule removes r). Float sums are reassociated.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "core/codegen/passes.hpp"
#include "core/symbolic/symbolic.hpp"

namespace tunebed::codegen_detail {

UOp reduce_unparented(const UOp& red) {
  std::vector<UOp> topo = red.src(0).toposort(), parented, unparented;
  bool folded = false;
  for (size_t i = 1; i < red.src().size(); i++) {
    const UOp& r = red.src(i);
    if (r.op() != Ops::RANGE)
      folded = true;
    else
      (std::find(topo.begin(), topo.end(), r) != topo.end() ? parented : unparented).push_back(r);
  }
  if (unparented.empty() && !folded) return {};
  const Ops op = red.arg().as_op();
  if (op != Ops::ADD && op != Ops::MAX)
    throw CodegenError("REDUCE " + std::string(op_name(op)) + " over an axis its input does not use");
  std::vector<UOp> srcs{red.src(0)};
  srcs.insert(srcs.end(), parented.begin(), parented.end());
  UOp ret = red.with_src(srcs);
  if (op != Ops::ADD || unparented.empty()) return ret;
  const DType scalar = red.dtype().scalar_type();
  for (const UOp& r : unparented) ret = ret * broadcast(r.src(0).cast(scalar), red.dtype().count);
  // The loop's sum starts at +0.0, so n copies of -0.0 sum to +0.0, and n * -0.0 is -0.0; adding
  // +0.0 changes that and nothing else (fuzz_rewrite: 1 / sin(sum of 0 * b) came out with its
  // infinity's sign flipped).
  if (scalar.is_float()) ret = ret + broadcast(UOp::const_float(scalar, 0.0), red.dtype().count);
  return ret;
}

UOp substitute(const UOp& root, const std::unordered_map<UOp, UOp, UOpHash>& replace) {
  std::unordered_map<UOp, UOp, UOpHash> done;
  for (const UOp& u : root.toposort()) {
    if (auto it = replace.find(u); it != replace.end()) {
      done.emplace(u, it->second);
      continue;
    }
    std::vector<UOp> src;
    for (const UOp& s : u.src()) src.push_back(done.at(s));
    done.emplace(u, src == u.src() ? u : u.with_src(std::move(src)));
  }
  return done.at(root);
}

namespace {

bool has_range(const UOp& u) {
  for (const UOp& x : u.toposort())
    if (x.op() == Ops::RANGE) return true;
  return false;
}

using i128 = __int128;

bool int_scalar(const DType& d) { return d.is_int() && d.count == 1 && !d.ptr; }
// The rules that reason on order or bounds take signed integers only: vmin/vmax of a uint64 are
// not its bounds, and UOp::min negates, which does not order unsigned values.
bool signed_int(const DType& d) { return int_scalar(d) && !d.is_unsigned(); }

// a + b, and c - b, cannot wrap for any values in their ranges.
bool add_exact(const UOp& a, const UOp& b) {
  const DType& d = a.dtype();
  return signed_int(d) && i128(a.vmin()) + b.vmin() >= d.int_min() &&
         i128(a.vmax()) + b.vmax() <= d.int_max();
}
bool sub_exact(const UOp& c, const UOp& b) {
  const DType& d = c.dtype();
  return signed_int(d) && i128(c.vmin()) - b.vmax() >= d.int_min() &&
         i128(c.vmax()) - b.vmin() <= d.int_max();
}

// x < c, with x + y < c or x * y < c on the left: moves the range-free y to the right.
// The matcher binds the sources of a commutative op in one order; these take either.
UOp lift_add_from_lt(const UOp& x, const UOp& y, const UOp& c) {
  if (has_range(y) && !has_range(x)) return lift_add_from_lt(y, x, c);
  if (has_range(y) || has_range(c) || !add_exact(x, y) || !sub_exact(c, y)) return {};
  return x.lt(c - y);
}
UOp lift_mul_from_lt(const UOp& x, const UOp& y, const UOp& c) {
  // x*y < c  <=>  x < ceil(c / y) for y > 0; (c + y - 1) / y is that ceiling while it is >= 0,
  // where C's truncating division is floor division.
  if (has_range(y) && !has_range(x)) return lift_mul_from_lt(y, x, c);
  if (has_range(y) || has_range(c) || !signed_int(x.dtype()) || y.vmin() <= 0) return {};
  const DType& d = x.dtype();
  const i128 products[] = {i128(x.vmin()) * y.vmin(), i128(x.vmin()) * y.vmax(), i128(x.vmax()) * y.vmin(),
                           i128(x.vmax()) * y.vmax()};
  for (i128 p : products)
    if (p < d.int_min() || p > d.int_max()) return {};
  if (i128(c.vmin()) + y.vmin() - 1 < 0 || i128(c.vmax()) + y.vmax() - 1 > d.int_max()) return {};
  return x.lt((c + y - 1) / y);
}

UOp lift_add_from_ne(const UOp& x, const UOp& y, const UOp& c) {
  if (has_range(y) && !has_range(x)) return lift_add_from_ne(y, x, c);
  return has_range(y) || has_range(c) ? UOp{} : x.ne(c - y);  // equality holds modulo 2^n too
}

// The number of r in [0, n) with r < cut: cut clamped to [0, n], which cannot wrap.
UOp count_below(const UOp& n, const UOp& cut) { return cut.max(cut.const_like(0)).min(n.cast(cut.dtype())); }

// sum over r of (r < cut ? below : above), one of the two being 0.
UOp fold_range(const UOp& r, const UOp& cut, const UOp& val, bool val_below) {
  if (has_range(cut) || !signed_int(cut.dtype()) || r.src(0).vmax() > cut.dtype().int_max()) return {};
  UOp below = count_below(r.src(0), cut);
  UOp count = val_below ? below : r.src(0).cast(cut.dtype()) - below;
  return count.cast(val.dtype()) * val;
}

// sum over r of (x & y ? val : 0) with x range-free: x times the sum without it.
UOp sum_of_and(const UOp& red, const UOp& x, const UOp& y, const UOp& val) {
  if (has_range(x) && !has_range(y)) return sum_of_and(red, y, x, val);
  if (has_range(x)) return {};
  return red.with_src({y.where(val, val.const_like(0)), red.src(1)}) * x.cast(val.dtype());
}

// A cast from an integer dtype to one no wider keeps the value modulo 2^bits, a ring
// homomorphism: it goes into sums and products, which brings a cast range out to be matched.
UOp push_narrowing_cast(const UOp& cast, Ops op, const UOp& x, const UOp& y) {
  const DType& d = cast.dtype();
  if (!int_scalar(d) || !int_scalar(x.dtype()) || d.itemsize() > x.dtype().itemsize()) return {};
  return x.cast(d).alu(op, y.cast(d));
}

// A cast of r to a signed dtype that holds all its values: the value is r's.
bool widens(const UOp& cast) {
  return signed_int(cast.dtype()) && cast.src(0).vmax() <= cast.dtype().int_max();
}

// idx when gate is `idx cmp r` (or r widened) with idx range-free: the one r (CMPEQ) or the all
// but one (CMPNE) that the gate passes.
UOp one_hot_index(const UOp& gate, const UOp& r, Ops cmp) {
  if (gate.op() != cmp) return {};
  for (size_t side : {0, 1}) {
    const UOp &a = gate.src(side), &idx = gate.src(1 - side);
    const bool is_r = a == r || (a.op() == Ops::CAST && a.src(0) == r && widens(a));
    if (is_r && int_scalar(idx.dtype()) && !has_range(idx)) return idx;
  }
  return {};
}

// sum over r of (idx == r ? buf[expr(r)] : 0) is buf[expr(idx)] if 0 <= idx < n, else 0: a gated
// load. The bounds are checked in the wider of the two dtypes, so that no cast wraps idx into them.
UOp sum_of_one_hot_load(const UOp& red, const UOp& gate, Ops cmp, const UOp& index) {
  const UOp& r = red.src(1);
  const UOp idx = one_hot_index(gate, r, cmp);
  if (!idx) return {};
  const DType wide = idx.dtype().itemsize() >= r.dtype().itemsize() ? idx.dtype() : r.dtype();
  const UOp i = idx.cast(wide);
  const UOp in_range = i.lt(0).logical_not() & i.lt(r.src(0).cast(wide));
  const UOp at = substitute(index.src(1), {{r, idx.cast(r.dtype())}});
  return UOp::make(Ops::LOAD, red.dtype(),
                   {UOp::make(Ops::INDEX, index.dtype(), {index.src(0), at, in_range})});
}

const UPat kRange = UPat(Ops::RANGE).named("r");

// r cast to an integer dtype that holds all its values (the lowerer's int64 index arithmetic).
const UPat kWidenedRange = kRange.cast().where(widens);

UPat sum_over_r(const UPat& value) {
  return UPat(Ops::REDUCE, {value, kRange}).arg(Arg(Ops::ADD)).named("red");
}

// Scalar patterns: a reduce reaches these only when its input and dtype are scalars.
const PatternMatcher& collapse_rules() {
  const UPat x = UPat::var("x"), y = UPat::var("y"), c = UPat::var("c"), gate = UPat::var("gate");
  const UPat load = UPat(Ops::LOAD, {UPat(Ops::INDEX, {UPat::var(), UPat::var()}).named("index")});
  static const PatternMatcher pm = {
      {"lift-add-from-lt", (x + y).lt(c),
       [](const Match& m) { return lift_add_from_lt(m["x"], m["y"], m["c"]); }},
      {"lift-mul-from-lt", (x * y).lt(c),
       [](const Match& m) { return lift_mul_from_lt(m["x"], m["y"], m["c"]); }},
      {"lift-add-from-ne", (x + y).ne(c),
       [](const Match& m) { return lift_add_from_ne(m["x"], m["y"], m["c"]); }},
      {"not-ne-is-eq", x.ne(y).ne(UPat::cnst(1)), [](const Match& m) { return m["x"].eq(m["y"]); }},
      // 0 <= r < n, so comparing r with c is comparing it with c clamped to [0, n].
      {"push-cast-into-add", (x + y).cast().named("cast"),
       [](const Match& m) { return push_narrowing_cast(m["cast"], Ops::ADD, m["x"], m["y"]); }},
      {"push-cast-into-mul", (x * y).cast().named("cast"),
       [](const Match& m) { return push_narrowing_cast(m["cast"], Ops::MUL, m["x"], m["y"]); }},
      // Widening keeps x's value, so casting on from there is casting x.
      {"cast-of-widening-cast", x.cast().cast().named("cast"),
       [](const Match& m) {
         const UOp &outer = m["cast"], &inner = outer.src(0), &v = m["x"];
         const bool ints = int_scalar(outer.dtype()) && int_scalar(inner.dtype()) && int_scalar(v.dtype());
         return ints && inner.dtype().itemsize() >= v.dtype().itemsize() ? v.cast(outer.dtype()) : UOp{};
       }},
      {"narrow-range-compare", kWidenedRange.lt(c),
       [](const Match& m) {
         const UOp& r = m["r"];
         return has_range(m["c"]) ? UOp{} : r.lt(count_below(r.src(0), m["c"]).cast(r.dtype()));
       }},
      {"fold-range-above", sum_over_r(kRange.lt(c).where(UPat::cnst(0), UPat::cvar("val"))),
       [](const Match& m) { return fold_range(m["r"], m["c"], m["val"], false); }},
      {"fold-range-below", sum_over_r(kRange.lt(c).where(UPat::cvar("val"), UPat::cnst(0))),
       [](const Match& m) { return fold_range(m["r"], m["c"], m["val"], true); }},
      {"sum-of-add", sum_over_r(x + y),
       [](const Match& m) {
         const UOp& red = m["red"];
         return red.with_src({m["x"], m["r"]}) + red.with_src({m["y"], m["r"]});
       }},
      {"mul-by-bool-is-where", x * gate.cast(),
       [](const Match& m) {
         const UOp& g = m["gate"];
         return g.dtype().is_bool() ? g.where(m["x"], m["x"].const_like(0)) : UOp{};
       }},
      {"sum-of-one-hot-load", sum_over_r(gate.where(load, UPat::cnst(0))),
       [](const Match& m) { return sum_of_one_hot_load(m["red"], m["gate"], Ops::CMPEQ, m["index"]); }},
      {"sum-of-one-hot-load-else", sum_over_r(gate.where(UPat::cnst(0), load)),
       [](const Match& m) { return sum_of_one_hot_load(m["red"], m["gate"], Ops::CMPNE, m["index"]); }},
      // A range-free factor of the gate multiplies the sum.
      {"sum-of-and", sum_over_r((x & y).where(UPat::cvar("val"), UPat::cnst(0))),
       [](const Match& m) { return sum_of_and(m["red"], m["x"], m["y"], m["val"]); }},
      {"sum-without-range", UPat(Ops::REDUCE).named("red"),
       [](const Match& m) { return reduce_unparented(m["red"]); }},
  };
  return pm;
}

// The sum over r of the scalar `value`, in closed form, or null.
UOp collapse_sum(const UOp& value, const UOp& r, const DType& dtype) {
  const UOp red = UOp::make(Ops::REDUCE, dtype, {value, r}, Arg(Ops::ADD));
  // The nodes under the reduce that depend on its range.
  std::unordered_set<const UOpNode*> dependent{r.get()};
  const std::vector<UOp> topo = value.toposort();
  for (const UOp& u : topo)
    for (const UOp& s : u.src())
      if (dependent.count(s.get())) {
        if (u.op() == Ops::STORE || u.op() == Ops::REDUCE) return {};
        dependent.insert(u.get());
        break;
      }
  if (!dependent.count(value.get())) return reduce_unparented(red);

  // Each range-free value they read becomes a variable with its bounds, so the rules see
  // nothing but r vary. The name cannot be a user variable's.
  std::unordered_map<UOp, UOp, UOpHash> to_var, from_var;
  static const OpSet kept{Ops::CONST, Ops::DEFINE_GLOBAL, Ops::DEFINE_LOCAL, Ops::DEFINE_VAR};
  for (const UOp& u : topo) {
    if (!dependent.count(u.get())) continue;
    for (const UOp& s : u.src()) {
      if (dependent.count(s.get()) || kept.contains(s.op()) || to_var.count(s)) continue;
      if (s.dtype().ptr || s.dtype().count != 1) return {};
      UOp v =
          UOp::variable("reduce collapse " + std::to_string(to_var.size()), s.vmin(), s.vmax(), s.dtype());
      to_var.emplace(s, v);
      from_var.emplace(v, s);
    }
  }
  static const PatternMatcher pm = collapse_rules() + symbolic();
  const UOp collapsed = graph_rewrite(substitute(red, to_var), pm);
  for (const UOp& u : collapsed.toposort())
    if (u.op() == Ops::REDUCE || u.op() == Ops::RANGE) return {};
  return substitute(collapsed, from_var);
}

// Lane i of a vector load is a scalar load of lane i of its index (and gate).
const PatternMatcher& lane_of_load() {
  static const PatternMatcher pm = {
      {"lane-of-load",
       UPat(Ops::GEP, {UPat(Ops::LOAD, {UPat(Ops::INDEX).named("index")}).named("load")}).named("g"),
       [](const Match& m) {
         const std::vector<int64_t> lanes = m["g"].arg().as_ints();
         if (lanes.size() != 1) return UOp{};
         const UOp& index = m["index"];
         std::vector<UOp> srcs{index.src(0)};
         for (size_t i = 1; i < index.src().size(); i++) srcs.push_back(lane(index.src(i), lanes[0]));
         const UOp scalar_index = UOp::make(Ops::INDEX, index.src(0).dtype(), srcs);
         return UOp::make(Ops::LOAD, m["load"].dtype().scalar_type(), {scalar_index});
       }},
  };
  return pm;
}

}  // namespace

UOp reduce_collapse(const UOp& red) {
  if (red.src().size() != 2 || red.arg().as_op() != Ops::ADD || red.dtype().count != 1) return {};
  // A scalar sum of a vector (an UNROLLed reduce axis) is the sum of its lanes' sums. Each lane is
  // made scalar code first (a lane of an UPCAST output is a GEP of vector code), so that the
  // scalar rules can read it.
  static const PatternMatcher scalarize = lane_of_load() + devectorize() + gep_pushing();
  const UOp &in = red.src(0), &r = red.src(1);
  UOp total;
  for (int64_t i = 0; i < in.dtype().count; i++) {
    const UOp sum = collapse_sum(graph_rewrite(lane(in, i), scalarize), r, red.dtype());
    if (!sum) return {};
    total = total ? total + sum : sum;
  }
  return total;
}

}  // namespace tunebed::codegen_detail
