// Movement ops by explicit index arithmetic: for each output element, in row-major order, the
// flat index of the input element it copies (or none, for padding). Deliberately naive: this is the
// oracle for ShapeTracker, which computes the same maps symbolically.
#include <functional>

#include "core/reference/array_ops.hpp"

namespace tunebed::reference {

int64_t Array::numel() const { return prod(shape); }

int64_t prod(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

Shape strides_of(const Shape& s) {
  Shape st(s.size(), 1);
  for (size_t k = s.size(); k-- > 1;) st[k - 1] = st[k] * s[k];
  return st;
}

std::string shape_str(const Shape& s) {
  std::string out = "(";
  for (size_t k = 0; k < s.size(); k++) out += (k ? ", " : "") + std::to_string(s[k]);
  return out + (s.size() == 1 ? ",)" : ")");
}

void fail(Ops op, const std::string& msg) { throw ReferenceError(std::string(op_name(op)) + ": " + msg); }

Array make_array(DType dtype, Shape shape) {
  Array a{dtype, std::move(shape), {}, {}};
  for (int64_t d : a.shape)
    if (d < 0) throw ReferenceError("negative dimension in shape " + shape_str(a.shape));
  if (dtype.is_float())
    a.f.resize(a.numel());
  else
    a.i.resize(a.numel());
  return a;
}

namespace {

// Builds `out_shape` from `a`: source(index of an output element) is the flat input index, or -1
// for an element that is not read from the input (padding, which is zero).
Array gather(const Array& a, const Shape& out_shape, const std::function<int64_t(const Shape&)>& source) {
  Array out = make_array(a.dtype, out_shape);
  Shape idx(out_shape.size(), 0);
  for (int64_t o = 0; o < out.numel(); o++) {
    const int64_t s = source(idx);
    if (s >= 0) {
      if (a.dtype.is_float())
        out.f[o] = a.f[s];
      else
        out.i[o] = a.i[s];
    }
    for (size_t k = idx.size(); k-- > 0;) {  // odometer: the next row-major index
      if (++idx[k] < out_shape[k]) break;
      idx[k] = 0;
    }
  }
  return out;
}

void check_rank(Ops op, const Array& a, size_t rank, const char* what) {
  if (a.shape.size() != rank)
    fail(op, std::string(what) + " has " + std::to_string(rank) + " entries for shape " + shape_str(a.shape));
}

}  // namespace

Array reshape(const Array& a, const Shape& shape) {
  for (int64_t d : shape)
    if (d < 0) fail(Ops::RESHAPE, "negative dimension in " + shape_str(shape));
  if (prod(shape) != a.numel())
    fail(Ops::RESHAPE, "cannot reshape " + shape_str(a.shape) + " to " + shape_str(shape));
  Array out = a;
  out.shape = shape;
  return out;
}

Array permute(const Array& a, const std::vector<int64_t>& order) {
  check_rank(Ops::PERMUTE, a, order.size(), "order");
  std::vector<bool> seen(order.size(), false);
  Shape out_shape;
  for (int64_t o : order) {
    if (o < 0 || o >= static_cast<int64_t>(order.size()) || seen[o])
      fail(Ops::PERMUTE, "order is not a permutation of the " + std::to_string(order.size()) + " axes");
    seen[o] = true;
    out_shape.push_back(a.shape[o]);
  }
  const Shape st = strides_of(a.shape);
  return gather(a, out_shape, [&](const Shape& idx) {
    int64_t s = 0;
    for (size_t k = 0; k < idx.size(); k++) s += idx[k] * st[order[k]];
    return s;
  });
}

Array expand(const Array& a, const Shape& shape) {
  check_rank(Ops::EXPAND, a, shape.size(), "new shape");
  for (size_t k = 0; k < shape.size(); k++)
    if (a.shape[k] != shape[k] && a.shape[k] != 1)
      fail(Ops::EXPAND, "cannot expand " + shape_str(a.shape) + " to " + shape_str(shape));
  const Shape st = strides_of(a.shape);
  return gather(a, shape, [&](const Shape& idx) {
    int64_t s = 0;
    for (size_t k = 0; k < idx.size(); k++) s += (a.shape[k] == 1 ? 0 : idx[k]) * st[k];
    return s;
  });
}

Array pad(const Array& a, const Pairs& padding) {
  check_rank(Ops::PAD, a, padding.size(), "padding");
  Shape out_shape;
  for (size_t k = 0; k < padding.size(); k++) {
    if (padding[k].first < 0 || padding[k].second < 0) fail(Ops::PAD, "negative padding");
    out_shape.push_back(a.shape[k] + padding[k].first + padding[k].second);
  }
  const Shape st = strides_of(a.shape);
  return gather(a, out_shape, [&](const Shape& idx) -> int64_t {
    int64_t s = 0;
    for (size_t k = 0; k < idx.size(); k++) {
      const int64_t i = idx[k] - padding[k].first;
      if (i < 0 || i >= a.shape[k]) return -1;
      s += i * st[k];
    }
    return s;
  });
}

Array shrink(const Array& a, const Pairs& bounds) {
  check_rank(Ops::SHRINK, a, bounds.size(), "bounds");
  Shape out_shape;
  for (size_t k = 0; k < bounds.size(); k++) {
    const auto [b, e] = bounds[k];
    if (b < 0 || b > e || e > a.shape[k])
      fail(Ops::SHRINK, "bounds (" + std::to_string(b) + ", " + std::to_string(e) +
                            ") out of range for axis " + std::to_string(k) + " of " + shape_str(a.shape));
    out_shape.push_back(e - b);
  }
  const Shape st = strides_of(a.shape);
  return gather(a, out_shape, [&](const Shape& idx) {
    int64_t s = 0;
    for (size_t k = 0; k < idx.size(); k++) s += (idx[k] + bounds[k].first) * st[k];
    return s;
  });
}

Array flip(const Array& a, const std::vector<bool>& axes) {
  check_rank(Ops::FLIP, a, axes.size(), "flip mask");
  const Shape st = strides_of(a.shape);
  return gather(a, a.shape, [&](const Shape& idx) {
    int64_t s = 0;
    for (size_t k = 0; k < idx.size(); k++) s += (axes[k] ? a.shape[k] - 1 - idx[k] : idx[k]) * st[k];
    return s;
  });
}

}  // namespace tunebed::reference
