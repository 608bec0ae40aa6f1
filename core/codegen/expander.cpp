// The expander, tinygrad's codegen/expander.py, and the GEP/VECTORIZE rules it needs
// (gep_pushing, from tinygrad's uop/symbolic.py).
//
// An UNROLL(v, ((axis, size), ...)) is a scalar-looking value that is really the lanes of the
// vector v, one per combination of the named axes (the last axis fastest). An op with UNROLLed
// sources becomes the same op on vectors, with every source brought to the same lane order (a
// GEP that swizzles, or a VECTORIZE that repeats a plain source), and is itself wrapped in an
// UNROLL of the union of the axes. A CONTRACT removes axes from an UNROLL: its lanes become a
// vector value (the horizontal part of a reduce, the lanes of a store). When every UNROLL has
// been consumed, what is left is ordinary vector code.
#include <algorithm>
#include <map>

#include "core/codegen/passes.hpp"
#include "core/codegen/wmma.hpp"

namespace tunebed::codegen_detail {

UOp gep(const UOp& x, std::vector<int64_t> lanes) {
  bool identity = static_cast<int64_t>(lanes.size()) == x.dtype().count;
  for (size_t i = 0; identity && i < lanes.size(); i++) identity = lanes[i] == static_cast<int64_t>(i);
  if (identity) return x;
  const DType d = x.dtype().scalar_type().vec(static_cast<int>(lanes.size()));
  return UOp::make(Ops::GEP, d, {x}, Arg::ints(lanes));
}

UOp broadcast(const UOp& x, int n) { return n == 1 ? x : vectorize(std::vector<UOp>(n, x)); }

UOp vectorize(const std::vector<UOp>& lanes) {
  if (lanes.size() == 1) return lanes[0];
  return UOp::make(Ops::VECTORIZE, lanes[0].dtype().vec(static_cast<int>(lanes.size())), lanes);
}

UOp lane(const UOp& x, int64_t i) {
  if (x.op() == Ops::VECTORIZE) return x.src(i);
  if (x.dtype().count == 1) return x;
  return gep(x, {i});
}

namespace {

using Axes = std::vector<std::pair<int64_t, int64_t>>;  // (axis, size), as an UNROLL's arg

Axes axes_of(const UOp& u) {
  Axes out;
  for (const Arg& a : u.arg().as_tuple())
    out.emplace_back(a.as_tuple().at(0).as_int(), a.as_tuple().at(1).as_int());
  return out;
}

Arg to_arg(const Axes& axes) {
  ArgTuple t;
  for (auto [axis, size] : axes) t.push_back(Arg::tuple({Arg(axis), Arg(size)}));
  return Arg(std::move(t));
}

int64_t lane_count(const Axes& axes) {
  int64_t n = 1;
  for (const auto& a : axes) n *= a.second;
  return n;
}

// Every assignment of a value to each axis, the last axis fastest (itertools.product).
std::vector<std::map<int64_t, int64_t>> choices(const Axes& axes) {
  std::vector<std::map<int64_t, int64_t>> out{{}};
  for (auto [axis, size] : axes) {
    std::vector<std::map<int64_t, int64_t>> next;
    for (const auto& c : out)
      for (int64_t v = 0; v < size; v++) {
        next.push_back(c);
        next.back()[axis] = v;
      }
    out = std::move(next);
  }
  return out;
}

// The lane of an UNROLL over `axes` that holds the assignment `values`.
int64_t lane_of(const Axes& axes, const std::map<int64_t, int64_t>& values) {
  int64_t idx = 0, mul = 1;
  for (auto it = axes.rbegin(); it != axes.rend(); ++it) {
    idx += values.at(it->first) * mul;
    mul *= it->second;
  }
  return idx;
}

UOp do_expand(const UOp& root) {
  std::vector<UOp> expands;
  for (const UOp& s : root.src())
    if (s.op() == Ops::UNROLL) expands.push_back(s);
  if (expands.empty()) return {};
  // A WMMA's own sub-axes are lanes of its operands, not copies of it: a source still unrolled
  // on one reads its lane 0 (tinygrad's exclude_args).
  const std::vector<int64_t> exclude = root.op() == Ops::WMMA ? wmma_axes(root) : std::vector<int64_t>{};
  Axes axes = axes_of(expands[0]);
  if (!exclude.empty() ||
      !std::all_of(expands.begin(), expands.end(), [&](const UOp& e) { return axes_of(e) == axes; })) {
    axes.clear();
    for (const UOp& e : expands)
      for (const auto& a : axes_of(e))
        if (std::find(exclude.begin(), exclude.end(), a.first) == exclude.end()) axes.push_back(a);
    std::sort(axes.begin(), axes.end());
    axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  }
  const int n = static_cast<int>(lane_count(axes));
  std::vector<UOp> srcs;
  for (const UOp& s : root.src()) {
    if (s.op() == Ops::UNROLL) {
      const Axes own = axes_of(s);
      if (own == axes) {
        srcs.push_back(s.src(0));
        continue;
      }
      // Each lane of the result reads the lane of s that has the same values on s's axes.
      const int64_t width = s.dtype().count;
      std::vector<int64_t> lanes;
      for (auto c : choices(axes)) {
        for (int64_t x : exclude) c.emplace(x, 0);
        for (int64_t j = 0; j < width; j++) lanes.push_back(lane_of(own, c) * width + j);
      }
      srcs.push_back(gep(s.src(0), lanes));
    } else if (s.dtype().ptr || s.dtype().is_void() ||
               ((root.op() == Ops::REDUCE || root.op() == Ops::STORE) && s.op() == Ops::RANGE)) {
      // One buffer, indexed at n places; a statement to come after (the BARRIER a LOAD of local
      // memory waits for); the loops a REDUCE or STORE closes.
      srcs.push_back(s);
    } else if (s.dtype().count > 1) {
      std::vector<UOp> lanes;
      for (int k = 0; k < n; k++)
        for (int64_t j = 0; j < s.dtype().count; j++) lanes.push_back(lane(s, j));
      srcs.push_back(vectorize(lanes));
    } else {
      srcs.push_back(broadcast(s, n));
    }
  }
  Arg arg = root.arg();
  if (root.op() == Ops::GEP) {
    // The GEP of lane g of every group of lanes.
    const int64_t total = srcs[0].dtype().count, step = total / n;
    std::vector<int64_t> lanes;
    for (int64_t i = root.arg().as_ints().at(0); i < total; i += step) lanes.push_back(i);
    arg = Arg::ints(lanes);
  }
  DType d = root.dtype();
  if (root.op() == Ops::INDEX)
    d = d.with_v(n);
  else if (!d.is_void())
    d = d.scalar_type().vec(d.count * n);
  UOp expanded = UOp::make(root.op(), d, std::move(srcs), arg);
  return UOp::make(Ops::UNROLL, root.dtype(), {expanded}, to_arg(axes));
}

UOp do_contract(const UOp& con) {
  const UOp& ex = con.src(0);
  // A CONTRACT of a value that is the same in every lane repeats it.
  if (ex.op() != Ops::UNROLL) return broadcast(ex, con.dtype().count);
  const Axes ex_axes = axes_of(ex), con_axes = axes_of(con);
  Axes rest;
  for (const auto& a : ex_axes)
    if (std::find(con_axes.begin(), con_axes.end(), a) == con_axes.end()) rest.push_back(a);
  std::vector<int64_t> lanes;
  for (const auto& r : choices(rest))
    for (const auto& c : choices(con_axes)) {
      std::map<int64_t, int64_t> both = r;
      both.insert(c.begin(), c.end());
      lanes.push_back(lane_of(ex_axes, both));
    }
#ifdef TUNEBED_PLANT_BUG_UNROLL  // planted (scripts/fuzz-planted): the last lane reads the one before
  if (lanes.size() > 1) lanes.back() = lanes[lanes.size() - 2];
#endif
  return UOp::make(Ops::UNROLL, con.dtype(), {gep(ex.src(0), lanes)}, to_arg(rest));
}

}  // namespace

const PatternMatcher& gep_pushing() {
  static const PatternMatcher pm = {
      {"gep-gep", UPat(Ops::GEP, {UPat(Ops::GEP).named("inner")}).named("g"),
       [](const Match& m) {
         std::vector<int64_t> outer = m["g"].arg().as_ints(), inner = m["inner"].arg().as_ints(), lanes;
         for (int64_t i : outer) lanes.push_back(inner.at(i));
         return gep(m["inner"].src(0), lanes);
       }},
      {"gep-vectorize", UPat(Ops::GEP, {UPat(Ops::VECTORIZE).named("v")}).named("g"),
       [](const Match& m) {
         std::vector<UOp> lanes;
         for (int64_t i : m["g"].arg().as_ints()) lanes.push_back(m["v"].src(i));
         return vectorize(lanes);
       }},
      {"gep-scalar",
       UPat(Ops::GEP, {UPat::var("x").where([](const UOp& x) { return x.dtype().count == 1; })}).named("g"),
       [](const Match& m) { return broadcast(m["x"], static_cast<int>(m["g"].arg().as_ints().size())); }},
      // VECTORIZE(GEP(x, 0), GEP(x, 1), ...) over all of x is x.
      {"vectorize-geps", UPat(Ops::VECTORIZE).src_all(UPat(Ops::GEP)).named("v"),
       [](const Match& m) {
         const UOp& v = m["v"];
         const UOp& x = v.src(0).src(0);
         if (x.dtype().count != v.dtype().count) return UOp();
         for (size_t i = 0; i < v.src().size(); i++)
           if (v.src(i).src(0) != x ||
               v.src(i).arg().as_ints() != std::vector<int64_t>{static_cast<int64_t>(i)})
             return UOp();
         return x;
       }},
  };
  return pm;
}

const PatternMatcher& expander() {
  static const OpSet expandable = GroupOp::ALU | OpSet{Ops::CAST,  Ops::BITCAST, Ops::GEP,       Ops::LOAD,
                                                       Ops::STORE, Ops::INDEX,   Ops::VECTORIZE, Ops::REDUCE,
                                                       Ops::WMMA};
  static const PatternMatcher pm = {
      {"double-unroll", UPat(Ops::UNROLL, {UPat(Ops::UNROLL).named("inner")}).named("outer"),
       [](const Match& m) {
         Axes axes = axes_of(m["inner"]);
         for (const auto& a : axes_of(m["outer"])) axes.push_back(a);
         return UOp::make(Ops::UNROLL, m["outer"].dtype(), {m["inner"].src(0)}, to_arg(axes));
       }},
      {"do-expand", UPat::ops(expandable).named("root"), [](const Match& m) { return do_expand(m["root"]); }},
      {"do-contract", UPat(Ops::CONTRACT).named("con"), [](const Match& m) { return do_contract(m["con"]); }},
      {"empty-unroll", UPat(Ops::UNROLL, {UPat::var("x")}).arg(ArgTuple{}), UPat::var("x")},
      // A BARRIER waits for the expanded STORE as a whole.
      {"barrier-unroll", UPat(Ops::BARRIER, {UPat(Ops::UNROLL, {UPat::var("x")})}).named("b"),
       [](const Match& m) { return m["b"].with_src({m["x"]}); }},
  };
  return pm;
}

}  // namespace tunebed::codegen_detail
