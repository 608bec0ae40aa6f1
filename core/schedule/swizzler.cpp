// merge_views, view_left and view_right: opt/swizzler.py's tables, rule for rule.
#include "core/schedule/swizzler.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/schedule/uop_st.hpp"

namespace tunebed::sched {
namespace {

bool all_unmasked(const ShapeTracker& st) {
  return std::all_of(st.views().begin(), st.views().end(), [](const View& v) { return !v.mask(); });
}

// tinygrad's shape/view.py get_contraction: which old axes make up each new axis, or nullopt.
std::optional<std::vector<std::vector<size_t>>> get_contraction(const SymShape& old_shape,
                                                                const SymShape& new_shape) {
  std::vector<sint> acc_old, acc_new;
  sint a = 1;
  for (const sint& s : old_shape) acc_old.push_back(a = a * s);
  a = 1;
  for (const sint& s : new_shape) acc_new.push_back(a = a * s);
  std::vector<size_t> split;
  for (const sint& acc : acc_new) {
    if (acc == sint(1)) {
      split.push_back(0);
      continue;
    }
    auto it = std::find(acc_old.begin(), acc_old.end(), acc);
    if (it == acc_old.end()) return std::nullopt;
    split.push_back(static_cast<size_t>(it - acc_old.begin()) + 1);
  }
  std::vector<std::vector<size_t>> out;
  for (size_t i = 0; i < split.size(); i++) {
    const size_t st = i == 0 ? 0 : split[i - 1], ed = i + 1 == split.size() ? old_shape.size() : split[i];
    std::vector<size_t> r;
    for (size_t k = st; k < ed; k++) r.push_back(k);
    out.push_back(r);
  }
  return out;
}

bool contains(const std::vector<int64_t>& v, size_t x) {
  return std::find(v.begin(), v.end(), static_cast<int64_t>(x)) != v.end();
}

// get_contraction_with_reduce: like get_contraction, but a reduced axis with no old axes borrows
// the last one of the next non-empty group, so every reduced axis has somewhere to go.
std::optional<std::vector<std::vector<size_t>>> get_contraction_with_reduce(
    const SymShape& old_shape, const SymShape& new_shape, const std::vector<int64_t>& axes) {
  auto contraction = get_contraction(old_shape, new_shape);
  if (!contraction) return std::nullopt;
  auto& c = *contraction;
  for (size_t i = 0; i < c.size(); i++) {
    if (!contains(axes, i) || !c[i].empty()) continue;
    size_t take = i + 1;
    while (take < c.size() && c[take].empty()) take++;
    if (take == c.size() || new_shape[take] != sint(1)) return std::nullopt;
    for (size_t j = take; j > i; j--) {
      c[j - 1] = std::vector<size_t>(c[j].begin(), c[j].end() - 1);
      c[j] = {c[j].back()};
    }
  }
  return contraction;
}

std::vector<sint> without_ones(const SymShape& s) {
  std::vector<sint> out;
  for (const sint& x : s)
    if (resolve(ne(x, 1))) out.push_back(x);
  return out;
}

// A contiguous VIEW that only adds 1s after a reduce: put the 1s before it instead.
UOp reduce_push_add_ones(const Match& m) {
  const UOp &src = m["src"], &r = m["r"], &v = m["view"];
  const SymShape rshape = uop_shape(r), vshape = view_st(v).shape();
  if (!view_st(v).contiguous() || rshape.size() >= vshape.size() ||
      without_ones(rshape) != without_ones(vshape))
    return {};
  const std::vector<int64_t> axes = reduce_axes(r);
  auto contraction = get_contraction_with_reduce(vshape, rshape, axes);
  if (!contraction) return {};
  const SymShape sshape = uop_shape(src);
  SymShape new_shape;
  std::vector<int64_t> new_axes;
  for (size_t i = 0; i < contraction->size(); i++) {
    const auto& pairs = (*contraction)[i];
    if (contains(axes, i)) {
      for (size_t k = 0; k + 1 < pairs.size(); k++) new_shape.push_back(1);
      new_shape.push_back(sshape[i]);
      new_axes.push_back(static_cast<int64_t>(new_shape.size()) - 1);
    } else {
      for (size_t p : pairs) new_shape.push_back(vshape[p]);
    }
  }
  UOp ret = UOp::make(Ops::REDUCE_AXIS, r.dtype(), {reshape(src, new_shape)},
                      Arg::tuple({reduce_op(r), Arg::ints(new_axes)}));
  // The borrowing in get_contraction_with_reduce can leave a reduced axis with no place of its
  // own (tinygrad asserts here); the VIEW then stays, and view_right's swizzle_reduceop moves it.
  if (uop_shape(ret) != vshape) return {};
  return ret;
}

UOp push_view_into_sources(const Match& m) {
  const ShapeTracker& st = view_st(m["view"]);
  std::vector<UOp> src;
  for (const UOp& s : m["e"].src()) src.push_back(view(s, st));
  return m["e"].with_src(std::move(src));
}

// Rewrite a REDUCE_AXIS seen through a non-trivial view so the view applies to its input and the
// reduce runs over new trailing axes: the view's shape plus the reduced dims at the end.
UOp swizzle_reduceop(const Match& m) {
  const UOp &r = m["r"], &src = m["src"], &v = m["view"];
  const ShapeTracker& vst = view_st(v);
  if (vst.contiguous() && vst.size() == uop_size(r)) return {};
  const std::vector<int64_t> axes = reduce_axes(r);
  const SymShape sshape = uop_shape(src);
  std::vector<int64_t> perm;
  for (size_t i = 0; i < sshape.size(); i++)
    if (!contains(axes, i)) perm.push_back(static_cast<int64_t>(i));
  perm.insert(perm.end(), axes.begin(), axes.end());
  const ShapeTracker tmp = ShapeTracker::from_shape(sshape).permute(perm);
  const SymShape rshape(tmp.shape().end() - static_cast<std::ptrdiff_t>(axes.size()), tmp.shape().end());
  const sint prshape = prod(rshape);
  const SymShape rstrides = strides_for_shape(rshape);
  std::vector<View> nv;
  for (const View& view : vst.views()) {
    SymShape shape = view.shape(), strides;
    shape.insert(shape.end(), rshape.begin(), rshape.end());
    for (const sint& s : view.strides()) strides.push_back(s * prshape);
    strides.insert(strides.end(), rstrides.begin(), rstrides.end());
    std::optional<Mask> mask = view.mask();
    if (mask)
      for (const sint& s : rshape) mask->emplace_back(0, s);
    nv.push_back(View::create(shape, strides, view.offset() * prshape, mask));
  }
  const UOp swizzled = apply_swizzle(view(src, st_add(tmp, ShapeTracker(nv))));
  std::vector<int64_t> new_axes;
  for (size_t k = 0; k < axes.size(); k++) new_axes.push_back(static_cast<int64_t>(vst.shape().size() + k));
  UOp red =
      UOp::make(Ops::REDUCE_AXIS, r.dtype(), {swizzled}, Arg::tuple({reduce_op(r), Arg::ints(new_axes)}));
  return reshape(red, vst.shape());
}

UOp reduceop_view_right(const Match& m) {
  const UOp &src = m["src"], &v = m["v"], &r = m["r"];
  if (!view_st(v).contiguous() || view_st(v).size() != uop_size(src))
    throw std::logic_error("reduceop_view_right: can't compute new axis for " + to_string(uop_shape(src)) +
                           " -> " + to_string(uop_shape(r)));
  const SymShape sshape = uop_shape(src), rshape = uop_shape(r);
  std::vector<int64_t> axes;
  for (size_t i = 0; i < std::min(sshape.size(), rshape.size()); i++)
    if (sshape[i] != rshape[i]) axes.push_back(static_cast<int64_t>(i));
  return reshape(reduce_r(src, reduce_op(r), axes), rshape);
}

// Move the non-buffer VIEWs of an elementwise op's sources after it.
UOp elementwise_view_right(const Match& m) {
  const UOp& root = m["root"];
  std::vector<UOp> swizzles;
  for (const UOp& x : root.src())
    if (x.op() == Ops::VIEW && !ALWAYS_CONTIGUOUS.contains(uop_base(x).op())) swizzles.push_back(x);
  if (swizzles.empty()) return {};
  const SymShape base_shape = uop_shape(uop_base(swizzles[0]));
  for (const UOp& x : swizzles)
    if (uop_size(uop_base(x)) != prod(base_shape).to_int())
      throw std::logic_error("elementwise_view_right: swizzle inputs must have the same size");
  const ShapeTracker new_st = ShapeTracker::from_shape(base_shape);
  std::vector<UOp> new_src;
  for (const UOp& x : root.src()) {
    const UOp b = uop_base(x);
    new_src.push_back(uop_st(b) && uop_shape(b) == base_shape ? b : apply_swizzle(view(x, new_st)));
  }
  return reshape(root.with_src(std::move(new_src)), uop_shape(root));
}

}  // namespace

const PatternMatcher& merge_views() {
  static const PatternMatcher pm({
      {"merge-adjacent-views", UPat(Ops::VIEW, {UPat(Ops::VIEW).named("v1")}).named("v2"),
       [](const Match& m) {
         const UOp& v1 = m["v1"];
         return UOp::make(Ops::VIEW, v1.dtype(), v1.src(), st_add(view_st(v1), view_st(m["v2"])).to_arg());
       }},
      {"movement-to-view", UPat::ops(GroupOp::Movement, {UPat::var("x")}).named("mop"),
       [](const Match& m) { return view(uop_base(m["x"]), st_of(m["mop"])); }},
      {"remove-noop-view", UPat(Ops::VIEW, {UPat::var("x")}).named("view"),
       [](const Match& m) -> UOp {
         const UOp& x = m["x"];
         const ShapeTracker& st = view_st(m["view"]);
         std::optional<ShapeTracker> xst = uop_st(x);
         if (xst && !Defines.contains(x.op()) && st.contiguous() && st.shape() == xst->shape()) return x;
         return {};
       }},
      {"empty-mask-is-zero",
       UPat(Ops::VIEW, {UPat::var("x").where([](const UOp& x) { return x.op() != Ops::DEFINE_GLOBAL; })})
           .named("view"),
       [](const Match& m) -> UOp {
         const std::optional<Mask>& mask = view_st(m["view"]).views().back().mask();
         if (!mask) return {};
         for (const auto& [b, e] : *mask)
           if (e - b == sint(0)) return const_like(m["view"], const_arg(m["view"].dtype(), 0));
         return {};
       }},
      // Only an unmasked view of a constant folds into the constant's own ShapeTracker.
      {"view-of-const", UPat(Ops::VIEW, {UPat::ops({Ops::CONST, Ops::DEFINE_VAR}).named("x")}).named("view"),
       [](const Match& m) -> UOp {
         const UOp& x = m["x"];
         if (x.src().empty()) return {};
         const ShapeTracker st = st_add(st_of(x), view_st(m["view"]));
         if (!all_unmasked(st)) return {};
         return x.with_src({x.src(0).with_arg(st.to_arg())});
       }},
  });
  return pm;
}

const PatternMatcher& view_left() {
  static const PatternMatcher pm =
      merge_views() +
      PatternMatcher({
          {"view-before-elementwise",
           UPat(Ops::VIEW, {UPat::ops(GroupOp::ALU | OpSet{Ops::CAST, Ops::BITCAST, Ops::BIND, Ops::STORE,
                                                           Ops::VALID, Ops::SINK})
                                .named("e")})
               .named("view"),
           push_view_into_sources},
          {"reduce-push-add-ones",
           UPat(Ops::VIEW, {UPat(Ops::REDUCE_AXIS, {UPat::var("src")}).named("r")}).named("view"),
           reduce_push_add_ones},
      });
  return pm;
}

const PatternMatcher& view_left_through_load() {
  static const PatternMatcher pm({
      {"view-before-load", UPat(Ops::VIEW, {UPat(Ops::LOAD).named("e")}).named("view"),
       push_view_into_sources},
  });
  return pm;
}

UOp apply_swizzle(const UOp& u) { return graph_rewrite(u, view_left()); }

const PatternMatcher& view_right() {
  static const UPat not_contig =
      UPat::var("src").where([](const UOp& u) { return !ALWAYS_CONTIGUOUS.contains(u.op()); });
  static const PatternMatcher pm =
      merge_views() +
      PatternMatcher({
          {"swizzle-reduceop",
           UPat(Ops::VIEW, {UPat(Ops::REDUCE_AXIS, {UPat::var("src")}).named("r")}).named("view"),
           swizzle_reduceop},
          {"reduceop-view-right",
           UPat(Ops::REDUCE_AXIS, {UPat(Ops::VIEW, {not_contig}).named("v")}).named("r"),
           reduceop_view_right},
          {"elementwise-view-right", UPat::var("root").where([](const UOp& u) {
             return u.op() != Ops::SINK && u.op() != Ops::REDUCE_AXIS && u.op() != Ops::STORE;
           }),
           elementwise_view_right},
          // The inverse of a split reduce: a reduce of a reduce with the same op is one reduce.
          {"merge-double-reduce", UPat(Ops::REDUCE_AXIS, {UPat(Ops::REDUCE_AXIS).named("r1")}).named("r2"),
           [](const Match& m) -> UOp {
             const UOp &r1 = m["r1"], &r2 = m["r2"];
             if (reduce_op(r1) != reduce_op(r2)) return {};
             std::vector<int64_t> axes = reduce_axes(r2);
             for (int64_t a : reduce_axes(r1)) axes.push_back(a);
             return r1.with_arg(Arg::tuple({reduce_op(r1), Arg::ints(axes)}));
           }},
      });
  return pm;
}

}  // namespace tunebed::sched
