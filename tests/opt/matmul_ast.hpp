// A matmul kernel AST built by hand, in the form the scheduler makes, for the tensor-core tests of
// core/opt (tests/opt/tc_test.cpp) and of codegen (tests/codegen/tc_cuda_test.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir/uop.hpp"
#include "core/shape/shapetracker.hpp"

namespace tunebed::test {

// out (m x n, acc) = sum_k a (m x k, in) * b (k x n, in), the product CAST to acc first when the
// dtypes differ: the two forms a tensor core's dtypes match.
inline UOp matmul_ast(int64_t m, int64_t n, int64_t k, DType in, DType acc) {
  auto access = [](Ops op, int64_t buf, DType d, int64_t size, const ShapeTracker& st,
                   std::vector<UOp> value) {
    UOp g = UOp::make(Ops::DEFINE_GLOBAL, d.ptr_to(size), {}, Arg(buf));
    value.insert(value.begin(), UOp::make(Ops::VIEW, g.dtype(), {g}, st.to_arg()));
    return UOp::make(op, op == Ops::LOAD ? d : dtypes::void_, value);
  };
  UOp a = access(Ops::LOAD, 1, in, m * k, ShapeTracker::from_shape({m, 1, k}).expand({m, n, k}), {});
  UOp b = access(Ops::LOAD, 2, in, k * n,
                 ShapeTracker::from_shape({k, n}).permute({1, 0}).reshape({1, n, k}).expand({m, n, k}), {});
  UOp prod = a * b;
  if (in != acc) prod = prod.cast(acc);
  UOp sum =
      UOp::make(Ops::REDUCE_AXIS, acc, {prod}, Arg::tuple({Arg(Ops::ADD), Arg::ints(std::vector<int>{2})}));
  UOp store = access(Ops::STORE, 0, acc, m * n, ShapeTracker::from_shape({m, n, 1}), {sum});
  return UOp::make(Ops::SINK, dtypes::void_, {store});
}

}  // namespace tunebed::test
