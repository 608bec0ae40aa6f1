// DType: the element type of a UOp. A small value type: a scalar kind, a vector width, and for
// pointers the address space and the buffer size in elements. Follows tinygrad's dtype.py:
// `float32.vec(4)` is a 4-wide vector, `float32.ptr(16)` a global pointer to 16 floats.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tunebed {

enum class Scalar : uint8_t {
  Void, Bool, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64,
  Float16, BFloat16, Float32, Float64,
};
inline constexpr int kNumScalars = 14;
// Bytes of one scalar, by Scalar.
inline constexpr int kScalarItemsize[kNumScalars] = {0, 1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8};

enum class AddrSpace : uint8_t { Global, Local, Reg };

struct DType {
  Scalar scalar = Scalar::Void;
  uint16_t count = 1;      // vector width of the element (float4 has count 4)
  bool ptr = false;        // a pointer to `count`-wide elements
  AddrSpace addrspace = AddrSpace::Global;
  uint16_t v = 1;          // vector width of the pointer itself (tinygrad's PtrDType.v)
  int64_t size = -1;       // pointers: buffer size in elements, -1 = unknown

  constexpr DType() = default;
  constexpr DType(Scalar s) : scalar(s) {}  // NOLINT: implicit, so `Scalar::Float32` reads as a dtype

  DType vec(int n) const;                      // a vector of n scalars (n == 1: itself)
  DType ptr_to(int64_t size = -1, AddrSpace a = AddrSpace::Global) const;
  DType base() const;                          // the pointee of a pointer, itself otherwise
  DType scalar_type() const { return DType(scalar); }
  DType with_v(int n) const;                   // pointer vectorised n times

  int itemsize() const { return scalar_itemsize() * count; }  // bytes of one element (vector included)
  int scalar_itemsize() const { return kScalarItemsize[static_cast<int>(scalar)]; }
  int vcount() const { return ptr ? v : count; }
  int priority() const;                        // promotion order, as tinygrad

  // Inline: the interpreters ask these per element.
  bool is_float() const {
    return !ptr && (scalar == Scalar::Float16 || scalar == Scalar::BFloat16 || scalar == Scalar::Float32 ||
                    scalar == Scalar::Float64);
  }
  bool is_int() const { return !ptr && scalar != Scalar::Void && scalar != Scalar::Bool && !is_float(); }  // not bool
  bool is_unsigned() const {
    return !ptr && (scalar == Scalar::UInt8 || scalar == Scalar::UInt16 || scalar == Scalar::UInt32 ||
                    scalar == Scalar::UInt64);
  }
  bool is_bool() const { return scalar == Scalar::Bool && !ptr; }
  bool is_void() const { return scalar == Scalar::Void && !ptr; }

  // The smallest and largest finite values (floats: ±inf), as doubles and as integers.
  double min_value() const;
  double max_value() const;
  int64_t int_min() const;
  int64_t int_max() const;

  friend bool operator==(const DType&, const DType&) = default;
};

namespace dtypes {
inline constexpr DType void_{Scalar::Void}, bool_{Scalar::Bool};
inline constexpr DType int8{Scalar::Int8}, int16{Scalar::Int16}, int32{Scalar::Int32}, int64{Scalar::Int64};
inline constexpr DType uint8{Scalar::UInt8}, uint16{Scalar::UInt16}, uint32{Scalar::UInt32}, uint64{Scalar::UInt64};
inline constexpr DType float16{Scalar::Float16}, bfloat16{Scalar::BFloat16};
inline constexpr DType float32{Scalar::Float32}, float64{Scalar::Float64};
inline constexpr DType index = int32;  // the dtype of index arithmetic
}  // namespace dtypes

std::string_view scalar_name(Scalar s);                     // "float32"
std::optional<Scalar> scalar_from_name(std::string_view);    // also accepts tinygrad's aliases (float, half, int, ...)
std::string to_string(const DType& d);                       // "float32", "float32.vec(4)", "float32.ptr(16)"

// tinygrad's promotion lattice: the least dtype both a and b convert to without loss.
DType least_upper_dtype(const DType& a, const DType& b);

// Truncate a value to what the dtype holds (integer wraparound, float rounding, bool).
int64_t wrap_int(int64_t x, const DType& d);
// A float to an integer as a C cast, made total: truncate, NaN -> 0, saturate to int64 (C leaves
// out-of-range conversions undefined). The caller wraps to a narrower integer.
int64_t float_to_int(double v);
// Round to nearest even into a narrower float (float64 and non-floats: unchanged). Inline for the
// float32 and float64 an exact run rounds into per op; the 16-bit formats are done in full.
double round_to_half_or_bfloat16(double x, const DType& d);
inline double round_float(double x, const DType& d) {
  if (d.scalar == Scalar::Float32) return static_cast<float>(x);
  if (d.scalar == Scalar::Float16 || d.scalar == Scalar::BFloat16) return round_to_half_or_bfloat16(x, d);
  return x;
}

size_t hash_value(const DType& d);

}  // namespace tunebed
