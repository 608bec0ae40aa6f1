// View::reshape: keep the same elements in the same row-major order under a new shape.
//
// A reshape regroups dimensions. For a plain strided view it works when every group of new
// dimensions falls inside one run of old dimensions that are "contiguous with each other"
// (merge_dims): a run of sizes (2, 3) with strides (3, 1) is one axis of 6 with stride 1, and can
// be split as (3, 2) with strides (2, 1). Stride-0 (expanded) dimensions split into stride-0 parts.
// A mask is reshaped separately (reshape_mask): it survives only where the masked box stays a box.
// Either failing means "not one view", and the ShapeTracker stacks a new view instead.
#include <algorithm>

#include "core/shape/view.hpp"

namespace tunebed {

std::vector<MergedDim> merge_dims(const SymShape& shape, const SymShape& strides, const std::optional<Mask>& mask) {
  std::vector<MergedDim> ret;
  if (shape.empty()) return ret;
  ret.push_back({shape[0], strides[0], resolve(ne(strides[0], 0)) ? shape[0] : sint(0)});
  // A dimension of size 1 (or masked to one index) merges into the next whatever the strides.
  bool merging = mask ? (*mask)[0].second - (*mask)[0].first == sint(1) : shape[0] == sint(1);
  for (size_t i = 1; i < shape.size(); i++) {
    const sint &s = shape[i], &st = strides[i];
    if (s == sint(1)) continue;
    MergedDim& last = ret.back();
    if (merging || last.stride == s * st)
      last = {last.size * s, st, merging ? s : last.real_size * s};
    else
      ret.push_back({s, st, s});
    merging = mask ? (*mask)[i].second - (*mask)[i].first == sint(1) : s == sint(1);
  }
  return ret;
}

namespace {

// Walks a list from the back, answering `dflt` once it is exhausted (the padding with size-1
// dimensions on the left that makes both shapes the same length).
template <class T>
class Backwards {
 public:
  Backwards(const std::vector<T>& v, T dflt) : v_(v), i_(v.size()), dflt_(std::move(dflt)) {}
  T next() { return i_ > 0 ? v_[--i_] : dflt_; }
  bool exhausted() const { return i_ == 0; }

