// From views to index arithmetic: the (index, valid) UOps a kernel computes for a load or store,
// the strides a kernel optimizer reads off them, and the same map evaluated directly on ints.
#include <algorithm>
#include <stdexcept>

#include "core/shape/shapetracker.hpp"
#include "core/symbolic/symbolic.hpp"

namespace tunebed {

std::pair<UOp, UOp> View::to_indexed_uops(const std::vector<UOp>& idxs, const UOp& valid, DType dtype) const {
  if (idxs.size() != ndim())
    throw ViewError("to_indexed_uops: " + std::to_string(idxs.size()) + " index expressions for " +
                     std::to_string(ndim()) + " dimensions");
  UOp iexpr = offset_.to_uop(dtype), vexpr = valid;
  for (size_t i = 0; i < ndim(); i++) {
    UOp idx = idxs[i].cast(dtype);
    if (resolve(ne(shape_[i], 1)) && resolve(ne(strides_[i], 0)))
      iexpr = iexpr + idx * strides_[i].to_uop(dtype);
    if (!mask_) continue;
    const auto& [b, e] = (*mask_)[i];
    if (resolve(ne(b, 0))) vexpr = vexpr & idx.lt(b.to_uop(dtype)).logical_not();
    if (resolve(ne(e, shape_[i]))) vexpr = vexpr & idx.lt(e.to_uop(dtype));
  }
  return {iexpr, vexpr};
}

std::vector<UOp> ShapeTracker::index_ranges(const SymShape& shape, DType dtype) {
  std::vector<UOp> idxs;
  for (size_t i = 0; i < shape.size(); i++)
    idxs.push_back(UOp::make(Ops::RANGE, dtype, {shape[i].to_uop(dtype)}, Arg(static_cast<int64_t>(i))));
  return idxs;
}

// tinygrad widens index arithmetic node by node where it overflows int32 (pm_upcast). Our range
// analysis saturates instead of showing the overflow, so the choice is made for the whole tracker
// up front, from a bound on every position and every unravel divisor it computes.
DType ShapeTracker::index_dtype() const {
  auto magnitude = [](const sint& s) { return smax(sint(s.vmax()), -sint(s.vmin())); };
  const int64_t limit = dtypes::index.int_max();
  try {
    for (const View& v : views_) {
      sint span = magnitude(v.offset()), count = 1;
      for (size_t i = 0; i < v.ndim(); i++) {
        span = span + magnitude(v.strides()[i]) * smax(0, sint(v.shape()[i].vmax()) - 1);
        count = count * v.shape()[i].vmax();
      }
      if (span.to_int() > limit || count.to_int() > limit) return dtypes::int64;
    }
  } catch (const std::overflow_error&) {
    return dtypes::int64;
  }
  return dtypes::index;
}

// The top view indexes with idxs; each view below is indexed by unravelling the position above
// into its (minified, so fewer div/mod terms) shape. Validity accumulates on the way down.
std::pair<UOp, UOp> ShapeTracker::to_indexed_uops(const std::vector<UOp>& idxs) const {
  const DType dtype = index_dtype();
  auto [idx, valid] = views_.back().to_indexed_uops(idxs, UOp::const_bool(true), dtype);
  for (size_t k = views_.size() - 1; k-- > 0;) {
    View v = views_[k].minify();
    std::vector<UOp> unravelled(v.ndim());
    UOp acc = UOp::const_int(dtype, 1);
    for (size_t i = v.ndim(); i-- > 0;) {
      unravelled[i] = (idx / acc) % v.shape()[i].to_uop(dtype);
      acc = acc * v.shape()[i].to_uop(dtype);
    }
    std::tie(idx, valid) = v.to_indexed_uops(unravelled, valid, dtype);
  }
  // One rewrite of both, as tinygrad's UOp.sink(idx, valid): shared subexpressions simplify once.
  UOp both = tunebed::simplify(UOp::make(Ops::SINK, dtypes::void_, {idx, valid}));
  return {both.src(0), both.src(1)};
}

std::pair<UOp, UOp> ShapeTracker::to_indexed_uops() const {
  return to_indexed_uops(index_ranges(shape(), index_dtype()));
}

namespace {

void split_add(const UOp& u, std::vector<UOp>& out) {
  if (u.op() != Ops::ADD) {
    out.push_back(u);
    return;
  }
  for (const UOp& s : u.src()) split_add(s, out);
}

std::vector<int64_t> ranges_in(const UOp& u) {
  std::vector<int64_t> axes;
  for (const UOp& x : u.toposort())
    if (x.op() == Ops::RANGE) axes.push_back(x.arg().as_int());
  return axes;
}

}  // namespace

// Read off the simplified index expression: a term RANGE(i) * c says axis i has stride c.
std::vector<std::optional<sint>> ShapeTracker::real_strides(bool ignore_valid) const {
  const View& top = views_.back();
  if (views_.size() == 1 && !top.mask()) return {top.strides().begin(), top.strides().end()};
  std::vector<std::optional<sint>> ret(top.ndim());
  auto [idx, valid] = to_indexed_uops();
  std::vector<UOp> terms;
  split_add(idx, terms);
  for (const UOp& c : terms) {
    if (c.op() == Ops::RANGE) ret[c.arg().as_int()] = sint(1);
    if (c.op() != Ops::MUL) continue;
    for (int r = 0; r < 2; r++)
      if (c.src(r).op() == Ops::RANGE && c.src(1 - r).is_const())
        ret[c.src(r).arg().as_int()] = sint(c.src(1 - r));
  }
  std::vector<int64_t> used = ranges_in(idx);
  for (size_t i = 0; i < ret.size(); i++)
    if (std::find(used.begin(), used.end(), static_cast<int64_t>(i)) == used.end()) ret[i] = sint(0);
  if (!ignore_valid)
    for (int64_t axis : ranges_in(valid)) ret[axis].reset();
  return ret;
}

std::vector<size_t> ShapeTracker::unit_stride_axes(bool ignore_valid) const {
  std::vector<size_t> axes;
  std::vector<std::optional<sint>> st = real_strides(ignore_valid);
  for (size_t i = 0; i < st.size(); i++)
    if (st[i] && *st[i] == sint(1)) axes.push_back(i);
  return axes;
}

bool IntTracker::concrete(const ShapeTracker& st) {
  const auto ints = [](const std::vector<sint>& xs) { return std::ranges::all_of(xs, &sint::is_int); };
  return std::ranges::all_of(st.views(), [&](const View& v) {
    return ints(v.shape()) && ints(v.strides()) && v.offset().is_int() &&
           (!v.mask() || std::ranges::all_of(*v.mask(), [](const auto& be) { return be.first.is_int() && be.second.is_int(); }));
  });
}

IntTracker::IntTracker(const ShapeTracker& st) {
  if (!concrete(st)) throw std::invalid_argument("IntTracker of a symbolic ShapeTracker: " + st.repr());
  for (const View& v : st.views()) {
    IntView iv{to_ints(v.shape()), to_ints(v.strides()), std::vector<int64_t>(v.ndim(), 0), to_ints(v.shape()),
               v.offset().to_int(), v.size() == 0};
    if (v.mask())
      for (size_t i = 0; i < v.ndim(); i++) {
        iv.begin[i] = (*v.mask())[i].first.to_int();
        iv.end[i] = (*v.mask())[i].second.to_int();
      }
    views_.push_back(std::move(iv));
  }
}

std::optional<int64_t> IntTracker::position(const int64_t* idx) const {
  const IntView& top = views_.back();
  if (top.empty) return std::nullopt;
  int64_t pos = top.offset;
  for (size_t i = 0; i < top.shape.size(); i++) {
    if (idx[i] < top.begin[i] || idx[i] >= top.end[i]) return std::nullopt;
    pos += idx[i] * top.strides[i];
  }
  for (size_t k = views_.size() - 1; k-- > 0;) {
    const IntView& v = views_[k];
    if (v.empty) return std::nullopt;  // a hand-built stack may put an empty view under a non-empty one
    int64_t rest = pos, below = v.offset;
    for (size_t i = v.shape.size(); i-- > 0;) {
      const int64_t x = rest % v.shape[i];
      rest /= v.shape[i];
      if (x < v.begin[i] || x >= v.end[i]) return std::nullopt;
      below += x * v.strides[i];
    }
    pos = below;
  }
  return pos;
}

void IntTracker::positions_along(const int64_t* idx, size_t axis, int64_t count, int64_t* out) const {
  const IntView& top = views_.back();
  if (views_.size() > 1 || top.empty || axis >= top.shape.size()) {
    std::vector<int64_t> at(idx, idx + top.shape.size());
    for (int64_t j = 0; j < count; j++) {
      if (axis < at.size()) at[axis] = idx[axis] + j;
      out[j] = position(at.data()).value_or(kHidden);
    }
    return;
  }
  int64_t base = top.offset;  // the position with the axis at 0
  bool visible = true;        // every other axis inside the mask
  for (size_t i = 0; i < top.shape.size(); i++) {
    if (i == axis) continue;
    visible = visible && idx[i] >= top.begin[i] && idx[i] < top.end[i];
    base += idx[i] * top.strides[i];
  }
  for (int64_t j = 0; j < count; j++) {
    const int64_t x = idx[axis] + j;
    out[j] = visible && x >= top.begin[axis] && x < top.end[axis] ? base + x * top.strides[axis] : kHidden;
  }
}

std::vector<int64_t> ShapeTracker::buffer_positions() const {
  const IntTracker tracker(*this);
  const std::vector<int64_t> shape = to_ints(this->shape());
  const int64_t n = prod(this->shape()).to_int();
  std::vector<int64_t> out(static_cast<size_t>(n)), idx(shape.size());
  for (int64_t flat = 0; flat < n; flat++) {
    int64_t rest = flat;
    for (size_t i = shape.size(); i-- > 0;) {
      idx[i] = rest % shape[i];
      rest /= shape[i];
    }
    out[static_cast<size_t>(flat)] = tracker.position(idx.data()).value_or(-1);
  }
  return out;
}

}  // namespace tunebed
