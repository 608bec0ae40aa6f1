// The error-bound rules of error_bound.hpp, one op at a time.
#include "core/ir/error_bound.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace tunebed {
namespace {

constexpr double inf = INFINITY;

// 2^e, exactly, at compile time (std::ldexp is not constexpr before C++23).
constexpr double pow2(int e) {
  double x = 1;
  for (; e > 0; e--) x *= 2;
  for (; e < 0; e++) x /= 2;
  return x;
}

// A float format: significand bits (with the implicit one), the exponent of the smallest
// subnormal and that of the largest finite value's leading bit, and the constants the rules use,
// computed once (an exact run asks for them at every op).
struct FloatFormat {
  int precision = 0;
  int min_subnormal_exp = 0;
  int max_exp = 0;
  double unit_roundoff = 0;  // 2^-precision
  double eta = 0;            // half the smallest subnormal
  double largest = 0;        // the largest finite value: 65504 for float16

  constexpr FloatFormat() = default;
  constexpr FloatFormat(int p, int min_sub, int max_e)
      : precision(p), min_subnormal_exp(min_sub), max_exp(max_e), unit_roundoff(pow2(-p)),
        eta(pow2(min_sub - 1)), largest((2 - pow2(1 - p)) * pow2(max_e)) {}
};

constexpr FloatFormat kFloat64{53, -1074, 1023}, kFloat32{24, -149, 127}, kFloat16{11, -24, 15},
    kBFloat16{8, -133, 127}, kNotFloat{};
static_assert(kFloat16.largest == 65504 && kFloat32.largest == std::numeric_limits<float>::max() &&
              kFloat32.eta * 2 == std::numeric_limits<float>::denorm_min());

const FloatFormat& format_of(const DType& d) {
  switch (d.scalar) {
    case Scalar::Float64:
      return kFloat64;
    case Scalar::Float32:
      return kFloat32;
    case Scalar::Float16:
      return kFloat16;
    case Scalar::BFloat16:
      return kBFloat16;
    default:
      return kNotFloat;
  }
}

// The largest finite value of a float dtype. (DType::max_value is tinygrad's dtypes.max, infinity
// for every float.)
double largest_finite(const DType& d) { return format_of(d).largest; }

// The bound of a result that carries PROPAGATED error from its operands and is then rounded (by
// a library function off by up to ULPS ulps, or correctly: 0.5). What is rounded is the kernel's
// value, up to |r| + PROPAGATED, not r: so the bound holds to every order, not only the first.
// Past the dtype's largest finite value the kernel may hold an infinity the exact value does not:
// unverifiable.
double finish(const FloatFormat& f, double propagated, double r, double ulps = 0.5) {
  if (!f.precision) return propagated;
  if (std::isnan(r) || std::isinf(r)) return propagated == 0 ? 0 : inf;
  const double held = std::abs(r) + propagated;
  const double eps = 2 * f.unit_roundoff;
  const double e = propagated + ulps * eps * held + f.eta;  // f.eta: rounding_bound(d, 0)
  return held + e > f.largest ? inf : e;
}
double finish(const DType& d, double propagated, double r, double ulps = 0.5) {
  return finish(format_of(d), propagated, r, ulps);
}

double add_error_bound(const DType& d, double ea, double eb, double r) { return finish(d, ea + eb, r); }

double mul_error_bound(const DType& d, double a, double b, double ea, double eb, double r) {
  return finish(d, std::abs(b) * ea + std::abs(a) * eb + ea * eb, r);
}

// Whether a comparison of A and B (bounds EA, EB) may come out the other way in the kernel.
bool uncertain_order(double a, double b, double ea, double eb) {
  return ea + eb > 0 && std::abs(a - b) <= ea + eb;
}

// An integer result computed from inexact operands: truncation of [x-e, x+e].
double truncation_bound(double x, double e) {
  if (e == 0) return 0;
  return std::trunc(x - e) == std::trunc(x + e) ? 0 : e + 1;
}

}  // namespace

