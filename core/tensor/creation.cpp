// Seeded random tensors. Their data is generated on the host into a fresh BUFFER (tinygrad draws
// threefry bits on the device instead; a host generator keeps the reference independent of it).
#include <cmath>
#include <numbers>

#include "core/tensor/graph.hpp"
#include "core/tensor/rng.hpp"
#include "core/tensor/tensor.hpp"

namespace tunebed {

namespace {

int64_t checked_numel(const Shape& shape, const char* op) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw ShapeError(std::string(op) + ": negative dimension in " + shape_to_string(shape));
    n *= d;
  }
  return n;
}

// Mantissa bits of each float dtype: rand draws k * 2^-bits, which every such dtype holds exactly,
// so rounding can never push a value up to 1.
int mantissa_bits(const DType& d) {
  switch (d.scalar) {
    case Scalar::Float16:
      return 10;
    case Scalar::BFloat16:
      return 7;
    case Scalar::Float32:
      return 23;
    default:
      return 52;
  }
}

}  // namespace

Tensor Tensor::rand(const Shape& shape, uint64_t seed, DType dtype) {
  if (!dtype.is_float()) throw ShapeError("rand: only float dtypes, got " + to_string(dtype));
  HostBuffer data(dtype, checked_numel(shape, "rand"));
  SplitMix64 rng(seed);
  for (int64_t k = 0; k < data.numel(); k++) data.set_float(k, rng.uniform(mantissa_bits(dtype)));
  return from_host(std::move(data), shape);
}

Tensor Tensor::randn(const Shape& shape, uint64_t seed, DType dtype) {
  if (!dtype.is_float()) throw ShapeError("randn: only float dtypes, got " + to_string(dtype));
  HostBuffer data(dtype, checked_numel(shape, "randn"));
  SplitMix64 rng(seed);
  // Box-Muller: u1 in (0, 1] keeps the log finite.
  for (int64_t k = 0; k < data.numel(); k++) {
    const double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();
    data.set_float(k, std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2));
  }
  return from_host(std::move(data), shape);
}

Tensor Tensor::randint(const Shape& shape, int64_t low, int64_t high, uint64_t seed, DType dtype) {
  if (dtype.is_float() || dtype.is_void())
    throw ShapeError("randint: only integer dtypes, got " + to_string(dtype));
  if (low >= high)
    throw ShapeError("randint: empty range [" + std::to_string(low) + ", " + std::to_string(high) + ")");
  HostBuffer data(dtype, checked_numel(shape, "randint"));
  SplitMix64 rng(seed);
  const uint64_t span = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  for (int64_t k = 0; k < data.numel(); k++) data.set_int(k, low + static_cast<int64_t>(rng.next() % span));
  return from_host(std::move(data), shape);
}

}  // namespace tunebed
