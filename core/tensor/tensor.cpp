// Tensor: construction, movement ops and realization. Elementwise ops are in elementwise.cpp,
// reductions in reduce.cpp, the composite ops (matmul, conv, pools, softmax, ...) in nn.cpp.
#include "core/tensor/tensor.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/tensor/graph.hpp"
#include "core/tensor/realize.hpp"

namespace tunebed {

// ---- ConstType ---------------------------------------------------------------------------------

DType ConstType::default_dtype() const {
  if (std::holds_alternative<bool>(v)) return dtypes::bool_;
  return std::holds_alternative<int64_t>(v) ? dtypes::int32 : dtypes::float32;
}

double ConstType::as_double() const {
  return std::visit([](auto x) { return static_cast<double>(x); }, v);
}

Arg ConstType::as_arg(const DType& d) const {
  if (d.is_float()) return Arg(round_float(as_double(), d));
  if (d.is_bool()) return Arg(as_double() != 0);
  if (std::holds_alternative<double>(v))
    return UOp::const_float(d, std::get<double>(v)).arg();  // truncates as C
  return Arg(wrap_int(std::holds_alternative<bool>(v) ? std::get<bool>(v) : std::get<int64_t>(v), d));
}

// ---- construction ------------------------------------------------------------------------------

Tensor::Tensor(UOp uop, Shape shape, BufferData buffers)
    : uop_(std::move(uop)), shape_(std::move(shape)), buffers_(std::move(buffers)) {}

Tensor::Tensor(ConstType scalar, std::optional<DType> dtype, const std::string& device)
    : Tensor(const_uop(dtype.value_or(scalar.default_dtype()), scalar, device), {}, {}) {}

Tensor Tensor::apply(Ops op, DType dtype, const Arg& arg, const std::vector<const Tensor*>& others) const {
  std::vector<UOp> src{uop_};
  std::vector<Shape> shapes{shape_};
  BufferData buffers = buffers_;
  for (const Tensor* t : others) {
    src.push_back(t->uop_);
    shapes.push_back(t->shape_);
    buffers.insert(t->buffers_.begin(), t->buffers_.end());
  }
  Shape shape = infer_shape(op, dtype, arg, src, shapes);
  return Tensor(UOp::make(op, dtype, std::move(src), arg), std::move(shape), std::move(buffers));
}

Tensor Tensor::from_host(HostBuffer data, const Shape& shape, const std::string& device) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw ShapeError("from_host: negative dimension in " + shape_to_string(shape));
    n *= d;
  }
  if (n != data.numel())
    throw ShapeError("from_host: " + std::to_string(data.numel()) + " elements do not fill shape " +
                     shape_to_string(shape));
  UOp buf = new_buffer(device, n, data.dtype);
  BufferData buffers{{buffer_id(buf), std::make_shared<HostBuffer>(std::move(data))}};
  return Tensor(buf, {n}, std::move(buffers)).reshape(shape);
}

Tensor Tensor::empty(const Shape& shape, DType dtype, const std::string& device) {
  int64_t n = 1;
  for (int64_t d : shape) n *= std::max<int64_t>(d, 0);
  return from_host(HostBuffer(dtype, n), shape, device);  // host memory is zeroed, not left undefined
}

Tensor Tensor::from_values(const std::vector<double>& values, const Shape& shape, DType dtype) {
  HostBuffer data(dtype, static_cast<int64_t>(values.size()));
  for (size_t k = 0; k < values.size(); k++) data.set_float(static_cast<int64_t>(k), values[k]);
  return from_host(std::move(data), shape);
}

Tensor Tensor::full(const Shape& shape, ConstType value, std::optional<DType> dtype,
                    const std::string& device) {
  return Tensor(value, dtype, device).reshape(Shape(shape.size(), 1)).expand(shape);
}

Tensor Tensor::zeros(const Shape& shape, DType dtype) { return full(shape, 0, dtype); }
Tensor Tensor::ones(const Shape& shape, DType dtype) { return full(shape, 1, dtype); }

Tensor Tensor::from_uop(UOp uop, BufferData buffers) {
  for (const UOp& b : graph_buffers(uop))
    if (!buffers.count(buffer_id(b)))
      throw std::invalid_argument("from_uop: no host data for buffer " + std::to_string(buffer_id(b)));
  Shape shape = tensor_shape(uop);
  return Tensor(std::move(uop), std::move(shape), std::move(buffers));
}

// ---- properties --------------------------------------------------------------------------------

int64_t Tensor::numel() const {
  return std::accumulate(shape_.begin(), shape_.end(), int64_t{1}, std::multiplies<>());
}

