// The shape of each node of a kernel AST, as tinygrad's UOp.st/UOp.shape read it: a VIEW's
// shape flows up through buffer ops and ALUs, and a REDUCE_AXIS sets its reduced axes to 1; and
// the kernel's full shape. The kernel-AST rules (verify_kernel_ast.hpp), the Kernel (which axes
// each reduce folds, its full shape), kernel_cost (how many times each ALU op runs) and codegen's
// kernel names and launch plans read it.
#pragma once

#include <optional>
#include <unordered_map>

#include "core/ir/uop.hpp"
#include "core/shape/shapetracker.hpp"

namespace tunebed {

// Memoised per instance: one AstShapes per AST walk.
class AstShapes {
 public:
  // nullopt for a node without a shape (DEFINE_GLOBAL, a CONST with no VIEW). Throws
  // std::invalid_argument when the shaped sources of a node disagree.
  std::optional<SymShape> operator()(const UOp& u);
  // tinygrad's UOp.full_shape: per axis the largest size of any VIEW under ROOT (a store after a
  // reduce has size 1 on the reduced axes). Throws std::invalid_argument for an AST with no VIEW
  // or VIEWs of different ranks.
  SymShape full_shape(const UOp& root);

 private:
  std::optional<SymShape> compute(const UOp& u);
  std::unordered_map<const UOpNode*, std::optional<SymShape>> memo_;
};

}  // namespace tunebed
