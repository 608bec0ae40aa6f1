// HostBuffer: the bytes of one buffer in host memory, with their dtype. It is the neutral currency
// between the layers that produce data (the Tensor front end's rand, .npy files) and those that
// consume it (the reference interpreter, later the runtimes): C order, native little-endian
// layout, one element of `dtype` after another. The shape lives with whoever interprets the data.
//
// Elements are read and written as double (floats) or int64 (integers and bool): float16 and
// bfloat16 go through float32 with round-to-nearest-even, integers wrap to the dtype's width.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "core/ir/dtype.hpp"

namespace tunebed {

struct HostBuffer {
  DType dtype;
  std::vector<std::byte> bytes;

  HostBuffer() = default;
  HostBuffer(DType dtype, int64_t numel);  // zero-filled; throws for void, pointer or vector dtypes

  int64_t numel() const { return static_cast<int64_t>(bytes.size()) / dtype.itemsize(); }
  // Whether element I exists: numel() without its division, as the interpreters ask per element.
  bool holds(int64_t i) const {
    return i >= 0 && static_cast<uint64_t>(i) < bytes.size() &&
           (static_cast<uint64_t>(i) + 1) * static_cast<uint64_t>(dtype.itemsize()) <= bytes.size();
  }

  double get_float(int64_t i) const {  // any dtype, as a double; float64 inline (an exact run's)
    if (dtype == dtypes::float64 && holds(i)) {
      double v;
      std::memcpy(&v, bytes.data() + i * sizeof v, sizeof v);
      return v;
    }
    return get_any_float(i);
  }
  int64_t get_int(int64_t i) const;     // integers and bool exactly; floats truncate (saturating)
  void set_float(int64_t i, double v);  // rounds floats; integers truncate as a C cast would (saturating)
  void set_int(int64_t i, int64_t v);   // wraps integers, exact for floats up to their precision

  bool operator==(const HostBuffer&) const = default;

 private:
  double get_any_float(int64_t i) const;
};

// The host data of the BUFFER UOps of a tensor graph, keyed by the id of each BUFFER's UNIQUE
// source. Ordered, so anything printed from it comes out the same way every run. Buffers are
// shared: an ASSIGN that is realized writes into the buffer every holder sees.
using BufferData = std::map<int64_t, std::shared_ptr<HostBuffer>>;

// float16 / bfloat16 bit patterns, exactly (NaN and infinities included).
uint16_t float_to_half_bits(float f);
float half_bits_to_float(uint16_t h);
uint16_t float_to_bfloat16_bits(float f);
float bfloat16_bits_to_float(uint16_t b);

}  // namespace tunebed