std::string Tensor::device() const {
  // As tinygrad's _device: a BUFFER or COPY names its own, anything else inherits its first source's.
  UOp u = uop_;
  while (u.op() != Ops::DEVICE) u = (u.op() == Ops::BUFFER || u.op() == Ops::COPY) ? u.src(1) : u.src(0);
  return u.arg().as_string();
}

bool Tensor::is_realized() const {
  return uop_.op() == Ops::BUFFER || (uop_.op() == Ops::RESHAPE && uop_.src(0).op() == Ops::BUFFER);
}

int64_t Tensor::resolve_dim(int64_t dim, const char* op, int64_t extra) const {
  const int64_t total = ndim() + extra;
  if (dim < -std::max<int64_t>(total, 1) || dim >= std::max<int64_t>(total, 1))
    throw ShapeError(std::string(op) + ": dimension " + std::to_string(dim) + " out of range for shape " +
                     shape_to_string(shape_));
  return dim < 0 ? dim + total : dim;
}

// ---- movement ----------------------------------------------------------------------------------

Tensor Tensor::reshape(Shape shape) const {
  const auto inferred = std::count(shape.begin(), shape.end(), -1);
  if (inferred > 1) throw ShapeError("reshape: only one dimension can be -1, got " + shape_to_string(shape));
  if (inferred) {
    int64_t known = 1;
    for (int64_t d : shape) known *= d == -1 ? 1 : d;
    if (known == 0 || numel() % known != 0)
      throw ShapeError("reshape: cannot reshape " + shape_to_string(shape_) + " to " +
                       shape_to_string(shape));
    std::replace(shape.begin(), shape.end(), int64_t{-1}, numel() / known);
  }
  if (shape == shape_) return *this;
  return apply(Ops::RESHAPE, dtype(), Arg::ints(shape));
}

Tensor Tensor::permute(std::vector<int64_t> order) const {
  for (int64_t& o : order) o = resolve_dim(o, "permute");
  std::vector<int64_t> identity(order.size());
  std::iota(identity.begin(), identity.end(), 0);
  if (order == identity && order.size() == shape_.size()) return *this;
  return apply(Ops::PERMUTE, dtype(), Arg::ints(order));
}

Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const {
  std::vector<int64_t> order(ndim());
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[resolve_dim(dim0, "transpose")], order[resolve_dim(dim1, "transpose")]);
  return permute(order);
}

Tensor Tensor::expand(Shape shape) const {
  if (shape.size() < shape_.size())
    throw ShapeError("expand: cannot broadcast " + shape_to_string(shape_) + " to fewer dimensions " +
                     shape_to_string(shape));
  Shape aligned(shape.size() - shape_.size(), 1);
  aligned.insert(aligned.end(), shape_.begin(), shape_.end());
  for (size_t k = 0; k < shape.size(); k++) {
    if (shape[k] == -1) shape[k] = aligned[k];
    if (aligned[k] != shape[k] && aligned[k] != 1)
      throw ShapeError("expand: cannot broadcast " + shape_to_string(shape_) + " to " +
                       shape_to_string(shape));
  }
  return broadcast_to(shape);
}

Tensor Tensor::broadcast_to(const Shape& shape) const {
  if (shape == shape_) return *this;
  Shape aligned(shape.size() - shape_.size(), 1);
  aligned.insert(aligned.end(), shape_.begin(), shape_.end());
  const Tensor x = reshape(aligned);
  return aligned == shape ? x : x.apply(Ops::EXPAND, dtype(), Arg::ints(shape));
}

Tensor Tensor::pad(PadPairs padding, ConstType value) const {
  if (padding.size() != shape_.size())
    throw ShapeError("pad: " + std::to_string(padding.size()) + " (before, after) pairs for shape " +
                     shape_to_string(shape_));
  // Negative padding removes elements, as a shrink (tinygrad's convention).
  PadPairs bounds, pads;
  for (size_t k = 0; k < padding.size(); k++) {
    const auto [b, a] = padding[k];
    bounds.emplace_back(std::max<int64_t>(-b, 0), std::min(a + shape_[k], shape_[k]));
    pads.emplace_back(std::max<int64_t>(b, 0), std::max<int64_t>(a, 0));
  }
  const Tensor x = shrink(bounds);
  if (std::all_of(pads.begin(), pads.end(), [](auto p) { return p.first == 0 && p.second == 0; })) return x;
  ArgTuple arg;
  for (auto [b, a] : pads) arg.push_back(Arg::tuple({Arg(b), Arg(a)}));
  const Tensor padded = x.apply(Ops::PAD, dtype(), Arg(arg));
  if (value.as_double() == 0) return padded;
  // PAD fills with zero; another value is added where a padded ones tensor is zero.
  return padded +
         Tensor::full(x.shape(), 1, dtype()).pad(pads).where(Tensor(0, dtype()), scalar_like(*this, value));
}

