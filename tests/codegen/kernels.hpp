// Small kernel ASTs built in C++ for the codegen tests, in the form the optimizer hands over
// (every VIEW with the kernel's full shape, a KernelInfo with axis types), and split_axis, which
// makes an optimized variant the way tinygrad's Kernel.shift_to does: one axis of the full shape
// is split by `amount`, and the new inner axis moves to the end with the given type.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/codegen/codegen.hpp"

namespace tunebed::testing {

// out[i] = a[i] + b[i], float32, n elements.
UOp elementwise_add(int64_t n);
// out[i] = op(a[i], b[i]) for a binary ALU op, float32, n elements.
UOp elementwise(Ops op, int64_t n);
// out[i] = sum_j a[i, j], float32, an m x k input.
UOp sum_rows(int64_t m, int64_t k);
// out[i] = sum_j a[j] for every i < m: a reduce that does not read the output axis.
UOp sum_broadcast(int64_t m, int64_t k);
// c = a @ b, float32: a is m x k, b is k x n.
UOp matmul(int64_t m, int64_t n, int64_t k);

// The AST with `axis` split into (size / amount, amount), the inner part appended as a new last
// axis of type `type`; a reduced axis stays reduced in both parts.
UOp split_axis(const UOp& ast, int64_t axis, int64_t amount, AxisType type);

// The AST as the optimizer leaves it after OPTS ("PADTO:0:32,UPCAST:0:4"), for one CPU core: for
// opts split_axis cannot make.
UOp with_opts(const UOp& ast, std::string_view opts);

}  // namespace tunebed::testing
