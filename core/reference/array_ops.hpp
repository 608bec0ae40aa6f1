// The reference's operations on materialised Arrays, one group per file: movement.cpp (index
// arithmetic), elementwise.cpp (ALU and CAST), reduce.cpp (REDUCE_AXIS and contractions).
// Internal to core/reference; every function checks its arguments and throws ReferenceError.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/reference/reference.hpp"

namespace tunebed::reference {

using Pairs = std::vector<std::pair<int64_t, int64_t>>;

int64_t prod(const Shape& s);
Shape strides_of(const Shape& s);  // row-major, in elements
std::string shape_str(const Shape& s);
[[noreturn]] void fail(Ops op, const std::string& msg);  // throws "OP: msg"

// An empty Array of `dtype` and `shape`, storage sized for it.
Array make_array(DType dtype, Shape shape);

Array reshape(const Array& a, const Shape& shape);
Array permute(const Array& a, const std::vector<int64_t>& order);
Array expand(const Array& a, const Shape& shape);
Array pad(const Array& a, const Pairs& padding);    // zeros outside
Array shrink(const Array& a, const Pairs& bounds);  // [start, end) per axis
Array flip(const Array& a, const std::vector<bool>& axes);

Array constant(DType dtype, const Arg& value);  // a 0-d array
Array cast(const Array& a, DType dtype);
Array alu(Ops op, DType out, const std::vector<const Array*>& srcs);

// REDUCE_AXIS (op, axes) keeping the reduced axes as 1.
Array reduce(const Array& a, Ops op, const std::vector<int64_t>& axes);
// REDUCE_AXIS ADD over p * q without materialising the product: p and q have the rank of the
// product, with 1 where they are broadcast. The result has dtype `out`.
Array contract(const Array& p, const Array& q, const Shape& full, const std::vector<int64_t>& axes,
               DType out);

}  // namespace tunebed::reference