HostBuffer widened(const HostBuffer& b) {
  if (!b.dtype.is_float() || b.dtype == dtypes::float64) return b;
  HostBuffer w(dtypes::float64, b.numel());
  for (int64_t i = 0; i < b.numel(); i++) w.set_float(i, b.get_float(i));
  return w;
}

Expected exact(const HostBuffer& b) {
  return {b.dtype, widened(b), std::vector<double>(static_cast<size_t>(b.numel()), 0.0)};
}

double unit_roundoff(const DType& dtype) { return format_of(dtype).unit_roundoff; }

double rounding_bound(const DType& dtype, double r) {
  const FloatFormat& f = format_of(dtype);
  if (!f.precision) return 0;
  return f.unit_roundoff * std::abs(r) + f.eta;
}

double library_ulps(Ops op) {
  switch (op) {
    case Ops::FDIV:
    case Ops::RECIP:
      return 2.5;
    case Ops::SQRT:
    case Ops::EXP2:
    case Ops::LOG2:
      return 3;
    case Ops::SIN:
      return 4;
    case Ops::POW:
      return 16;
    default:
      return 0.5;
  }
}

// sum_j m_j^2 over the runs of equal values among the terms (finite; +0 and -0 are one value): each
// term adds 2m+1 when it is the (m+1)-th of its value. Counted in an open-addressing table of bit
// patterns, linear in the terms where a sort was n log n: an exact run bounds a sum per output.
// The table is kept at most a quarter full, so that a term mostly finds its slot at the first
// probe (a mispredicted probe loop was most of the cost), and its keys say empty with the bits of
// a NaN, which no finite term has.
double SumBound::squared_multiplicities() {
  constexpr uint64_t kEmpty = ~uint64_t{0};
  size_t slots = 16;
  while (slots < 4 * terms_.size()) slots *= 2;
  keys_.assign(slots, kEmpty);
  counts_.resize(slots);
  double squares = 0;
  for (double t : terms_) {
    const uint64_t bits = std::bit_cast<uint64_t>(t == 0 ? 0.0 : t);
    size_t i = static_cast<size_t>((bits * 0x9E3779B97F4A7C15ull) >> 32) & (slots - 1);
    while (keys_[i] != kEmpty && keys_[i] != bits) i = (i + 1) & (slots - 1);
    if (keys_[i] == kEmpty) {
      keys_[i] = bits;
      counts_[i] = 0;
    }
    squares += static_cast<double>(2 * counts_[i]++ + 1);
  }
  return squares;
}

double SumBound::bound(const DType& dtype) {
  if (!dtype.is_float() || n_ <= 1) return sum_bounds_;
  // a term that is not finite counts on its own
  const double squares =
      static_cast<double>(n_ - static_cast<int64_t>(terms_.size())) + squared_multiplicities();
  const auto n = static_cast<double>(n_);
  const double g = std::min(n - 1, 5 * std::sqrt(squares - 1));
  // every partial sum the kernel holds is at most sum (|x_i| + E_i), and may overflow past that
  const double held = sum_abs_ + sum_bounds_;
  if (held > largest_finite(dtype)) return inf;
  return sum_bounds_ + g * (unit_roundoff(dtype) * held + rounding_bound(dtype, 0));
}

void add_error_bounds(const DType& d, std::span<const double> ea, std::span<const double> eb,
                      std::span<const double> r, std::span<double> out) {
  const FloatFormat& f = format_of(d);  // once a block: finish() inlines into the loop
  for (size_t j = 0; j < out.size(); j++) out[j] = finish(f, ea[j] + eb[j], r[j]);
}

void mul_error_bounds(const DType& d, std::span<const double> a, std::span<const double> b,
                      std::span<const double> ea, std::span<const double> eb, std::span<const double> r,
                      std::span<double> out) {
  const FloatFormat& f = format_of(d);
  for (size_t j = 0; j < out.size(); j++)
    out[j] = finish(f, std::abs(b[j]) * ea[j] + std::abs(a[j]) * eb[j] + ea[j] * eb[j], r[j]);
}