 private:
  const std::vector<T>& v_;
  size_t i_;
  T dflt_;
};

// The mask of a view reshaped from old_shape to new_shape, or nullopt where the masked region is
// not a box in the new shape. Walks both shapes from the innermost dimension, splitting an old
// dimension into new ones or combining old ones into a new one (tinygrad's _reshape_mask).
std::optional<std::vector<std::pair<int64_t, int64_t>>> reshape_mask(const Mask& old_mask,
                                                                     const SymShape& old_shape,
                                                                     const SymShape& new_shape) {
  using Pair = std::pair<int64_t, int64_t>;
  std::vector<Pair> mask_ints;
  for (const auto& [b, e] : old_mask) {
    if (!b.is_int() || !e.is_int()) return std::nullopt;
    mask_ints.emplace_back(b.to_int(), e.to_int());
  }
  if (!all_int(old_shape) || !all_int(new_shape)) return std::nullopt;
  std::vector<int64_t> old_ints = to_ints(old_shape), new_ints = to_ints(new_shape);
  Backwards<Pair> r_masks(mask_ints, {0, 1});
  Backwards<int64_t> r_shape(old_ints, 1), r_new_shape(new_ints, 1);

  std::vector<Pair> new_mask;
  int64_t curr_stride = 1, old_dim = r_shape.next(), new_dim = r_new_shape.next();
  Pair mask = r_masks.next();
  auto fdiv = [](int64_t a, int64_t b) { return floordiv(a, b).to_int(); };
  auto fmod = [](int64_t a, int64_t b) { return floormod(a, b).to_int(); };
  while (new_mask.size() < new_shape.size()) {
    auto [l, r] = mask;
    int64_t next_stride = (sint(new_dim) * sint(curr_stride)).to_int();
    if (old_dim == next_stride) {  // the old dimension ends here: copy its mask
      new_mask.emplace_back(fdiv(l, curr_stride), fdiv(r - 1, curr_stride) + 1);
      curr_stride = 1;
      old_dim = r_shape.next();
      new_dim = r_new_shape.next();
      mask = r_masks.next();
    } else if (old_dim > next_stride) {  // split: the mask must not wrap around the new dimension
      if (old_dim % next_stride != 0) return std::nullopt;
      if ((l % next_stride != 0 || r % next_stride != 0) && fdiv(l, next_stride) != fdiv(r - 1, next_stride))
        return std::nullopt;
      new_mask.emplace_back(fdiv(fmod(l, next_stride), curr_stride),
                            fdiv(fmod(r - 1, next_stride), curr_stride) + 1);
      curr_stride = next_stride;
      new_dim = r_new_shape.next();
    } else {  // combine with the next old dimension: only if the mask unfolds continuously
      if (r_shape.exhausted()) return std::nullopt;  // sizes differ; reshape() has rejected this already
      Pair next_mask = r_masks.next();
      if (mask != Pair(0, old_dim) && l != r && next_mask.second - next_mask.first != 1) return std::nullopt;
      mask = {next_mask.first * old_dim + l, (next_mask.second - 1) * old_dim + r};
      old_dim = (sint(old_dim) * sint(r_shape.next())).to_int();
    }
  }
  std::reverse(new_mask.begin(), new_mask.end());
  return new_mask;
}

}  // namespace

std::optional<View> View::reshape(const SymShape& new_shape) const {
  if (shape_ == new_shape) return *this;
  for (const sint& s : new_shape)
    if (s.is_int() && s.to_int() < 0)
      throw ViewError("reshape: negative dimension in " + to_string(new_shape));
  bool self_all_int = all_int(shape_);
  if (self_all_int && resolve(ne(prod(shape_), prod(new_shape)), false))
    throw ViewError("reshape: size mismatch, " + to_string(shape_) + " has " + to_string(prod(shape_)) +
                     " elements, " + to_string(new_shape) + " has " + to_string(prod(new_shape)));
  if (std::any_of(shape_.begin(), shape_.end(), [](const sint& s) { return s == sint(0); }))
    return create(new_shape);
  if (new_shape.empty() && mask_ &&
      std::any_of(mask_->begin(), mask_->end(), [](const auto& m) { return m.first == m.second; }))
    return std::nullopt;
  if (contiguous_) return create(new_shape);
  // A non-contiguous view to a symbolic shape: tinygrad substitutes the variables' bound values
  // to match dimensions one to one; with unbound variables we cannot, so stack a view instead.
  if (self_all_int && !all_int(new_shape)) return std::nullopt;

  // Strides: each run of merged old dimensions is cut into consecutive new dimensions.
  SymShape r_strides;
  Backwards<sint> r_new_shape(new_shape, 0);
  std::vector<MergedDim> merged = merge_dims(shape_, strides_, mask_);
  for (auto it = merged.rbegin(); it != merged.rend(); ++it) {
    sint acc = 1, stride = it->stride;
    while (resolve(le(acc, it->size)) && resolve(ne(acc, it->size))) {
      sint new_dim = r_new_shape.next();
      if (!resolve(lt(0, new_dim))) break;
      r_strides.push_back(stride * acc);
      acc = acc * new_dim;
      // Past the non-expanded part of the run every further dimension is a broadcast.
      if (!resolve(lt(acc, it->real_size))) stride = 0;
    }
    if (resolve(ne(acc, it->size))) return std::nullopt;
  }
  // Every stride consumed one new dimension; the ones left over on the left are size-1 (stride 0).
  SymShape new_strides(new_shape.size() - r_strides.size(), 0);
  new_strides.insert(new_strides.end(), r_strides.rbegin(), r_strides.rend());

  std::optional<Mask> new_mask;
  if (mask_) {
    auto m = reshape_mask(*mask_, shape_, new_shape);
    if (!m) return std::nullopt;
    new_mask.emplace(m->begin(), m->end());
  } else {
    new_mask.emplace();
    for (const sint& s : new_shape) new_mask->emplace_back(0, s);
  }
  // The offset was measured from index 0; re-measure it from the first unmasked element.
  sint extra_offset = 0;
  if (mask_)
    for (size_t i = 0; i < ndim(); i++) extra_offset = extra_offset + (*mask_)[i].first * strides_[i];
  for (size_t i = 0; i < new_shape.size(); i++)
    extra_offset = extra_offset - (*new_mask)[i].first * new_strides[i];
  return create(new_shape, std::move(new_strides), offset_ + extra_offset, std::move(new_mask));
}

}  // namespace tunebed
