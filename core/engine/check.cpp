#include "core/engine/check.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <sstream>

namespace tunebed {

namespace {

std::string number(double v) {
  std::ostringstream s;
  s.precision(9);
  s << v;
  return s.str();
}

// Maps 4 random bits onto [1, 16] (unsigned) or [-8, 8] without 0 (signed).
int64_t nonzero_small_int(uint64_t bits4, bool is_unsigned) {
  const int64_t v = static_cast<int64_t>(bits4);
  if (is_unsigned) return v + 1;
  return v < 8 ? v - 8 : v - 7;
}

// The poison's bits (see poisoned()): in a float dtype a quiet NaN, payload 0x5a5a...; in a 32-
// or 64-bit integer 0x5a5a...; none in narrower integers and bool, whose every value is common.
std::optional<uint64_t> poison_bits(const DType& d) {
  switch (d.scalar) {
    case Scalar::Float16: return 0x7e5a;
    case Scalar::BFloat16: return 0x7fda;
    case Scalar::Float32: return 0x7fda5a5a;
    case Scalar::Float64: return 0x7ffda5a5a5a5a5a5;
    case Scalar::Int32:
    case Scalar::UInt32: return 0x5a5a5a5a;
    case Scalar::Int64:
    case Scalar::UInt64: return 0x5a5a5a5a5a5a5a5a;
    default: return std::nullopt;
  }
}

bool holds_bits(const HostBuffer& b, int64_t i, uint64_t bits) {
  const size_t item = static_cast<size_t>(b.dtype.itemsize());
  uint64_t v = 0;
  std::memcpy(&v, b.bytes.data() + static_cast<size_t>(i) * item, item);  // little-endian, as bits
  return v == bits;
}

}  // namespace

HostBuffer poisoned(DType dtype, int64_t n) {
  HostBuffer b(dtype, n);
  if (n == 0) return b;
  const size_t item = static_cast<size_t>(dtype.itemsize());
  if (const std::optional<uint64_t> bits = poison_bits(dtype))
    std::memcpy(b.bytes.data(), &*bits, item);
  else
    b.set_int(0, 1);
  // One element written, its bytes repeated: a per-element set is slow on large outputs.
  for (size_t filled = item; filled < b.bytes.size(); filled *= 2)
    std::memcpy(b.bytes.data() + filled, b.bytes.data(), std::min(filled, b.bytes.size() - filled));
  return b;
}

Verdict check_output(const HostBuffer& out, const Expected& want) {
  Verdict v;
  if (out.dtype != want.dtype || out.numel() != want.numel() ||
      want.bound.size() != static_cast<size_t>(want.numel())) {
    v.ok = false;
    v.max_error = INFINITY;
    v.message = "output is " + std::to_string(out.numel()) + " x " + to_string(out.dtype) + ", expected " +
                std::to_string(want.numel()) + " x " + to_string(want.dtype);
    return v;
  }
  const bool is_float = want.dtype.is_float();
  const std::optional<uint64_t> poison = poison_bits(want.dtype);
  for (int64_t i = 0; i < want.numel(); i++) {
    const double o = is_float ? out.get_float(i) : static_cast<double>(out.get_int(i));
    const double x =
        want.value.dtype.is_float() ? want.value.get_float(i) : static_cast<double>(want.value.get_int(i));
    const double bound = want.bound[static_cast<size_t>(i)];
    // An integer kernel can compute the poison's value; where the exact run says it did, it is
    // that value, not the poison. No arithmetic makes the NaN.
    if (poison && holds_bits(out, i, *poison) && (is_float || !(bound == 0 && o == x))) {
      v.max_error = INFINITY;
      if (v.ok)
        v.message = "element " + std::to_string(i) + " was never written (it still holds the poison " +
                    (is_float ? std::string("NaN") : number(o)) + ")";
      v.ok = false;
      continue;
    }
    if (!(bound < INFINITY)) {  // infinite, or NaN: an element the exact run did not sample
      v.unverified++;
      continue;
    }
    double err;
    if (std::isnan(x) || std::isinf(x))  // NaN matches NaN, an infinity only itself
      err = (std::isnan(x) ? std::isnan(o) : o == x) ? 0 : INFINITY;
    else
      err = std::isfinite(o) ? std::abs(o - x) : INFINITY;
    v.max_error = std::max(v.max_error, err);
    if (err > 0) v.worst_ratio = std::max(v.worst_ratio, bound > 0 ? err / bound : INFINITY);
    if (err > bound && v.ok) {
      v.ok = false;
      v.message = "element " + std::to_string(i) + ": " + number(o) + " vs exact " + number(x) + " (bound " +
                  number(bound) + ")";
    }
  }
  if (!v.ok)
    v.message += " (max error " + number(v.max_error) + ", " + number(v.worst_ratio) + "x its bound)";
  return v;
}

void fill_random(HostBuffer& buf, uint64_t seed) {
  // mt19937_64 is fully specified; converting its raw output by hand keeps the values the same
  // across standard libraries (their distributions are implementation-defined).
  std::mt19937_64 rng(seed);
  for (int64_t i = 0; i < buf.numel(); i++) {
    uint64_t x = rng();
    if (buf.dtype.is_float())
      buf.set_float(i, static_cast<double>(x >> 11) * 0x1.0p-52 - 1.0);
    else if (buf.dtype.is_bool())
      buf.set_int(i, static_cast<int64_t>(x >> 63));
    else  // never 0: a kernel that divides by an input would die of SIGFPE on 1 draw in 16
      buf.set_int(i, nonzero_small_int(x >> 60, buf.dtype.is_unsigned()));
  }
}

}  // namespace tunebed
