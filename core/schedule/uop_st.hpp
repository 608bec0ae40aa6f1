// The shape side of a UOp inside the scheduler: tinygrad's UOp.st, .shape, .base, .view, .r and
// the movement-op helpers (uop/ops.py at 7b16fadd), for graphs that mix tensor-level nodes with
// VIEW(ShapeTracker) nodes. Internal to core/schedule; it speaks core/shape's SymShape (sints).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/ir/uop.hpp"
#include "core/shape/shapetracker.hpp"

namespace tunebed::sched {

// Ops that are realized wherever they appear (grouper.py's ALWAYS_CONTIGUOUS): after the seed,
// DEFINE_GLOBAL and LOAD too, since replace_buffers runs before the swizzler.
inline constexpr OpSet ALWAYS_CONTIGUOUS{Ops::CONTIGUOUS,  Ops::ASSIGN, Ops::COPY,          Ops::BUFFER,
                                         Ops::BUFFER_VIEW, Ops::CONST,  Ops::BIND,          Ops::DEVICE,
                                         Ops::MSELECT,     Ops::MSTACK, Ops::DEFINE_GLOBAL, Ops::LOAD};
// tinygrad's GroupOp.Meta at the seed (core/ir's GroupOp::Meta is wider: it has DEVICE, UNIQUE...).
inline constexpr OpSet Meta{Ops::COPY, Ops::BUFFER_VIEW};
inline constexpr OpSet Defines{Ops::DEFINE_GLOBAL, Ops::DEFINE_LOCAL, Ops::DEFINE_REG};

// tinygrad's UOp.st: the ShapeTracker a node is seen through, or nullopt for nodes without a
// shape (DEVICE, UNIQUE, SINK, KERNEL). Memoised per thread; StCacheScope bounds the memo's life.
std::optional<ShapeTracker> uop_st(const UOp& u);
const ShapeTracker& st_of(const UOp& u);  // uop_st, throwing std::logic_error naming the op if none
SymShape uop_shape(const UOp& u);
int64_t uop_size(const UOp& u);  // BUFFER: its arg; otherwise the st's size
UOp uop_base(const UOp& u);      // through VIEWs and movement ops
std::optional<std::string> uop_device(const UOp& u);

class StCacheScope {
 public:
  StCacheScope() = default;
  StCacheScope(const StCacheScope&) = delete;
  StCacheScope& operator=(const StCacheScope&) = delete;
  ~StCacheScope();
};

const ShapeTracker& view_st(const UOp& view);  // a VIEW's arg
// tinygrad's ShapeTracker.__add__: the views of b stacked on a, simplified one view at a time.
ShapeTracker st_add(const ShapeTracker& a, const ShapeTracker& b);
SymShape st_reduce(const SymShape& shape, const std::vector<int64_t>& axes);  // reduced axes become 1

UOp view(const UOp& x, const ShapeTracker& st);  // VIEW(x) with dtype of x
// A movement op, dropped when it does not change the ShapeTracker (tinygrad's _mop).
UOp mop(const UOp& x, Ops op, const Arg& arg);
UOp reshape(const UOp& x, const SymShape& shape);
// tinygrad's UOp.r: REDUCE_AXIS over `axes`, non-reduced axes permuted in front, then reshaped
// back to x's rank with the reduced axes as 1.
UOp reduce_r(const UOp& x, Ops op, std::vector<int64_t> axes);
std::vector<int64_t> reduce_axes(const UOp& r);  // a REDUCE_AXIS's arg[1]
Ops reduce_op(const UOp& r);

// tinygrad's UOp.const_like: a CONST of u's dtype shaped like u, over u's device when it has one:
// CONST(VIEW(DEVICE)) with all strides 0.
UOp const_like(const UOp& u, const Arg& value);
Arg const_arg(const DType& d, double v);  // v as the CONST arg of dtype d (int, bool or float)

}  // namespace tunebed::sched
