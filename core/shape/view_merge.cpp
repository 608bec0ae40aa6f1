// View::operator+: merge two stacked views into one, as tinygrad's View.__add__.
//
// `lower + upper` composes: an index of `upper` gives a position p in `lower`'s index space (a row-
// major flat index of lower.shape), which `lower` maps to the buffer. The composition is one view
// when the position p, unravelled into lower's dimensions, is affine in upper's index in every
// dimension of lower: then upper's stride along d1 moves lower's index by a fixed step s1 along
// each d2, and the merged stride is sum_d2 s1 * lower.strides[d2].
//
// The steps come from unravelling upper.offset and upper.offset + upper.strides[d1]. They are only
// valid if no index of upper carries across a boundary of lower's dimensions; the check bounds
// each dimension's term over upper's whole index box. Where a term overflows its dimension, the
// dimensions are merged (lower reshaped) and tried again. lower's mask is projected back onto
// upper's index box, which works when each masked dimension of lower depends on one axis of upper.
//
// Terms are linear forms in upper's index variables with int coefficients, so their bounds are
// exact; symbolic views are only merged in the trivial cases (contiguous, reshape, broadcast).
#include <algorithm>

#include "core/shape/view.hpp"

namespace tunebed {

namespace {

// c + sum_d coef[d] * idx_d, each idx_d ranging over [0, shape[d] - 1].
struct Linear {
  std::vector<sint> coef;
  sint c = 0;

