#include "core/opt/cost.hpp"

#include <stdexcept>
#include <string>

#include "core/spec/ast_shape.hpp"

namespace tunebed {

namespace {

// How many times a node runs: the elements of its shape, a symbolic size at its maximum.
int64_t iterations(AstShapes& shape_of, const UOp& u) {
  std::optional<SymShape> s = shape_of(u);
  return s ? prod(*s).vmax() : 1;
}

bool is_const_select(const UOp& u) { return u.op() == Ops::WHERE && u.src(0).op() == Ops::VALID; }

}  // namespace

KernelCost kernel_cost(const UOp& ast) {
  KernelCost cost;
  AstShapes shape_of;
  for (const UOp& u : ast.toposort()) {
    if (GroupOp::ALU.contains(u.op()) && !is_const_select(u)) {
      const int64_t per_element = (u.op() == Ops::MULACC ? 2 : 1) * u.dtype().count;
      cost.flops += per_element * iterations(shape_of, u);
    } else if (u.op() == Ops::REDUCE_AXIS) {
      cost.flops += u.dtype().count * iterations(shape_of, u.src(0));
    } else if (u.op() == Ops::DEFINE_GLOBAL) {
      if (u.dtype().size < 0)
        throw std::invalid_argument("kernel_cost: DEFINE_GLOBAL " + std::to_string(u.arg().as_int()) +
                                    " has no buffer size (" + to_string(u.dtype()) + ")");
      cost.bytes += u.dtype().size * u.dtype().base().itemsize();
    }
  }
  return cost;
}

}  // namespace tunebed
