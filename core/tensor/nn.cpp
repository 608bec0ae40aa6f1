// Composite ops built from movement ops, elementwise ops and reductions, as tinygrad builds them:
// dot (a broadcast multiply and a sum), _pool (the sliding-window view behind conv2d, the pools and
// cumsum), conv2d (a pool, a broadcast multiply and a sum), softmax, layernorm and attention.
#include <cmath>
#include <numeric>

#include "core/tensor/graph.hpp"
#include "core/tensor/tensor.hpp"

namespace tunebed {

namespace {

int64_t ceildiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// A per-spatial-dim parameter: one value for all dims, or one per dim (tinygrad's make_tuple).
std::vector<int64_t> per_dim(const std::vector<int64_t>& v, size_t dims, const char* op, const char* what) {
  if (v.size() == 1) return std::vector<int64_t>(dims, v[0]);
  if (v.size() != dims)
    throw ShapeError(std::string(op) + ": " + what + " has " + std::to_string(v.size()) + " values for " +
                     std::to_string(dims) + " spatial dims");
  return v;
}

// Padding as torch's flat list (left, right, top, bottom, ...) for `dims` spatial dims.
std::vector<int64_t> resolve_pool_pads(const std::vector<int64_t>& padding, size_t dims, const char* op) {
  if (padding.size() == 1) return std::vector<int64_t>(2 * dims, padding[0]);
  if (padding.size() == 2 * dims) return padding;
  if (padding.size() != dims)
    throw ShapeError(std::string(op) + ": padding must be one int, " + std::to_string(dims) + " or " +
                     std::to_string(2 * dims) + " values, got " + std::to_string(padding.size()));
  std::vector<int64_t> flat;  // (ph, pw) -> (pw, pw, ph, ph): the last dim comes first
  for (auto it = padding.rbegin(); it != padding.rend(); ++it) flat.insert(flat.end(), {*it, *it});
  return flat;
}

std::string ints_to_string(const std::vector<int64_t>& v) { return shape_to_string(v); }

}  // namespace

Tensor Tensor::dot(const Tensor& w, std::optional<DType> acc) const {
  const int64_t dx = ndim(), dw = w.ndim();
  auto fail = [&](const std::string& why) -> ShapeError {
    return ShapeError("matmul: cannot dot " + shape_to_string(shape_) + " and " + shape_to_string(w.shape()) +
                      ": " + why);
  };
  if (dx == 0 || dw == 0) throw fail("both tensors need to be at least 1D");
  const int64_t axis_w = dw - std::min<int64_t>(dw, 2);  // the contracted axis of w
  if (shape_.back() != w.shape()[axis_w])
    throw fail("inner dims " + std::to_string(shape_.back()) + " and " + std::to_string(w.shape()[axis_w]) +
               " differ");
  // x: (..., M, 1, K) and w: (..., 1, N, K), so a broadcast multiply and a sum over K is the product.
  const int64_t ones = std::min<int64_t>({dx - 1, dw - 1, 1});
  Shape xs(shape_.begin(), shape_.end() - 1), ws(w.shape().begin(), w.shape().begin() + axis_w);
  xs.insert(xs.end(), ones, 1);
  xs.push_back(shape_.back());
  ws.insert(ws.end(), ones, 1);
  ws.insert(ws.end(), w.shape().begin() + axis_w, w.shape().end());
  const Tensor x = reshape(xs), wt = w.reshape(ws).transpose(-1, axis_w - dw);
  try {
    const Tensor r = (x * wt).sum(-1, false, acc);
    return r.cast(acc.value_or(least_upper_dtype(dtype(), w.dtype())));
  } catch (const ShapeError& e) {
    throw fail(std::string("batch dims do not broadcast (") + e.what() + ")");
  }
}

Tensor Tensor::pool(const std::vector<int64_t>& k_, std::vector<int64_t> stride,
                    std::vector<int64_t> dilation) const {
  const size_t nk = k_.size();
  if (static_cast<size_t>(ndim()) < nk)
    throw ShapeError("pool: can't pool " + shape_to_string(shape_) + " with " + ints_to_string(k_));
  const std::vector<int64_t> s_ = per_dim(stride, nk, "pool", "stride"),
                             d_ = per_dim(dilation, nk, "pool", "dilation");
  const size_t noop = ndim() - nk;
  const Shape i_(shape_.end() - nk, shape_.end());
  std::vector<int64_t> o_;
  for (size_t j = 0; j < nk; j++) {
    if (d_[j] * (k_[j] - 1) + 1 > i_[j])
      throw ShapeError("pool: kernel " + ints_to_string(k_) + " with dilation " + ints_to_string(d_) +
                       " is larger than the input " + shape_to_string(shape_));
    if (s_[j] <= 0 || d_[j] <= 0 || k_[j] <= 0)
      throw ShapeError("pool: kernel, stride and dilation must be positive");
    o_.push_back(ceildiv(i_[j] - d_[j] * (k_[j] - 1), s_[j]));
  }
  PadPairs keep;
  for (size_t j = 0; j < noop; j++) keep.emplace_back(0, shape_[j]);
  Shape lead(shape_.begin(), shape_.begin() + noop);
  auto with_lead = [&](const Shape& tail) {
    Shape s = lead;
    s.insert(s.end(), tail.begin(), tail.end());
    return s;
  };
  auto bounds = [&](const PadPairs& tail) {
    PadPairs b = keep;
    b.insert(b.end(), tail.begin(), tail.end());
    return b;
  };
  std::vector<int64_t> order(noop);
  std::iota(order.begin(), order.end(), 0);

  bool overlapping = false;
  for (size_t j = 0; j < nk; j++) overlapping = overlapping || k_[j] > s_[j] || d_[j] != 1;
  if (overlapping) {
    // Windows overlap: repeat the input k times along each axis, so that a reshape to (k, i*f+d)
    // lines window element k up with input element o*s + k*d; then shrink to the strided outputs.
    std::vector<int64_t> f_, repeats(noop, 1);
    for (size_t j = 0; j < nk; j++) {
      f_.push_back(1 + (o_[j] * s_[j] > i_[j] - d_[j] * (k_[j] - 1) ? 1 : 0));
      repeats.push_back(ceildiv(k_[j] * (i_[j] * f_[j] + d_[j]), i_[j]));
    }
    Tensor x = repeat(repeats);
    PadPairs b1, b2, b3;
    Shape r1, r2, r3;
    for (size_t j = 0; j < nk; j++) {
      const int64_t span = i_[j] * f_[j] + d_[j];
      b1.emplace_back(0, k_[j] * span);
      r1.insert(r1.end(), {k_[j], span});
      b2.insert(b2.end(), {{0, k_[j]}, {0, o_[j] * s_[j]}});
      r2.insert(r2.end(), {k_[j], o_[j], s_[j]});
      b3.insert(b3.end(), {{0, k_[j]}, {0, o_[j]}, {0, 1}});
      r3.insert(r3.end(), {k_[j], o_[j]});
    }
    x = x.shrink(bounds(b1)).reshape(with_lead(r1));
    x = x.shrink(bounds(b2)).reshape(with_lead(r2));
    x = x.shrink(bounds(b3)).reshape(with_lead(r3));
    for (size_t j = 0; j < nk; j++) order.push_back(noop + 2 * j + 1);  // outputs first,
    for (size_t j = 0; j < nk; j++) order.push_back(noop + 2 * j);      // then the window
    return x.permute(order);
  }
  // Disjoint windows (k <= s, no dilation): pad to o*s, split each axis into (o, s), keep k of s.
  PadPairs pads(noop, {0, 0}), b1, b2;
  Shape r1;
  for (size_t j = 0; j < nk; j++) {
    pads.emplace_back(0, std::max<int64_t>(0, o_[j] * s_[j] - i_[j]));
    b1.emplace_back(0, o_[j] * s_[j]);
    r1.insert(r1.end(), {o_[j], s_[j]});
    b2.insert(b2.end(), {{0, o_[j]}, {0, k_[j]}});
  }
  Tensor x = pad(pads).shrink(bounds(b1)).reshape(with_lead(r1)).shrink(bounds(b2));
  for (size_t j = 0; j < nk; j++) order.push_back(noop + 2 * j);
  for (size_t j = 0; j < nk; j++) order.push_back(noop + 2 * j + 1);
  return x.permute(order);
}

Tensor Tensor::conv2d(const Tensor& weight, const std::optional<Tensor>& bias, ConvOptions opts) const {
  const Shape& ws = weight.shape();
  if (ndim() < 3 || ndim() != weight.ndim() || opts.groups <= 0 || ws[0] % opts.groups != 0 ||
      opts.groups * ws[1] != shape_[1])
    throw ShapeError("conv2d: input " + shape_to_string(shape_) + " does not match weight " +
                     shape_to_string(ws) + " with groups=" + std::to_string(opts.groups) +
                     " (expected (N, groups*Cin, ...) and (Cout, Cin, ...))");
  const int64_t bs = shape_[0], cin = ws[1], cout = ws[0], groups = opts.groups, rcout = cout / groups;
  const Shape hw(ws.begin() + 2, ws.end());
  const size_t nd = hw.size();
  // conv2d is a pool (with padding): (bs, groups*cin, *oyx, *HW).
  const Tensor pooled =
      pad_flat(resolve_pool_pads(opts.padding, nd, "conv2d")).pool(hw, opts.stride, opts.dilation);
  const Shape oyx(pooled.shape().begin() + 2, pooled.shape().end() - nd);
  auto cat = [](std::initializer_list<Shape> parts) {
    Shape s;
    for (const Shape& p : parts) s.insert(s.end(), p.begin(), p.end());
    return s;
  };
  Tensor x =
      pooled.reshape(cat({{bs, groups, cin, 1}, oyx, hw})).expand(cat({{bs, groups, cin, rcout}, oyx, hw}));
  // -> (bs, groups, rcout, *oyx, cin, *HW), reduced over the trailing cin and HW axes.
  std::vector<int64_t> order{0, 1, 3};
  for (size_t j = 0; j < nd; j++) order.push_back(4 + static_cast<int64_t>(j));
  order.push_back(2);
  for (size_t j = 0; j < nd; j++) order.push_back(4 + static_cast<int64_t>(nd + j));
  x = x.permute(order);
  const Tensor w = weight.reshape(cat({{1, groups, rcout}, Shape(nd, 1), {cin}, hw}));
  std::vector<int64_t> axes;
  for (size_t j = 0; j < 1 + nd; j++) axes.push_back(-1 - static_cast<int64_t>(j));
  const Tensor ret = (x * w).sum(axes, true).reshape(cat({{bs, cout}, oyx}));
  if (!bias) return ret;
  return ret + bias->reshape(cat({{1, -1}, Shape(nd, 1)}));
}

Tensor Tensor::max_pool2d(std::vector<int64_t> kernel, std::vector<int64_t> stride,
                          std::vector<int64_t> dilation, std::vector<int64_t> padding) const {
  const std::vector<int64_t> pads = resolve_pool_pads(padding, kernel.size(), "max_pool2d");
  // Padding takes the dtype's minimum, so it never wins the max.
  const Tensor pooled =
      pad_flat(pads, dtype().is_float() ? ConstType(-INFINITY) : ConstType(dtype().int_min()))
          .pool(kernel, stride.empty() ? kernel : stride, dilation);
  std::vector<int64_t> axes;
  for (size_t j = 0; j < kernel.size(); j++) axes.push_back(-1 - static_cast<int64_t>(j));
  return pooled.max(axes);
}

Tensor Tensor::avg_pool2d(std::vector<int64_t> kernel, std::vector<int64_t> stride,
                          std::vector<int64_t> dilation, std::vector<int64_t> padding) const {
  const std::vector<int64_t> pads = resolve_pool_pads(padding, kernel.size(), "avg_pool2d");
  const Tensor pooled = pad_flat(pads).pool(kernel, stride.empty() ? kernel : stride, dilation);
  std::vector<int64_t> axes;
  for (size_t j = 0; j < kernel.size(); j++) axes.push_back(-1 - static_cast<int64_t>(j));
  return pooled.mean(axes);
}

Tensor Tensor::softmax(int64_t axis) const {
  const Tensor e = (*this - max(axis, true)).exp();
  return e.div(e.sum(axis, true));
}

Tensor Tensor::log_softmax(int64_t axis) const {
  const Tensor m = *this - max(axis, true);
  return m - m.exp().sum(axis, true).log();
}

Tensor Tensor::layernorm(int64_t axis, double eps) const {
  const Tensor y = *this - mean(axis, true);
  return y.mul((y * y).mean(axis, true).add(scalar_like(y, eps)).rsqrt());
}

Tensor Tensor::scaled_dot_product_attention(const Tensor& key, const Tensor& value,
                                            const std::optional<Tensor>& attn_mask, bool is_causal) const {
  if (ndim() < 2)
    throw ShapeError("scaled_dot_product_attention: query " + shape_to_string(shape_) +
                     " is not at least 2D");
  const DType acc = least_upper_dtype(least_upper_dtype(dtype(), key.dtype()), dtypes::float32);
  Tensor qk = matmul(key.transpose(-2, -1), acc) / std::sqrt(static_cast<double>(shape_.back()));
  std::optional<Tensor> mask = attn_mask;
  if (is_causal) {
    if (mask) throw ShapeError("scaled_dot_product_attention: cannot set attn_mask when is_causal");
    const int64_t r = qk.shape()[qk.ndim() - 2], c = qk.shape().back();
    mask = arange(r).unsqueeze(-1) >= arange(c);  // lower triangle: key j visible from query i when j <= i
  }
  if (mask) qk = qk + (mask->dtype().is_bool() ? mask->where(0.0, Tensor(-INFINITY, qk.dtype())) : *mask);
  return qk.cast(dtype()).softmax(-1).matmul(value);
}

}  // namespace tunebed
