// Elementwise ops and casts as Eigen array expressions. Floats compute in double and round to the
// output dtype once per node; integers compute in 64-bit unsigned arithmetic (wrapping, so no
// signed overflow) and wrap to the output dtype; bool is an integer that wraps to 0/1.
#include <Eigen/Core>
#include <cmath>
#include <limits>

#include "core/reference/array_ops.hpp"

namespace tunebed::reference {

namespace {

using ArrD = Eigen::Array<double, Eigen::Dynamic, 1>;
using ArrI = Eigen::Array<int64_t, Eigen::Dynamic, 1>;
using ArrU = Eigen::Array<uint64_t, Eigen::Dynamic, 1>;

Eigen::Map<const ArrD> fmap(const Array& a) { return {a.f.data(), static_cast<Eigen::Index>(a.f.size())}; }
Eigen::Map<const ArrI> imap(const Array& a) { return {a.i.data(), static_cast<Eigen::Index>(a.i.size())}; }
// The same int64 storage seen as uint64: arithmetic on it wraps modulo 2^64, as the dtypes do.
Eigen::Map<const ArrU> umap(const Array& a) {
  return {reinterpret_cast<const uint64_t*>(a.i.data()), static_cast<Eigen::Index>(a.i.size())};
}

template <class Expr>
void store_float(Array& out, const Expr& e) {
  const DType d = out.dtype;
  Eigen::Map<ArrD>(out.f.data(), static_cast<Eigen::Index>(out.f.size())) =
      e.unaryExpr([d](double x) { return round_float(x, d); });
}

template <class Expr>
void store_int(Array& out, const Expr& e) {
  const DType d = out.dtype;
  Eigen::Map<ArrI>(out.i.data(), static_cast<Eigen::Index>(out.i.size())) =
      e.unaryExpr([d](int64_t x) { return wrap_int(x, d); });
}

template <class Expr>
void store_unsigned(Array& out, const Expr& e) {
  store_int(out, e.unaryExpr([](uint64_t x) { return static_cast<int64_t>(x); }));
}

const auto nan_max = [](double a, double b) {
  return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN() : std::max(a, b);
};

// The unary float ops that are one libm function each, in double precision; null for the rest.
double (*libm_unary(Ops op))(double) {
  switch (op) {
    case Ops::SQRT:
      return [](double x) { return std::sqrt(x); };
    case Ops::EXP2:
      return [](double x) { return std::exp2(x); };
    case Ops::LOG2:
      return [](double x) { return std::log2(x); };
    case Ops::SIN:
      return [](double x) { return std::sin(x); };
    case Ops::TRUNC:
      return [](double x) { return std::trunc(x); };
    default:
      return nullptr;
  }
}

Array float_alu(Ops op, DType out_dtype, const Array& a, const Array* b) {
  Array out = make_array(out_dtype, a.shape);
  auto A = fmap(a);
  switch (op) {
    case Ops::NEG:
      store_float(out, -A);
      return out;
    case Ops::RECIP:
      store_float(out, A.inverse());
      return out;
    default:
      if (const auto f = libm_unary(op)) {
        store_float(out, A.unaryExpr(f));
        return out;
      }
  }
  if (!b) fail(op, "is not a unary op on " + to_string(a.dtype));
  auto B = fmap(*b);
  switch (op) {
    case Ops::ADD:
      store_float(out, A + B);
      return out;
    case Ops::SUB:
      store_float(out, A - B);
      return out;
    case Ops::MUL:
      store_float(out, A * B);
      return out;
    case Ops::FDIV:
      store_float(out, A / B);
      return out;
    case Ops::MAX:
      store_float(out, A.binaryExpr(B, nan_max));
      return out;
    case Ops::POW:
      store_float(out, A.binaryExpr(B, [](double x, double y) { return std::pow(x, y); }));
      return out;
    // Comparisons with NaN are false, except !=, as in C.
    case Ops::CMPLT:
      store_int(out, (A < B).cast<int64_t>());
      return out;
    case Ops::CMPNE:
      store_int(out, (A != B).cast<int64_t>());
      return out;
    case Ops::CMPEQ:
      store_int(out, (A == B).cast<int64_t>());
      return out;
    default:
      fail(op, "is not defined on " + to_string(a.dtype));
  }
}

// Truncating division and remainder as C's, made total where C is not: x / 0 is an error, and
// INT64_MIN / -1 wraps (unsigned arithmetic keeps it defined).
int64_t int_divmod(Ops op, int64_t x, int64_t y, bool is_unsigned) {
  if (y == 0) fail(op, "integer division by zero");
  if (is_unsigned) {
    const uint64_t ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
    return static_cast<int64_t>(op == Ops::IDIV ? ux / uy : ux % uy);
  }
  if (y == -1) return op == Ops::IDIV ? static_cast<int64_t>(0 - static_cast<uint64_t>(x)) : 0;
  return op == Ops::IDIV ? x / y : x % y;
}

int64_t int_shift(Ops op, int64_t x, int64_t n, const DType& d) {
  const int bits = d.itemsize() * 8;
  if (n < 0 || n >= bits) fail(op, "shift by " + std::to_string(n) + " is out of range for " + to_string(d));
  if (op == Ops::SHL) return static_cast<int64_t>(static_cast<uint64_t>(x) << n);
  return d.is_unsigned() ? static_cast<int64_t>(static_cast<uint64_t>(x) >> n)
                         : x >> n;  // arithmetic for signed
}

Array int_alu(Ops op, DType out_dtype, const Array& a, const Array* b) {
  Array out = make_array(out_dtype, a.shape);
  const DType d = a.dtype;
  // Only uint64 does not fit int64's order; smaller unsigned values are stored non-negative.
  const bool u64 = d.scalar == Scalar::UInt64;
  if (op == Ops::NEG) {
    store_unsigned(out, umap(a).unaryExpr([](uint64_t x) { return uint64_t{0} - x; }));
    return out;
  }
  if (!b) fail(op, "is not defined on " + to_string(d));
  auto A = imap(a), B = imap(*b);
  auto less = [u64](int64_t x, int64_t y) {
    return u64 ? static_cast<uint64_t>(x) < static_cast<uint64_t>(y) : x < y;
  };
  switch (op) {
    case Ops::ADD:
      store_unsigned(out, umap(a) + umap(*b));
      return out;
    case Ops::SUB:
      store_unsigned(out, umap(a) - umap(*b));
      return out;
    case Ops::MUL:
      store_unsigned(out, umap(a) * umap(*b));
      return out;
    case Ops::AND:
      store_int(out, A.binaryExpr(B, [](int64_t x, int64_t y) { return x & y; }));
      return out;
    case Ops::OR:
      store_int(out, A.binaryExpr(B, [](int64_t x, int64_t y) { return x | y; }));
      return out;
    case Ops::XOR:
      store_int(out, A.binaryExpr(B, [](int64_t x, int64_t y) { return x ^ y; }));
      return out;
    case Ops::MAX:
      store_int(out, A.binaryExpr(B, [less](int64_t x, int64_t y) { return less(x, y) ? y : x; }));
      return out;
    case Ops::CMPLT:
      store_int(out, A.binaryExpr(B, [less](int64_t x, int64_t y) -> int64_t { return less(x, y); }));
      return out;
    case Ops::CMPNE:
      store_int(out, (A != B).cast<int64_t>());
      return out;
    case Ops::CMPEQ:
      store_int(out, (A == B).cast<int64_t>());
      return out;
    case Ops::IDIV:
    case Ops::MOD:
      store_int(out, A.binaryExpr(
                         B, [op, d](int64_t x, int64_t y) { return int_divmod(op, x, y, d.is_unsigned()); }));
      return out;
    case Ops::SHL:
    case Ops::SHR:
      store_int(out, A.binaryExpr(B, [op, d](int64_t x, int64_t n) { return int_shift(op, x, n, d); }));
      return out;
    default:
      fail(op, "is not defined on " + to_string(d));
  }
}

Array where(const Array& c, const Array& x, const Array& y) {
  Array out = make_array(x.dtype, x.shape);
  for (int64_t k = 0; k < out.numel(); k++) {
    if (x.dtype.is_float())
      out.f[k] = c.i[k] ? x.f[k] : y.f[k];
    else
      out.i[k] = c.i[k] ? x.i[k] : y.i[k];
  }
  return out;
}

}  // namespace

Array constant(DType dtype, const Arg& value) {
  Array a = make_array(dtype, {});
  if (dtype.is_float())
    a.f[0] = round_float(value.as_number(), dtype);
  else if (value.is<double>())
    a = cast(constant(dtypes::float64, value), dtype);
  else
    a.i[0] = wrap_int(value.is<bool>() ? value.as_bool() : value.as_int(), dtype);
  return a;
}

Array cast(const Array& a, DType to) {
  if (to.ptr || to.count != 1 || to.is_void())
    fail(Ops::CAST, "to " + to_string(to) + " is not a scalar dtype");
  Array out = make_array(to, a.shape);
  const bool from_u64 = a.dtype.scalar == Scalar::UInt64;
  for (int64_t k = 0; k < a.numel(); k++) {
    if (to.is_float()) {
      const double v = a.dtype.is_float() ? a.f[k]
                       : from_u64         ? static_cast<double>(static_cast<uint64_t>(a.i[k]))
                                          : static_cast<double>(a.i[k]);
      out.f[k] = round_float(v, to);
    } else if (!a.dtype.is_float()) {
      out.i[k] = wrap_int(a.i[k], to);
    } else {
      // float -> int as a C cast, made total: NaN -> 0, saturate to int64, then wrap; -> bool is != 0.
      const double v = a.f[k];
      out.i[k] = wrap_int(to.is_bool() ? v != 0 : float_to_int(v), to);
    }
  }
  return out;
}

Array alu(Ops op, DType out, const std::vector<const Array*>& srcs) {
  const size_t n = GroupOp::Ternary.contains(op) ? 3 : GroupOp::Binary.contains(op) ? 2 : 1;
  if (!GroupOp::ALU.contains(op) || op == Ops::MULACC)
    fail(op, "is not an elementwise op of the tensor graph");
  if (srcs.size() != n)
    fail(op, "takes " + std::to_string(n) + " sources, got " + std::to_string(srcs.size()));
  for (const Array* s : srcs)
    if (s->shape != srcs[0]->shape)
      fail(op, "sources have different shapes " + shape_str(srcs[0]->shape) + " and " + shape_str(s->shape));
  if (op == Ops::WHERE) {
    if (!srcs[0]->dtype.is_bool()) fail(op, "condition is " + to_string(srcs[0]->dtype) + ", not bool");
    if (srcs[1]->dtype != srcs[2]->dtype || srcs[1]->dtype != out)
      fail(op, "branches are " + to_string(srcs[1]->dtype) + " and " + to_string(srcs[2]->dtype) +
                   ", result " + to_string(out));
    return where(*srcs[0], *srcs[1], *srcs[2]);
  }
  const DType d = srcs[0]->dtype;
  if (n == 2 && srcs[1]->dtype != d)
    fail(op, "sources have dtypes " + to_string(d) + " and " + to_string(srcs[1]->dtype));
  const DType expected = GroupOp::Comparison.contains(op) ? dtypes::bool_ : d;
  if (out != expected)
    fail(op, "on " + to_string(d) + " gives " + to_string(expected) + ", not " + to_string(out));
  const Array* b = n == 2 ? srcs[1] : nullptr;
  return d.is_float() ? float_alu(op, out, *srcs[0], b) : int_alu(op, out, *srcs[0], b);
}

}  // namespace tunebed::reference