Tensor Tensor::pad_flat(const std::vector<int64_t>& flat, ConstType value) const {
  if (flat.size() % 2 || static_cast<int64_t>(flat.size() / 2) > ndim())
    throw ShapeError("pad: flat padding of " + std::to_string(flat.size()) + " values for shape " +
                     shape_to_string(shape_));
  PadPairs pairs(shape_.size(), {0, 0});
  // (left, right, top, bottom, ...) pads the last axis first.
  for (size_t k = 0; k < flat.size() / 2; k++) pairs[shape_.size() - 1 - k] = {flat[2 * k], flat[2 * k + 1]};
  return pad(pairs, value);
}

Tensor Tensor::shrink(PadPairs bounds) const {
  if (bounds.size() != shape_.size())
    throw ShapeError("shrink: " + std::to_string(bounds.size()) + " (start, end) pairs for shape " +
                     shape_to_string(shape_));
  bool whole = true;
  ArgTuple arg;
  for (size_t k = 0; k < bounds.size(); k++) {
    whole = whole && bounds[k].first == 0 && bounds[k].second == shape_[k];
    arg.push_back(Arg::tuple({Arg(bounds[k].first), Arg(bounds[k].second)}));
  }
  return whole ? *this : apply(Ops::SHRINK, dtype(), Arg(arg));
}

Tensor Tensor::flip(std::vector<int64_t> axes) const {
  std::vector<bool> mask(shape_.size(), false);
  for (int64_t a : axes) {
    const int64_t d = resolve_dim(a, "flip");
    if (mask[d]) throw ShapeError("flip: axis " + std::to_string(a) + " appears twice");
    mask[d] = true;
  }
  if (std::none_of(mask.begin(), mask.end(), [](bool b) { return b; })) return *this;
  ArgTuple arg;
  for (bool b : mask) arg.emplace_back(b);
  return apply(Ops::FLIP, dtype(), Arg(arg));
}

Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  if (ndim() == 0) return reshape({1});
  const int64_t s = resolve_dim(start_dim, "flatten"), e = resolve_dim(end_dim, "flatten");
  Shape shape(shape_.begin(), shape_.begin() + s);
  shape.push_back(
      std::accumulate(shape_.begin() + s, shape_.begin() + e + 1, int64_t{1}, std::multiplies<>()));
  shape.insert(shape.end(), shape_.begin() + e + 1, shape_.end());
  return reshape(shape);
}

Tensor Tensor::unsqueeze(int64_t dim) const {
  Shape shape = shape_;
  shape.insert(shape.begin() + resolve_dim(dim, "unsqueeze", 1), 1);
  return reshape(shape);
}

Tensor Tensor::squeeze(int64_t dim) const {
  const int64_t d = resolve_dim(dim, "squeeze");
  if (shape_[d] != 1) return *this;
  Shape shape = shape_;
  shape.erase(shape.begin() + d);
  return reshape(shape);
}

Tensor Tensor::repeat(std::vector<int64_t> repeats) const {
  if (repeats.size() < shape_.size())
    throw ShapeError("repeat: " + std::to_string(repeats.size()) + " repeats for shape " +
                     shape_to_string(shape_));
  Shape base(repeats.size() - shape_.size(), 1);
  base.insert(base.end(), shape_.begin(), shape_.end());
  // (s) -> (1, s) -> (r, s) -> (r*s): each repeated axis gets a new leading axis to expand.
  Shape unsqueezed, expanded, final_shape;
  for (size_t k = 0; k < base.size(); k++) {
    if (repeats[k] < 0) throw ShapeError("repeat: negative repeat count");
    if (repeats[k] != 1) unsqueezed.push_back(1), expanded.push_back(repeats[k]);
    unsqueezed.push_back(base[k]), expanded.push_back(base[k]);
    final_shape.push_back(repeats[k] * base[k]);
  }
  return reshape(unsqueezed).expand(expanded).reshape(final_shape);
}

