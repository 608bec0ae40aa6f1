// What the hand-computed Tensor tests share: a tensor's values as doubles, and 0, 1, 2, ... in a shape.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor/tensor.hpp"

namespace tunebed {

using V = std::vector<double>;

inline V vals(Tensor t) { return t.values<double>(); }  // by value: values() realizes

inline Tensor iota(const Shape& s, DType d = dtypes::float32) {
  int64_t n = 1;
  for (int64_t x : s) n *= x;
  V v(n);
  for (int64_t k = 0; k < n; k++) v[k] = static_cast<double>(k);
  return Tensor::from_values(v, s, d);
}

}  // namespace tunebed
