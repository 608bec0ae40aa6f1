#include "core/engine/check.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

namespace tunebed {

// Summation order differs between candidates (UNROLL, GROUP and THREAD all reassociate a reduce,
// FMA contraction rounds once instead of twice), so floats get a tolerance scaled to their
// precision: a 512-long float32 dot product of values in [-1, 1) differs by ~1e-4 between orders.
Tolerance tolerance_for(DType dtype) {
  switch (dtype.scalar) {
    case Scalar::Float64:
      return {1e-9, 1e-9};
    case Scalar::Float32:
      return {1e-3, 1e-3};
    case Scalar::Float16:
      return {1e-2, 1e-2};
    case Scalar::BFloat16:
      return {5e-2, 5e-2};
    default:
      return {0, 0};
  }
}

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

}  // namespace

Verdict compare_output(const HostBuffer& out, const HostBuffer& ref) {
  Verdict v;
  if (out.dtype != ref.dtype || out.numel() != ref.numel()) {
    v.ok = false;
    v.max_error = INFINITY;
    v.message = "output is " + std::to_string(out.numel()) + " x " + to_string(out.dtype) +
                ", reference is " + std::to_string(ref.numel()) + " x " + to_string(ref.dtype);
    return v;
  }
  const Tolerance tol = tolerance_for(ref.dtype);
  const bool is_float = ref.dtype.is_float();
  int64_t first_bad = -1;
  for (int64_t i = 0; i < ref.numel(); i++) {
    double o = is_float ? out.get_float(i) : static_cast<double>(out.get_int(i));
    double r = is_float ? ref.get_float(i) : static_cast<double>(ref.get_int(i));
    bool bad;
    double err;
    if (std::isnan(r) || std::isinf(r)) {
      // NaN matches NaN, an infinity only itself.
      bad = std::isnan(r) ? !std::isnan(o) : o != r;
      err = bad ? INFINITY : 0;
    } else if (!std::isfinite(o)) {
      bad = true, err = INFINITY;
    } else {
      err = std::abs(o - r);
      bad = err > tol.atol + tol.rtol * std::abs(r);
    }
    v.max_error = std::max(v.max_error, err);
    if (bad && first_bad < 0) {
      first_bad = i;
      v.message = "element " + std::to_string(i) + ": " + number(o) + " vs reference " + number(r);
    }
  }
  if (first_bad >= 0) {
    v.ok = false;
    v.message += " (max error " + number(v.max_error) + ", tolerance atol " + number(tol.atol) + " rtol " +
                 number(tol.rtol) + ")";
  }
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
