// Reductions, as tinygrad's _reduce and UOp.r: REDUCE_AXIS keeps the reduced axes as 1, after a
// permute that moves the kept axes in front of the first reduced one; axes of size 1 are not
// reduced at all. Without keepdim a reshape drops the reduced axes.
#include <algorithm>

#include "core/tensor/graph.hpp"
#include "core/tensor/tensor.hpp"

namespace tunebed {

namespace {

// tinygrad's sum_acc_dtype: sums of small integers accumulate in (u)int32, of halves in float32.
DType sum_acc_dtype(const DType& d) {
  if (d.is_unsigned()) return least_upper_dtype(d, dtypes::uint32);
  if (d.is_int() || d.is_bool()) return least_upper_dtype(d, dtypes::int32);
  return least_upper_dtype(d, dtypes::float32);
}

}  // namespace

Tensor Tensor::reduce_op(Ops op, const Axes& axes, bool keepdim, const char* name) const {
  std::vector<int64_t> requested;
  if (!axes.axes) {
    for (int64_t k = 0; k < ndim(); k++) requested.push_back(k);
  } else if (ndim() > 0) {
    for (int64_t a : *axes.axes) requested.push_back(resolve_dim(a, name));
  }
  std::sort(requested.begin(), requested.end());
  if (std::adjacent_find(requested.begin(), requested.end()) != requested.end())
    throw ShapeError(std::string(name) + ": an axis appears twice for shape " + shape_to_string(shape_));

  std::vector<int64_t> reduced;
  for (int64_t a : requested)
    if (shape_[a] != 1) reduced.push_back(a);
  Tensor ret = *this;
  if (!reduced.empty()) {
    // Kept axes (other than size 1) after the first reduced one move in front of the reduced ones.
    std::vector<int64_t> order;
    for (int64_t k = 0; k < reduced[0]; k++) order.push_back(k);
    std::vector<int64_t> rest;
    for (int64_t k = reduced[0]; k < ndim(); k++) {
      const bool is_reduced = std::binary_search(reduced.begin(), reduced.end(), k);
      (is_reduced || shape_[k] == 1 ? rest : order).push_back(k);
    }
    order.insert(order.end(), rest.begin(), rest.end());
    const Tensor permuted = permute(order);
    std::vector<int64_t> new_axes;
    for (int64_t k = 0; k < ndim(); k++)
      if (std::binary_search(reduced.begin(), reduced.end(), order[k])) new_axes.push_back(k);
    const Tensor r = permuted.apply(Ops::REDUCE_AXIS, dtype(), Arg::tuple({Arg(op), Arg::ints(new_axes)}));
    Shape kept_shape = shape_;
    for (int64_t a : reduced) kept_shape[a] = 1;
    ret = r.reshape(kept_shape);
  }
  if (keepdim) return ret;
  Shape out;
  for (int64_t k = 0; k < ndim(); k++)
    if (!std::binary_search(requested.begin(), requested.end(), k)) out.push_back(shape_[k]);
  return ret.reshape(out);
}

Tensor Tensor::sum(Axes axes, bool keepdim, std::optional<DType> acc) const {
  const Tensor ret = cast(acc.value_or(sum_acc_dtype(dtype()))).reduce_op(Ops::ADD, axes, keepdim, "sum");
  const bool half = dtype() == dtypes::float16 || dtype() == dtypes::bfloat16;
  return !acc && half ? ret.cast(dtype()) : ret;
}

Tensor Tensor::max(Axes axes, bool keepdim) const { return reduce_op(Ops::MAX, axes, keepdim, "max"); }
Tensor Tensor::min(Axes axes, bool keepdim) const {
  return inverse().reduce_op(Ops::MAX, axes, keepdim, "min").inverse();
}
Tensor Tensor::prod(Axes axes, bool keepdim) const { return reduce_op(Ops::MUL, axes, keepdim, "prod"); }

Tensor Tensor::mean(Axes axes, bool keepdim) const {
  const DType out = dtype().is_float() ? dtype() : dtypes::float32;
  const Tensor total = cast(sum_acc_dtype(dtype())).sum(axes, keepdim);
  int64_t count = 1;
  const Shape kept = sum(axes, true).shape();
  for (int64_t k = 0; k < ndim(); k++)
    if (kept[k] != shape_[k]) count *= shape_[k];
  return total.div(scalar_like(total, count)).cast(out);
}

Tensor Tensor::var(Axes axes, bool keepdim, int64_t correction) const {
  const Tensor squares = (*this - mean(axes, true)).square();
  int64_t n = 1;
  const Shape kept = squares.sum(axes, true).shape();
  for (int64_t k = 0; k < ndim(); k++)
    if (kept[k] != shape_[k]) n *= shape_[k];
  return squares.sum(axes, keepdim).div(scalar_like(squares, std::max<int64_t>(0, n - correction)));
}

Tensor Tensor::argmax(std::optional<int64_t> axis, bool keepdim) const {
  if (!axis) return flatten().argmax(0);
  const int64_t a = resolve_dim(*axis, "argmax"), n = shape_[a];
  // The first maximum wins: count down from n, so the largest index-weight marks the first one.
  const Tensor is_max = eq(max(a, true));
  Shape column(ndim() - a, 1);
  column[0] = n;
  const Tensor idx = is_max * arange(n, 0, -1).reshape(column);
  return (n - idx.max(a, keepdim)).cast(dtypes::int32);
}

Tensor Tensor::cumalu(int64_t axis, Ops op) const {
  const int64_t n = shape_.at(resolve_dim(axis, "cumsum"));
  // Pad the axis with n-1 identity elements in front and pool windows of n: window i covers 0..i.
  const ConstType identity = op == Ops::ADD   ? ConstType(0)
                             : op == Ops::MUL ? ConstType(1)
                                              : ConstType(dtype().min_value());
  const Tensor pooled = transpose(axis, -1).pad_flat({n - 1, 0}, identity).pool({n}, {1}, {1});
  const Tensor r = op == Ops::ADD ? pooled.sum(-1) : op == Ops::MUL ? pooled.prod(-1) : pooled.max(-1);
  return r.transpose(axis, -1);
}

Tensor Tensor::arange(int64_t start, int64_t stop, int64_t step, DType dtype) {
  if (step == 0) throw ShapeError("arange: step is zero");
  const int64_t len = step > 0 ? (stop - start + step - 1) / step : (start - stop - step - 1) / -step;
  if (len <= 0) return empty({0}, dtype);
  return (full({len}, step, dtype).cumalu(0, Ops::ADD) + (start - step)).cast(dtype);
}

}  // namespace tunebed
