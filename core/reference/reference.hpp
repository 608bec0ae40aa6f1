// The reference interpreter: the oracle every compiled kernel is checked against.
//
// It evaluates a tensor-level UOp graph (the convention of core/tensor/README.md) in the most
// direct way there is: every node becomes a dense row-major Array; movement ops move elements by
// explicit index arithmetic; elementwise ops, reductions and contractions are Eigen expressions
// over those arrays. It shares no code with core/shape, schedule, opt or codegen (CMake checks
// that), so a bug there cannot hide behind the same bug here.
//
// Numerics: floats are held as double and rounded to their dtype after every node (float16 and
// bfloat16 go through float32, round to nearest even); integers are held as int64 and wrap to
// their dtype after every node; bool is 0/1. A sum (REDUCE_AXIS ADD) accumulates in double or in
// 64-bit wrapping integers and is rounded once. A sum of products (a matmul or a convolution:
// REDUCE_AXIS ADD over a MUL of two expanded operands) runs as a batched Eigen matrix product on the
// unexpanded operands; its products are exact (not rounded to the MUL's dtype), as a tensor core's.
// Integer division or modulo by zero and shifts out of range are errors, not values.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/ir/host_buffer.hpp"
#include "core/ir/uop.hpp"

namespace tunebed::reference {

using Shape = std::vector<int64_t>;

// A graph the reference cannot evaluate: the message names the op and what was wrong with it.
struct ReferenceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One materialised node. Exactly one of `f` (float dtypes) and `i` (integers, bool) holds data.
struct Array {
  DType dtype;
  Shape shape;
  std::vector<double> f;
  std::vector<int64_t> i;

  int64_t numel() const;
  double as_double(int64_t k) const { return dtype.is_float() ? f[k] : static_cast<double>(i[k]); }
};

Array from_host(const HostBuffer& data, const Shape& shape);
HostBuffer to_host(const Array& a);

struct Evaluation {
  std::vector<Array> outputs;                          // one per requested output, in order
  std::vector<std::pair<int64_t, HostBuffer>> writes;  // ASSIGNs: buffer id -> its new contents
};

// Evaluates the graphs `outputs` share, reading BUFFER data from `buffers` (keyed by UNIQUE id).
// Reads see the buffers as they were before the call; the ASSIGN writes are returned, not applied.
Evaluation evaluate(const std::vector<UOp>& outputs, const BufferData& buffers);
Array evaluate(const UOp& output, const BufferData& buffers);

}  // namespace tunebed::reference
