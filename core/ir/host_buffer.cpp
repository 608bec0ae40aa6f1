#include "core/ir/host_buffer.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace tunebed {

uint16_t float_to_half_bits(float f) {
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  if (std::isnan(f)) return sign | 0x7e00;
  const double r = round_float(std::fabs(f), dtypes::float16);  // exactly representable from here on
  if (std::isinf(r)) return sign | 0x7c00;
  if (r == 0) return sign;
  if (r < 0x1p-14) return sign | static_cast<uint16_t>(r / 0x1p-24);  // subnormal: a multiple of 2^-24
  int e;
  const double m = std::frexp(r, &e);  // r = m * 2^e, m in [0.5, 1): biased exponent e - 1 + 15
  return sign | static_cast<uint16_t>((e + 14) << 10) | static_cast<uint16_t>((m * 2 - 1) * 1024);
}

float half_bits_to_float(uint16_t h) {
  const float sign = (h & 0x8000) ? -1.0f : 1.0f;
  const int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  if (exponent == 0x1f) return mantissa ? std::numeric_limits<float>::quiet_NaN() : sign * INFINITY;
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -24);
  return sign * std::ldexp(1.0f + mantissa / 1024.0f, exponent - 15);
}

uint16_t float_to_bfloat16_bits(float f) {
  if (std::isnan(f)) return (std::signbit(f) ? 0x8000 : 0) | 0x7fc0;
  const float r = static_cast<float>(round_float(f, dtypes::bfloat16));  // low 16 bits now zero
  return static_cast<uint16_t>(std::bit_cast<uint32_t>(r) >> 16);
}

float bfloat16_bits_to_float(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

namespace {

template <class T>
T load(const HostBuffer& b, int64_t i) {
  T v;
  std::memcpy(&v, b.bytes.data() + i * sizeof(T), sizeof(T));
  return v;
}

template <class T>
void store(HostBuffer& b, int64_t i, T v) {
  std::memcpy(b.bytes.data() + i * sizeof(T), &v, sizeof(T));
}

void check_index(const HostBuffer& b, int64_t i) {
  if (!b.holds(i)) [[unlikely]]
    throw std::out_of_range("HostBuffer index " + std::to_string(i) + " out of range for " +
                            std::to_string(b.numel()) + " elements of " + to_string(b.dtype));
}

}  // namespace

HostBuffer::HostBuffer(DType d, int64_t numel) : dtype(d) {
  if (d.ptr || d.count != 1 || d.is_void())
    throw std::invalid_argument("HostBuffer of dtype " + to_string(d) + ": only scalar dtypes hold data");
  if (numel < 0) throw std::invalid_argument("HostBuffer with negative size " + std::to_string(numel));
  bytes.resize(static_cast<size_t>(numel) * d.itemsize());
}

double HostBuffer::get_any_float(int64_t i) const {
  check_index(*this, i);
  switch (dtype.scalar) {
    case Scalar::Float16:
      return half_bits_to_float(load<uint16_t>(*this, i));
    case Scalar::BFloat16:
      return bfloat16_bits_to_float(load<uint16_t>(*this, i));
    case Scalar::Float32:
      return load<float>(*this, i);
    case Scalar::Float64:
      return load<double>(*this, i);
    case Scalar::UInt64:
      return static_cast<double>(load<uint64_t>(*this, i));
    default:
      return static_cast<double>(get_int(i));
  }
}

int64_t HostBuffer::get_int(int64_t i) const {
  check_index(*this, i);
  switch (dtype.scalar) {
    case Scalar::Bool:
      return load<uint8_t>(*this, i) != 0;
    case Scalar::Int8:
      return load<int8_t>(*this, i);
    case Scalar::Int16:
      return load<int16_t>(*this, i);
    case Scalar::Int32:
      return load<int32_t>(*this, i);
    case Scalar::Int64:
      return load<int64_t>(*this, i);
    case Scalar::UInt8:
      return load<uint8_t>(*this, i);
    case Scalar::UInt16:
      return load<uint16_t>(*this, i);
    case Scalar::UInt32:
      return load<uint32_t>(*this, i);
    case Scalar::UInt64:
      return static_cast<int64_t>(load<uint64_t>(*this, i));  // the same 64 bits
    default:
      return float_to_int(get_float(i));
  }
}

void HostBuffer::set_float(int64_t i, double v) {
  check_index(*this, i);
  switch (dtype.scalar) {
    case Scalar::Float16:
      return store(*this, i, float_to_half_bits(static_cast<float>(v)));
    case Scalar::BFloat16:
      return store(*this, i, float_to_bfloat16_bits(static_cast<float>(v)));
    case Scalar::Float32:
      return store(*this, i, static_cast<float>(v));
    case Scalar::Float64:
      return store(*this, i, v);
    case Scalar::Bool:
      return set_int(i, v != 0);
    default:
      return set_int(i, float_to_int(v));
  }
}

void HostBuffer::set_int(int64_t i, int64_t v) {
  check_index(*this, i);
  switch (dtype.scalar) {
    case Scalar::Bool:
      return store<uint8_t>(*this, i, v != 0);
    case Scalar::Int8:
      return store(*this, i, static_cast<int8_t>(v));
    case Scalar::Int16:
      return store(*this, i, static_cast<int16_t>(v));
    case Scalar::Int32:
      return store(*this, i, static_cast<int32_t>(v));
    case Scalar::Int64:
      return store(*this, i, v);
    case Scalar::UInt8:
      return store(*this, i, static_cast<uint8_t>(v));
    case Scalar::UInt16:
      return store(*this, i, static_cast<uint16_t>(v));
    case Scalar::UInt32:
      return store(*this, i, static_cast<uint32_t>(v));
    case Scalar::UInt64:
      return store(*this, i, static_cast<uint64_t>(v));
    default:
      return set_float(i, static_cast<double>(v));
  }
}

}  // namespace tunebed