Tensor Tensor::slice(const std::vector<Slice>& slices) const {
  if (slices.size() > shape_.size())
    throw ShapeError("slice: " + std::to_string(slices.size()) + " slices for shape " +
                     shape_to_string(shape_));
  Tensor x = *this;
  for (size_t k = 0; k < slices.size(); k++) {
    const Slice& s = slices[k];
    const int64_t n = shape_[k], step = s.step;
    if (step == 0) throw ShapeError("slice: step of axis " + std::to_string(k) + " is zero");
    // Python's slice.indices(n): clamp the bounds, then count the elements.
    auto clamp = [&](std::optional<int64_t> v, int64_t dflt) {
      if (!v) return dflt;
      int64_t i = *v < 0 ? *v + n : *v;
      return step > 0 ? std::clamp<int64_t>(i, 0, n) : std::clamp<int64_t>(i, -1, n - 1);
    };
    const int64_t start = clamp(s.start, step > 0 ? 0 : n - 1), stop = clamp(s.stop, step > 0 ? n : -1);
    const int64_t count = step > 0 ? std::max<int64_t>(0, (stop - start + step - 1) / step)
                                   : std::max<int64_t>(0, (start - stop - step - 1) / -step);
    // Shrink to the elements' span, flip for a negative step, then keep every |step|-th.
    const int64_t span = count ? (count - 1) * std::abs(step) + 1 : 0;
    const int64_t lo = count == 0 ? 0 : step > 0 ? start : start - span + 1;
    PadPairs bounds;
    for (int64_t a = 0; a < x.ndim(); a++) bounds.emplace_back(0, x.shape()[a]);
    bounds[k] = {lo, lo + span};
    x = x.shrink(bounds);
    if (step < 0) x = x.flip({static_cast<int64_t>(k)});
    if (std::abs(step) > 1 && count > 0) {
      PadPairs pads(x.ndim(), {0, 0});
      pads[k] = {0, count * std::abs(step) - span};
      x = x.pad(pads);
      Shape split = x.shape();
      split[k] = count;
      split.insert(split.begin() + k + 1, std::abs(step));
      x = x.reshape(split);
      PadPairs first;
      for (int64_t a = 0; a < x.ndim(); a++)
        first.emplace_back(0, a == static_cast<int64_t>(k) + 1 ? 1 : x.shape()[a]);
      x = x.shrink(first).squeeze(static_cast<int64_t>(k) + 1);
    }
  }
  return x;
}

Tensor Tensor::index(int64_t axis, int64_t i) const {
  const int64_t a = resolve_dim(axis, "index");
  if (i < -shape_[a] || i >= shape_[a])
    throw ShapeError("index: " + std::to_string(i) + " out of range for axis " + std::to_string(axis) +
                     " of " + shape_to_string(shape_));
  const int64_t at = i < 0 ? i + shape_[a] : i;
  PadPairs bounds;
  for (int64_t k = 0; k < ndim(); k++) bounds.emplace_back(k == a ? at : 0, k == a ? at + 1 : shape_[k]);
  return shrink(bounds).squeeze(a);
}

// ---- realization -------------------------------------------------------------------------------

Tensor Tensor::contiguous() const { return apply(Ops::CONTIGUOUS, dtype(), Arg()); }

Tensor Tensor::to(const std::string& device) const {
  if (device == this->device()) return *this;
  const Tensor target(UOp(device_uop(device)), {}, {});
  return apply(Ops::COPY, dtype(), Arg(), {&target});
}

Tensor& Tensor::assign(const Tensor& x) {
  if (x.shape_ != shape_ || x.dtype() != dtype())
    throw ShapeError("assign: value " + shape_to_string(x.shape_) + " " + to_string(x.dtype()) +
                     " does not match target " + shape_to_string(shape_) + " " + to_string(dtype()));
  if (x.uop_ == uop_) return *this;  // a self assign is a no-op
  if (!is_realized()) realize();
  *this = apply(Ops::ASSIGN, dtype(), Arg(), {&x});
  return *this;
}

Tensor& Tensor::realize() {
  if (is_realized()) return *this;
  std::vector<HostBuffer> out = current_backend()->realize({uop_}, buffers_);
  if (uop_.op() == Ops::ASSIGN) {  // the value now lives in the target's buffer
    UOp target = uop_.src(0);
    BufferData kept;
    for (const UOp& b : graph_buffers(target)) kept.emplace(buffer_id(b), buffers_.at(buffer_id(b)));
    *this = Tensor(target, shape_, std::move(kept));
    return *this;
  }
  *this = from_host(std::move(out.at(0)), shape_, device());
  return *this;
}

HostBuffer Tensor::data() {
  realize();
  const UOp buf = uop_.op() == Ops::BUFFER ? uop_ : uop_.src(0);
  return *buffers_.at(buffer_id(buf));
}

}  // namespace tunebed
