#include "core/ir/dtype.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "core/ir/hash.hpp"

namespace tunebed {

namespace {

struct ScalarInfo {
  std::string_view name;
  int priority;
};

// Priorities follow tinygrad's dtypes (fp8 left out).
constexpr std::array<ScalarInfo, kNumScalars> kInfo = {{
    {"void", -1},    {"bool", 0},     {"int8", 1},      {"int16", 3},    {"int32", 5},
    {"int64", 7},    {"uint8", 2},    {"uint16", 4},    {"uint32", 6},   {"uint64", 8},
    {"float16", 11}, {"bfloat16", 12}, {"float32", 13}, {"float64", 14},
}};

const ScalarInfo& info(Scalar s) { return kInfo[static_cast<int>(s)]; }

// tinygrad's promo_lattice: each dtype and the dtypes it promotes to directly.
std::vector<Scalar> promotes_to(Scalar s) {
  using S = Scalar;
  switch (s) {
    case S::Bool: return {S::Int8, S::UInt8};
    case S::Int8: return {S::Int16};
    case S::Int16: return {S::Int32};
    case S::Int32: return {S::Int64};
    case S::Int64: return {S::Float16, S::BFloat16};
    case S::UInt8: return {S::Int16, S::UInt16};
    case S::UInt16: return {S::Int32, S::UInt32};
    case S::UInt32: return {S::Int64, S::UInt64};
    case S::UInt64: return {S::Float16, S::BFloat16};
    case S::Float16: return {S::Float32};
    case S::BFloat16: return {S::Float32};
    case S::Float32: return {S::Float64};
    default: return {};
  }
}

uint32_t ancestors(Scalar s) {
  uint32_t set = 1u << static_cast<int>(s);
  for (Scalar p : promotes_to(s)) set |= ancestors(p);
  return set;
}

// Round to nearest even keeping `bits` significant bits, with subnormals below 2^min_exp (the
// smallest normal) and overflow to infinity from half-way above the largest finite value: IEEE
// binary16 and bfloat16. Done once, in double: rounding through float32 first would round twice
// and turn values just above a tie into ties.
double round_to_bits(double x, int bits, int min_exp, double overflow) {
  if (std::isnan(x) || std::isinf(x)) return x;
  double a = std::fabs(x);
  if (a >= overflow) return std::copysign(std::numeric_limits<double>::infinity(), x);
  int e;
  std::frexp(a, &e);  // a = m * 2^e with m in [0.5, 1)
  double quantum = std::ldexp(1.0, std::max(e, min_exp + 1) - bits);
  return std::copysign(std::nearbyint(a / quantum) * quantum, x);
}

double round_to_half(double x) { return round_to_bits(x, 11, -14, 65520.0); }
double round_to_bfloat16(double x) {
  return round_to_bits(x, 8, -126, std::ldexp(2.0 - std::ldexp(1.0, -8), 127));
}

}  // namespace

DType DType::vec(int n) const {
  if (ptr) throw std::invalid_argument("vec of a pointer dtype " + to_string(*this) + "; use with_v");
  if (count != 1 && n != 1) throw std::invalid_argument("vec of a vector dtype " + to_string(*this));
  if (n == 1 || scalar == Scalar::Void) return *this;
  DType d = *this;
  d.count = static_cast<uint16_t>(n);
  return d;
}

DType DType::ptr_to(int64_t sz, AddrSpace a) const {
  if (ptr) throw std::invalid_argument("pointer to a pointer dtype " + to_string(*this));
  DType d = *this;
  d.ptr = true;
  d.size = sz;
  d.addrspace = a;
  return d;
}

DType DType::base() const {
  if (!ptr) return *this;
  DType d(scalar);
  d.count = count;
  return d;
}

DType DType::with_v(int n) const {
  if (!ptr) return vec(n);
  DType d = *this;
  d.v = static_cast<uint16_t>(n);
  return d;
}

int DType::priority() const { return info(scalar).priority; }


int64_t DType::int_min() const {
  if (is_bool()) return 0;
  if (is_unsigned()) return 0;
  if (is_int()) return scalar_itemsize() == 8 ? std::numeric_limits<int64_t>::min()
                                                  : -(int64_t{1} << (scalar_itemsize() * 8 - 1));
  return std::numeric_limits<int64_t>::min();
}

int64_t DType::int_max() const {
  if (is_bool()) return 1;
  // uint64's true max does not fit int64; range analysis treats it as int64 max.
  if (is_unsigned()) return scalar_itemsize() == 8 ? std::numeric_limits<int64_t>::max()
                                                       : (int64_t{1} << (scalar_itemsize() * 8)) - 1;
  if (is_int()) return scalar_itemsize() == 8 ? std::numeric_limits<int64_t>::max()
                                                  : (int64_t{1} << (scalar_itemsize() * 8 - 1)) - 1;
  return std::numeric_limits<int64_t>::max();
}

double DType::min_value() const {
  if (is_float()) return -std::numeric_limits<double>::infinity();
  if (scalar == Scalar::UInt64) return 0;
  return static_cast<double>(int_min());
}
double DType::max_value() const {
  if (is_float()) return std::numeric_limits<double>::infinity();
  if (scalar == Scalar::UInt64) return 18446744073709551615.0;
  return static_cast<double>(int_max());
}

std::string_view scalar_name(Scalar s) { return info(s).name; }

std::optional<Scalar> scalar_from_name(std::string_view n) {
  for (int i = 0; i < kNumScalars; i++)
    if (kInfo[i].name == n) return static_cast<Scalar>(i);
  // tinygrad's C-style aliases, so its dtype names parse too.
  struct Alias { std::string_view name; Scalar s; };
  static constexpr Alias aliases[] = {
      {"char", Scalar::Int8},    {"short", Scalar::Int16},   {"int", Scalar::Int32},      {"long", Scalar::Int64},
      {"uchar", Scalar::UInt8},  {"ushort", Scalar::UInt16}, {"uint", Scalar::UInt32},    {"ulong", Scalar::UInt64},
      {"half", Scalar::Float16}, {"float", Scalar::Float32}, {"double", Scalar::Float64},
  };
  for (const Alias& a : aliases)
    if (a.name == n) return a.s;
  return std::nullopt;
}

std::string to_string(const DType& d) {
  std::string s(scalar_name(d.scalar));
  if (d.count != 1) s += ".vec(" + std::to_string(d.count) + ")";
  if (d.ptr) {
    s += ".ptr(" + std::to_string(d.size);
    if (d.addrspace == AddrSpace::Local) s += ",local";
    if (d.addrspace == AddrSpace::Reg) s += ",reg";
    s += ")";
    if (d.v != 1) s += ".vec(" + std::to_string(d.v) + ")";
  }
  return s;
}

DType least_upper_dtype(const DType& a, const DType& b) {
  if (a == b) return a;
  uint32_t common = ancestors(a.scalar) & ancestors(b.scalar);
  Scalar best = Scalar::Float64;
  for (int i = 0; i < kNumScalars; i++)
    if ((common >> i & 1u) && kInfo[i].priority < info(best).priority) best = static_cast<Scalar>(i);
  return DType(best);
}

int64_t wrap_int(int64_t x, const DType& d) {
  if (d.is_bool()) return x != 0;
  switch (d.scalar) {
    case Scalar::Int8: return static_cast<int8_t>(x);
    case Scalar::Int16: return static_cast<int16_t>(x);
    case Scalar::Int32: return static_cast<int32_t>(x);
    case Scalar::UInt8: return static_cast<uint8_t>(x);
    case Scalar::UInt16: return static_cast<uint16_t>(x);
    case Scalar::UInt32: return static_cast<uint32_t>(x);
    default: return x;
  }
}

int64_t float_to_int(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
  if (v <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

double round_to_half_or_bfloat16(double x, const DType& d) {
  return d.scalar == Scalar::Float16 ? round_to_half(x) : round_to_bfloat16(x);
}

size_t hash_value(const DType& d) {
  uint64_t h = hash_mix(static_cast<uint64_t>(d.scalar), d.count);
  h = hash_mix(h, (uint64_t{d.ptr} << 8) | static_cast<uint64_t>(d.addrspace));
  h = hash_mix(h, d.v);
  return hash_mix(h, static_cast<uint64_t>(d.size));
}

}  // namespace tunebed