  explicit Linear(size_t n) : coef(n, 0) {}
  Linear& add_term(size_t d, const sint& k) {
    coef[d] = coef[d] + k;
    return *this;
  }
  Linear& operator+=(const Linear& o) {
    for (size_t d = 0; d < coef.size(); d++) coef[d] = coef[d] + o.coef[d];
    c = c + o.c;
    return *this;
  }
  Linear& operator*=(const sint& k) {
    for (sint& x : coef) x = x * k;
    c = c * k;
    return *this;
  }
  // Exact bounds over the box: the variables are independent.
  std::pair<int64_t, int64_t> bounds(const SymShape& box) const {
    sint lo = c, hi = c;
    for (size_t d = 0; d < coef.size(); d++) {
      sint span = coef[d] * (box[d] - 1);
      lo = lo + smin(0, span);
      hi = hi + smax(0, span);
    }
    return {lo.to_int(), hi.to_int()};
  }
};

bool view_all_int(const View& v) {
  if (!all_int(v.shape()) || !all_int(v.strides()) || !v.offset().is_int()) return false;
  if (v.mask())
    for (const auto& [b, e] : *v.mask())
      if (!b.is_int() || !e.is_int()) return false;
  return true;
}

}  // namespace

std::optional<View> View::operator+(const View& vm1) const {
  const View& vm2 = *this;
  if (vm2.contiguous() || vm1.size() == 0) return vm1;
  if (vm1.contiguous() && vm1.shape() == vm2.shape()) return vm2;
  if (vm1.contiguous() && prod(vm1.shape()) == prod(vm2.shape()))
    if (std::optional<View> ret = vm2.reshape(vm1.shape())) return ret;
  if (vm1.mask()) {
    // Merge the unmasked part, then pad it back out.
    View unmasked = vm1.shrink(*vm1.mask());
    if (unmasked == vm1) return std::nullopt;
    std::optional<View> merged = vm2 + unmasked;
    if (!merged) return std::nullopt;
    Mask pads;
    for (size_t i = 0; i < vm1.ndim(); i++)
      pads.emplace_back((*vm1.mask())[i].first, vm1.shape()[i] - (*vm1.mask())[i].second);
    return merged->pad(pads);
  }
  if (!view_all_int(vm1) || !view_all_int(vm2)) {
    auto all_zero = [](const SymShape& s) {
      return std::all_of(s.begin(), s.end(), [](const sint& x) { return x == sint(0); });
    };
    if (all_zero(vm2.strides()) && all_zero(vm1.strides()) && !vm2.mask()) return vm1;
    return std::nullopt;
  }

  // Project upper's offset and strides onto lower's dimensions.
  const size_t n1 = vm1.ndim(), n2 = vm2.ndim();
  std::vector<sint> origin = unravel(vm2.shape(), vm1.offset());
  std::vector<std::vector<std::pair<size_t, sint>>> terms(n2);  // per lower dim: (upper axis, step)
  SymShape strides(n1, 0);
  for (size_t d1 = 0; d1 < n1; d1++) {
    const sint& st = vm1.strides()[d1];
    if (st == sint(0)) continue;
    std::vector<sint> moved = unravel(vm2.shape(), vm1.offset() + st);
    for (size_t d2 = 0; d2 < n2; d2++) {
      sint s1 = moved[d2] - origin[d2];
      if (s1 == sint(0)) continue;
      terms[d2].emplace_back(d1, s1);
      strides[d1] = strides[d1] + s1 * vm2.strides()[d2];
    }
  }

  // Merge lower's dimensions (from the innermost) until each merged term stays inside its extent.
  // Merging only where needed: a coarser lower view makes its mask harder to project.
  sint merged_size = 1;
  Linear merged_term(n1);
  std::vector<std::pair<sint, Linear>> extents;  // innermost first
  for (size_t k = n2; k-- > 0;) {
    Linear term(n1);
    for (const auto& [d1, s1] : terms[k]) term.add_term(d1, s1);
    term.c = origin[k];
    term *= merged_size;
    merged_term += term;
    merged_size = merged_size * vm2.shape()[k];
    auto [lo, hi] = merged_term.bounds(vm1.shape());
    if (lo >= 0 && resolve(lt(hi, merged_size), false)) {
      extents.emplace_back(merged_size, merged_term);
      merged_size = 1;
      merged_term = Linear(n1);
    }
  }
  if (merged_term.bounds(vm1.shape()) != std::pair<int64_t, int64_t>(0, 0)) return std::nullopt;
  SymShape vm2_shape;
  for (auto it = extents.rbegin(); it != extents.rend(); ++it) vm2_shape.push_back(it->first);
  if (vm2_shape != vm2.shape()) {
    std::optional<View> reshaped = vm2.reshape(vm2_shape);
    if (!reshaped) return std::nullopt;
    if (reshaped->shape() != vm2.shape()) return *reshaped + vm1;  // != guards against looping
  }

  if (vm2.mask()) {
    // Project lower's mask onto upper's axes: each masked lower dimension must depend on one axis.
    SymShape newb(n1, 0), newe = vm1.shape();
    bool bad = false;
    for (size_t d2 = 0; d2 < n2; d2++) {
      const auto& [b, e] = (*vm2.mask())[d2];
      auto [tmin, tmax] = extents[n2 - 1 - d2].second.bounds(vm1.shape());
      if (resolve(le(b, tmin), false) && resolve(lt(tmax, e), false)) continue;  // never masked
      const auto& term = terms[d2];
      if (term.size() != 1) {
        if (term.empty() && n1 > 0) {
          if (tmin != tmax) return std::nullopt;
          newe[0] = 0;  // a constant index outside the mask: everything is masked
        } else {
          bad = true;
        }
        continue;
      }
      const auto& [d1, s1] = term[0];
      const sint& o = origin[d2];
      bool up = resolve(lt(0, s1));
      newb[d1] = smax(newb[d1], ceildiv(up ? b - o : e - o - 1, s1));
      newe[d1] = smin(newe[d1], floordiv(up ? e - o - 1 : b - o, s1) + 1);
    }
    // Part of upper is masked off: merge again with that mask in place.
    for (size_t d1 = 0; d1 < n1; d1++) {
      if (newb[d1] == sint(0) && newe[d1] == vm1.shape()[d1]) continue;
      Mask m;
      for (size_t i = 0; i < n1; i++) m.emplace_back(newb[i], newe[i]);
      return vm2 + create(vm1.shape(), vm1.strides(), vm1.offset(), std::move(m));
    }
    if (bad) return std::nullopt;  // lower's mask cuts upper in a way one box cannot express
  }

  sint offset = vm2.offset();
  for (size_t d2 = 0; d2 < n2; d2++) offset = offset + origin[d2] * vm2.strides()[d2];
  return create(vm1.shape(), std::move(strides), offset);
}

}  // namespace tunebed
