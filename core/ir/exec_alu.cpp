#include "core/ir/exec_alu.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "core/ir/uop.hpp"

namespace tunebed {

namespace {

using i128 = __int128;

[[noreturn]] void unsupported(Ops op, const DType& d) {
  throw std::invalid_argument("exec_alu: " + std::string(op_name(op)) + " is not defined on " + to_string(d));
}

int bits_of(const DType& d) { return d.is_bool() ? 1 : d.scalar_itemsize() * 8; }

// The integer as a mathematical value: uint64 read as unsigned, everything else as stored.
i128 wide(const ConstValue& v) {
  if (v.dtype.scalar == Scalar::UInt64) return static_cast<i128>(static_cast<uint64_t>(v.i));
  return v.i;
}

// Two's complement wraparound of a 128-bit value to the dtype.
int64_t wrap(i128 v, const DType& d) { return wrap_int(static_cast<int64_t>(static_cast<uint64_t>(v)), d); }

// C's truncating division and remainder, with x/0 == 0 and x%0 == x (see the header).
i128 cdiv(i128 a, i128 b) { return b == 0 ? 0 : a / b; }
i128 cmod(i128 a, i128 b) { return b == 0 ? a : a % b; }

i128 shift(Ops op, i128 a, i128 amount, const DType& d) {
  int width = bits_of(d);
  bool negative = a < 0;
  if (amount < 0 || amount >= width) return op == Ops::SHL ? 0 : (negative ? -1 : 0);
  int s = static_cast<int>(amount);
  if (op == Ops::SHL) return static_cast<i128>(static_cast<unsigned __int128>(a) << s);
  return a >> s;  // arithmetic on the sign-extended value; unsigned values are non-negative
}

i128 int_pow(i128 base, i128 e, const DType& d) {
  if (e < 0) return base == 1 ? 1 : base == -1 ? ((e & 1) ? -1 : 1) : 0;
  // Square and multiply, wrapping at every step so the 128-bit product never overflows.
  i128 result = 1;
  for (; e > 0; e >>= 1) {
    if (e & 1) result = wrap(result * base, d);
    base = wrap(base * base, d);
  }
  return result;
}

// IEEE binary16 bit patterns (the value must already be a half).
uint16_t half_bits(double v) {
  float f = static_cast<float>(v);
  uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  float a = std::fabs(f);
  if (std::isnan(f)) return sign | 0x7e00;
  if (std::isinf(f)) return sign | 0x7c00;
  if (a == 0) return sign;
  int e;
  float m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  if (e - 1 < -14) return sign | static_cast<uint16_t>(std::ldexp(a, 24));  // subnormal
  return sign | static_cast<uint16_t>((e + 14) << 10) | static_cast<uint16_t>(std::ldexp(m, 11) - 1024);
}

double half_value(uint16_t b) {
  double sign = (b & 0x8000) ? -1 : 1;
  int e = (b >> 10) & 0x1f, m = b & 0x3ff;
  if (e == 0x1f) return m ? std::numeric_limits<double>::quiet_NaN() : sign * INFINITY;
  if (e == 0) return sign * std::ldexp(m, -24);
  return sign * std::ldexp(m + 1024, e - 25);
}

uint64_t to_bits(const ConstValue& v) {
  switch (v.dtype.scalar) {
    case Scalar::Float64: return std::bit_cast<uint64_t>(v.f);
    case Scalar::Float32: return std::bit_cast<uint32_t>(static_cast<float>(v.f));
    case Scalar::BFloat16: return std::bit_cast<uint32_t>(static_cast<float>(v.f)) >> 16;
    case Scalar::Float16: return half_bits(v.f);
    default: return static_cast<uint64_t>(v.i) & (bits_of(v.dtype) == 64 ? ~uint64_t{0} : (uint64_t{1} << bits_of(v.dtype)) - 1);
  }
}

ConstValue from_bits(uint64_t b, const DType& d) {
  switch (d.scalar) {
    case Scalar::Float64: return ConstValue::real(d, std::bit_cast<double>(b));
    case Scalar::Float32: return ConstValue::real(d, std::bit_cast<float>(static_cast<uint32_t>(b)));
    case Scalar::BFloat16: return ConstValue::real(d, std::bit_cast<float>(static_cast<uint32_t>(b << 16)));
    case Scalar::Float16: return ConstValue::real(d, half_value(static_cast<uint16_t>(b)));
    default: return ConstValue::integer(d, static_cast<int64_t>(b));
  }
}

ConstValue cast(const ConstValue& x, const DType& to) {
  if (to.is_float()) return ConstValue::real(to, x.dtype.is_float() ? x.f : static_cast<double>(wide(x)));
  if (to.is_bool()) return ConstValue::integer(to, x.truthy());
  return ConstValue::integer(to, x.dtype.is_float() ? float_to_int(x.f) : x.i);
}

bool compare(Ops op, const ConstValue& a, const ConstValue& b) {
  if (a.dtype.is_float() || b.dtype.is_float()) {
    double x = a.as_double(), y = b.as_double();
    return op == Ops::CMPLT ? x < y : op == Ops::CMPEQ ? x == y : x != y;  // NaN: only != holds
  }
  i128 x = wide(a), y = wide(b);
  return op == Ops::CMPLT ? x < y : op == Ops::CMPEQ ? x == y : x != y;
}

ConstValue float_op(Ops op, const DType& d, std::span<const ConstValue> o) {
  auto v = [&](size_t k) { return o[k].as_double(); };
  double r;
  switch (op) {
    case Ops::NEG: r = -v(0); break;
    case Ops::EXP2: r = std::exp2(v(0)); break;
    case Ops::LOG2: r = std::log2(v(0)); break;  // log2(0) = -inf, log2(<0) = NaN, as tinygrad
    case Ops::SIN: r = std::sin(v(0)); break;
    case Ops::SQRT: r = std::sqrt(v(0)); break;
    case Ops::RECIP: r = 1.0 / v(0); break;
    case Ops::TRUNC: r = std::trunc(v(0)); break;
    case Ops::ADD: r = v(0) + v(1); break;
    case Ops::SUB: r = v(0) - v(1); break;
    case Ops::MUL: r = v(0) * v(1); break;
    case Ops::FDIV: r = v(0) / v(1); break;
    case Ops::POW: r = std::pow(v(0), v(1)); break;
    // NaN propagates through MAX (IEEE maximum, not fmax).
    case Ops::MAX: r = std::isnan(v(0)) || std::isnan(v(1)) ? NAN : std::max(v(0), v(1)); break;
    case Ops::MULACC: r = v(0) * v(1) + v(2); break;
    default: unsupported(op, d);
  }
  return ConstValue::real(d, r);
}

ConstValue int_op(Ops op, const DType& d, std::span<const ConstValue> o) {
  auto v = [&](size_t k) { return wide(o[k]); };
  i128 r;
  switch (op) {
    case Ops::NEG: r = -v(0); break;
    case Ops::TRUNC: r = v(0); break;
    case Ops::ADD: r = v(0) + v(1); break;
    case Ops::SUB: r = v(0) - v(1); break;
    case Ops::MUL: r = static_cast<i128>(static_cast<unsigned __int128>(v(0)) * static_cast<unsigned __int128>(v(1))); break;
    case Ops::IDIV: r = cdiv(v(0), v(1)); break;
    case Ops::MOD: r = cmod(v(0), v(1)); break;
    case Ops::MAX: r = std::max(v(0), v(1)); break;
    case Ops::AND: r = v(0) & v(1); break;
    case Ops::OR: r = v(0) | v(1); break;
    case Ops::XOR: r = v(0) ^ v(1); break;
    case Ops::SHL:
    case Ops::SHR: r = shift(op, v(0), v(1), d); break;
    case Ops::POW: r = int_pow(v(0), v(1), d); break;
    case Ops::MULACC: r = static_cast<i128>(static_cast<unsigned __int128>(v(0)) * static_cast<unsigned __int128>(v(1))) + v(2); break;
    default: unsupported(op, d);
  }
  return ConstValue::integer(d, wrap(r, d));
}

}  // namespace

ConstValue ConstValue::integer(DType d, int64_t v) {
  if (d.is_float()) return real(d, static_cast<double>(v));
  return ConstValue{d, wrap_int(v, d), 0};
}

ConstValue ConstValue::of(const UOp& c) {
  if (!c.is_const() || c.dtype().count != 1)
    throw std::invalid_argument("ConstValue::of needs a scalar CONST, got " + std::string(op_name(c.op())));
  if (c.dtype().is_float()) return real(c.dtype(), c.const_value());
  return integer(c.dtype(), c.const_int());
}

UOp ConstValue::to_uop() const { return dtype.is_float() ? UOp::const_float(dtype, f) : UOp::const_int(dtype, i); }

double ConstValue::as_double() const {
  if (dtype.is_float()) return f;
  return dtype.scalar == Scalar::UInt64 ? static_cast<double>(static_cast<uint64_t>(i)) : static_cast<double>(i);
}

std::string ConstValue::to_string() const {
  std::ostringstream s;
  if (dtype.is_float()) s << f;
  else if (dtype.is_bool()) s << (i ? "true" : "false");
  else if (dtype.scalar == Scalar::UInt64) s << static_cast<uint64_t>(i);
  else s << i;
  return s.str() + ":" + tunebed::to_string(dtype);
}

bool ConstValue::operator==(const ConstValue& o) const {
  if (!(dtype == o.dtype)) return false;
  if (!dtype.is_float()) return i == o.i;
  return std::bit_cast<uint64_t>(f) == std::bit_cast<uint64_t>(o.f) || (std::isnan(f) && std::isnan(o.f));
}

ConstValue exec_alu(Ops op, DType dtype, std::span<const ConstValue> operands) {
  size_t arity = GroupOp::Unary.contains(op) || op == Ops::CAST || op == Ops::BITCAST ? 1
                 : GroupOp::Ternary.contains(op)                                    ? 3
                 : GroupOp::Binary.contains(op)                                     ? 2
                                                                                    : 0;
  if (arity == 0 || op == Ops::THREEFRY) unsupported(op, dtype);
  if (operands.size() != arity)
    throw std::invalid_argument("exec_alu: " + std::string(op_name(op)) + " takes " + std::to_string(arity) +
                                " operands, got " + std::to_string(operands.size()));
  if (dtype.count != 1 || dtype.ptr) unsupported(op, dtype);
  switch (op) {
    case Ops::CAST: return cast(operands[0], dtype);
    case Ops::BITCAST:
      if (operands[0].dtype.itemsize() != dtype.itemsize()) unsupported(op, dtype);
      return from_bits(to_bits(operands[0]), dtype);
    case Ops::CMPLT:
    case Ops::CMPNE:
    case Ops::CMPEQ: return ConstValue::integer(dtype, compare(op, operands[0], operands[1]));
    case Ops::WHERE: return cast(operands[0].truthy() ? operands[1] : operands[2], dtype);
    default: break;
  }
  if (dtype.is_float()) return float_op(op, dtype, operands);
  if (dtype.is_int() || dtype.is_bool()) {
    // Integer ops on float operands would silently truncate: they are a caller's bug.
    for (const ConstValue& o : operands)
      if (o.dtype.is_float()) unsupported(op, o.dtype);
    if (!dtype.is_bool() || op == Ops::ADD || op == Ops::MUL || op == Ops::MAX || op == Ops::AND || op == Ops::OR ||
        op == Ops::XOR || op == Ops::NEG)
      return int_op(op, dtype, operands);
  }
  unsupported(op, dtype);
}

}  // namespace tunebed
