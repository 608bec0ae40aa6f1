// Elementwise Tensor ops, each built from tinygrad's graph for it (tensor.py / mathtraits.py):
// only the ALU ops of the tensor graph appear (no SUB, FDIV or CMPEQ: a - b is a + b*-1, a / b is
// a * RECIP(b), a == b is NOT(a != b)), after explicit broadcasting and dtype promotion.
#include <cmath>
#include <numbers>

#include "core/tensor/graph.hpp"
#include "core/tensor/tensor.hpp"

namespace tunebed {

namespace {

DType least_upper_float(const DType& d) { return d.is_float() ? d : dtypes::float32; }

void require(bool ok, const char* op, const Tensor& t, const char* what) {
  if (!ok) throw ShapeError(std::string(op) + ": " + what + ", got " + to_string(t.dtype()));
}

}  // namespace

Tensor scalar_like(const Tensor& like, ConstType v) {
  const DType d = like.dtype();
  // A scalar takes the tensor's dtype when that loses nothing (tinygrad's _broadcasted).
  const bool fits = d.is_float() || (d.is_int() && !std::holds_alternative<double>(v.v)) ||
                    (d.is_bool() && std::holds_alternative<bool>(v.v));
  return Tensor(v, fits ? d : v.default_dtype(), like.device());
}

std::pair<Tensor, Tensor> Tensor::broadcasted(const Tensor& y, bool match_dtype) const {
  Tensor a = *this, b = y;
  if (match_dtype && a.dtype() != b.dtype()) {
    const DType out = least_upper_dtype(a.dtype(), b.dtype());
    a = a.cast(out), b = b.cast(out);
  }
  // NumPy broadcasting: align the shapes on the right; each dim must agree or be 1 (0 wins over 1).
  const size_t rank = std::max(a.shape_.size(), b.shape_.size());
  Shape sa(rank - a.shape_.size(), 1), sb(rank - b.shape_.size(), 1), out(rank);
  sa.insert(sa.end(), a.shape_.begin(), a.shape_.end());
  sb.insert(sb.end(), b.shape_.begin(), b.shape_.end());
  for (size_t k = 0; k < rank; k++) {
    if (sa[k] != sb[k] && sa[k] != 1 && sb[k] != 1)
      throw ShapeError("cannot broadcast " + shape_to_string(shape_) + " with " + shape_to_string(y.shape_));
    out[k] = sa[k] == 1 ? sb[k] : sa[k];
  }
  return {a.broadcast_to(out), b.broadcast_to(out)};
}

Tensor Tensor::binop(Ops op, const Tensor& x, const Tensor& y, const char* name) {
  try {
    auto [a, b] = x.broadcasted(y);
    return a.apply(op, GroupOp::Comparison.contains(op) ? dtypes::bool_ : a.dtype(), Arg(), {&b});
  } catch (const ShapeError& e) {
    throw ShapeError(std::string(name) + ": " + e.what());
  }
}

Tensor Tensor::add(const Tensor& x) const { return binop(Ops::ADD, *this, x, "add"); }
Tensor Tensor::mul(const Tensor& x) const { return binop(Ops::MUL, *this, x, "mul"); }
Tensor Tensor::sub(const Tensor& x) const {
  auto [a, b] = broadcasted(x);
  return a.add(b.neg());
}
Tensor Tensor::div(const Tensor& x) const {
  auto [a, b] = broadcasted(x);
  return a.cast(least_upper_float(a.dtype())).mul(b.cast(least_upper_float(b.dtype())).reciprocal());
}
Tensor Tensor::idiv(const Tensor& x) const {
  require(!dtype().is_float(), "idiv", *this, "needs integers");
  return binop(Ops::IDIV, *this, x, "idiv");
}
Tensor Tensor::mod(const Tensor& x) const {
  require(!dtype().is_float(), "mod", *this, "needs integers");
  return binop(Ops::MOD, *this, x, "mod");
}
Tensor Tensor::pow(const Tensor& x) const {
  require(dtype().is_float(), "pow", *this, "base needs to be float");
  return binop(Ops::POW, *this, x, "pow");
}
Tensor Tensor::maximum(const Tensor& x) const { return binop(Ops::MAX, *this, x, "maximum"); }
Tensor Tensor::minimum(const Tensor& x) const {
  auto [a, b] = broadcasted(x);
  return a.inverse().maximum(b.inverse()).inverse();
}
Tensor Tensor::lt(const Tensor& x) const { return binop(Ops::CMPLT, *this, x, "lt"); }
Tensor Tensor::gt(const Tensor& x) const { return binop(Ops::CMPLT, x, *this, "gt"); }
Tensor Tensor::le(const Tensor& x) const { return gt(x).logical_not(); }
Tensor Tensor::ge(const Tensor& x) const { return lt(x).logical_not(); }
Tensor Tensor::ne(const Tensor& x) const { return binop(Ops::CMPNE, *this, x, "ne"); }
Tensor Tensor::eq(const Tensor& x) const { return ne(x).logical_not(); }

Tensor Tensor::where(const Tensor& x, const Tensor& y) const {
  try {
    auto [a, b] = x.broadcasted(y);
    auto [cond, a2] = broadcasted(a, false);
    auto [cond2, b2] = cond.broadcasted(b, false);
    auto [x3, y3] = a2.broadcasted(b2);
    return cond2.cast(dtypes::bool_).apply(Ops::WHERE, x3.dtype(), Arg(), {&x3, &y3});
  } catch (const ShapeError& e) {
    throw ShapeError(std::string("where: ") + e.what());
  }
}
Tensor Tensor::where(const Tensor& x, ConstType y) const { return where(x, scalar_like(x, y)); }
Tensor Tensor::where(ConstType x, const Tensor& y) const { return where(scalar_like(y, x), y); }

Tensor Tensor::logical_not() const { return cast(dtypes::bool_).ne(Tensor(true)); }
Tensor Tensor::neg() const { return dtype().is_bool() ? logical_not() : mul(scalar_like(*this, -1)); }
Tensor Tensor::inverse() const {
  if (dtype().is_float()) return neg();
  if (dtype().is_int()) return binop(Ops::XOR, *this, scalar_like(*this, -1), "bitwise_not");
  return logical_not();
}

Tensor Tensor::reciprocal() const {
  const Tensor x = cast(least_upper_float(dtype()));
  return x.apply(Ops::RECIP, x.dtype(), Arg());
}
Tensor Tensor::exp2() const {
  const Tensor x = cast(least_upper_float(dtype()));
  return x.apply(Ops::EXP2, x.dtype(), Arg());
}
Tensor Tensor::log2() const {
  const Tensor x = cast(least_upper_float(dtype()));
  return x.apply(Ops::LOG2, x.dtype(), Arg());
}
Tensor Tensor::sqrt() const {
  const Tensor x = cast(least_upper_float(dtype()));
  return x.apply(Ops::SQRT, x.dtype(), Arg());
}
Tensor Tensor::sin() const {
  const Tensor x = cast(least_upper_float(dtype()));
  return x.apply(Ops::SIN, x.dtype(), Arg());
}
Tensor Tensor::exp() const { return (*this * (1 / std::numbers::ln2)).exp2(); }
Tensor Tensor::log() const { return log2() * std::numbers::ln2; }
Tensor Tensor::rsqrt() const { return sqrt().reciprocal(); }
Tensor Tensor::cos() const { return (std::numbers::pi / 2 - *this).sin(); }
Tensor Tensor::square() const { return *this * *this; }
Tensor Tensor::sign() const {
  const Tensor one = Tensor::full(shape_, 1, dtype()), minus_one = Tensor::full(shape_, -1, dtype());
  return ne(scalar_like(*this, 0))
             .where((*this < 0).where(minus_one, one), Tensor::full(shape_, 0, dtype())) +
         *this * 0;
}
Tensor Tensor::abs() const { return *this * sign(); }
// Written as a where, not maximum(0), so that its gradient would not split at 0 (tinygrad).
Tensor Tensor::relu() const { return (*this > 0).where(*this, 0); }
Tensor Tensor::sigmoid() const { return (1 + (*this * (-1 / std::numbers::ln2)).exp2()).reciprocal(); }
Tensor Tensor::tanh() const { return 2.0 * (2.0 * *this).sigmoid() - 1.0; }
Tensor Tensor::gelu() const {
  const Tensor cube = cast(least_upper_float(dtype())).pow(scalar_like(*this, 3.0));
  return 0.5 * *this * (1 + (std::sqrt(2 / std::numbers::pi) * (*this + 0.044715 * cube)).tanh());
}

Tensor Tensor::cast(DType d) const {
  if (d == dtype()) return *this;
  if (d.ptr || d.count != 1 || d.is_void())
    throw ShapeError("cast: " + to_string(d) + " is not a scalar dtype");
  // Floats reach uint8/uint16 through int32, so out-of-range values wrap rather than being undefined.
  if ((d == dtypes::uint8 || d == dtypes::uint16) && dtype().is_float()) return cast(dtypes::int32).cast(d);
  return apply(Ops::CAST, d, Arg());
}

// ---- operators ---------------------------------------------------------------------------------

Tensor operator+(const Tensor& a, const Tensor& b) { return a.add(b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return a.sub(b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return a.mul(b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return a.div(b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return a.lt(b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return a.gt(b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return a.le(b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return a.ge(b); }
Tensor operator-(const Tensor& a) { return a.neg(); }
Tensor operator+(const Tensor& a, ConstType b) { return a.add(scalar_like(a, b)); }
Tensor operator+(ConstType a, const Tensor& b) { return scalar_like(b, a).add(b); }
Tensor operator-(const Tensor& a, ConstType b) { return a.sub(scalar_like(a, b)); }
Tensor operator-(ConstType a, const Tensor& b) { return scalar_like(b, a).sub(b); }
Tensor operator*(const Tensor& a, ConstType b) { return a.mul(scalar_like(a, b)); }
Tensor operator*(ConstType a, const Tensor& b) { return scalar_like(b, a).mul(b); }
Tensor operator/(const Tensor& a, ConstType b) { return a.div(scalar_like(a, b)); }
Tensor operator/(ConstType a, const Tensor& b) { return scalar_like(b, a).div(b); }
Tensor operator<(const Tensor& a, ConstType b) { return a.lt(scalar_like(a, b)); }
Tensor operator>(const Tensor& a, ConstType b) { return a.gt(scalar_like(a, b)); }
Tensor& operator+=(Tensor& a, const Tensor& b) { return a.assign(a.add(b)); }
Tensor& operator-=(Tensor& a, const Tensor& b) { return a.assign(a.sub(b)); }
Tensor& operator*=(Tensor& a, const Tensor& b) { return a.assign(a.mul(b)); }
Tensor& operator/=(Tensor& a, const Tensor& b) { return a.assign(a.div(b)); }

}  // namespace tunebed