double alu_error_bound(Ops op, const DType& d, const DType& from, std::span<const ConstValue> x,
                       std::span<const double> e, const ConstValue& r) {
  const double rv = r.as_double();
  const double ea = e.empty() ? 0 : e[0], eb = e.size() > 1 ? e[1] : 0;
  bool exact_inputs = true;
  for (double v : e) exact_inputs = exact_inputs && v == 0;
  const bool is_float = d.is_float();
  // Integer and boolean ops on exact operands are exact (exec_alu's wraparound is what the kernel
  // computes too).
  if (exact_inputs && !is_float && !(op == Ops::CAST && from.is_float())) return 0;
  const double a = x.empty() ? 0 : x[0].as_double(), b = x.size() > 1 ? x[1].as_double() : 0;
  switch (op) {
    case Ops::ADD:
    case Ops::SUB:
      return add_error_bound(d, ea, eb, rv);
    case Ops::MUL:
      return mul_error_bound(d, a, b, ea, eb, rv);
    case Ops::MULACC:  // rounded twice where the target has no fused multiply-add
      return finish(d, std::abs(b) * ea + std::abs(a) * eb + ea * eb + e[2] + rounding_bound(d, a * b), rv);
    case Ops::NEG:
      return ea;
    case Ops::MAX:
      return std::max(ea, eb);
    case Ops::CMPLT:
    case Ops::CMPNE:
    case Ops::CMPEQ:
      return uncertain_order(a, b, ea, eb) ? 1 : 0;
    case Ops::AND:
    case Ops::OR:
    case Ops::XOR:
      return d.is_bool() ? (ea + eb > 0 ? 1 : 0) : inf;
    case Ops::WHERE:
      if (ea > 0) return finish(d, std::abs(x[1].as_double() - x[2].as_double()) + std::max(eb, e[2]), rv);
      return x[0].truthy() ? eb : e[2];
    case Ops::TRUNC:
      return is_float ? truncation_bound(a, ea) : ea;
    case Ops::RECIP:
      if (std::abs(a) <= ea) return inf;
      return finish(d, ea / (std::abs(a) * (std::abs(a) - ea)), rv, library_ulps(op));
    case Ops::FDIV:
      if (std::abs(b) <= eb) return inf;
      return finish(d, (ea + std::abs(rv) * eb) / (std::abs(b) - eb), rv, library_ulps(op));
    case Ops::SQRT:
      if (a < ea) return inf;  // the kernel's operand may be negative: NaN
      return finish(d, ea == 0 ? 0 : ea / (std::sqrt(a) + std::sqrt(a - ea)), rv, library_ulps(op));
    case Ops::EXP2:
      return finish(d, std::abs(rv) * std::expm1(ea * std::log(2.0)), rv, library_ulps(op));
    case Ops::LOG2:
      if (a <= ea) return ea == 0 ? finish(d, 0, rv, library_ulps(op)) : inf;
      return finish(d, ea == 0 ? 0 : std::log2(a / (a - ea)), rv, library_ulps(op));
    case Ops::SIN:
      return finish(d, std::min(ea, 2.0), rv, library_ulps(op));
    case Ops::POW:
      if (a <= 0 && (ea > 0 || eb > 0)) return inf;
      return finish(d, a <= 0 ? 0 : std::abs(rv) * (std::abs(b / a) * ea + std::abs(std::log(a)) * eb), rv,
                    library_ulps(op));
    case Ops::CAST:
      if (d.is_bool()) return from.is_float() ? (uncertain_order(a, 0, ea, 0) ? 1 : 0) : (ea > 0 ? 1 : 0);
      if (!is_float) return from.is_float() ? truncation_bound(a, ea) : ea;
      // bool or integer to float: exact up to the float's precision; float to a narrower float
      // rounds; to a wider or equal one it is exact.
      if (from.is_float() && format_of(d).precision >= format_of(from).precision) return ea;
      return finish(d, ea, rv);
    default:  // IDIV, MOD, shifts, BITCAST, THREEFRY of an inexact value: anything may come out
      return is_float ? finish(d, ea + eb, rv) : inf;
  }
}

}  // namespace tunebed
