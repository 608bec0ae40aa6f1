// The shape of each node of a kernel AST, as tinygrad's UOp.st/UOp.shape read it: a VIEW's
// shape flows up through buffer ops and ALUs, and a REDUCE_AXIS sets its reduced axes to 1.
// Shared by the Kernel (which axes each reduce folds) and kernel_cost (how many times each ALU
// op runs).
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

 private:
  std::optional<SymShape> compute(const UOp& u);
  std::unordered_map<const UOpNode*, std::optional<SymShape>> memo_;
};

}  // namespace tunebed
