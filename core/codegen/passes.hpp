// The pass tables of core/codegen and what their rules share. Internal to the folder: codegen.hpp
// is the interface.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/codegen/codegen.hpp"
#include "core/rewrite/graph_rewrite.hpp"

namespace tunebed::codegen_detail {

// ---- gpudims.cpp ---------------------------------------------------------------------------
// Where a GPU kernel's GLOBAL, LOCAL and GROUP_REDUCE axes come from: work-group and work-item
// ids (SPECIAL), and the launch dims that make them. Empty on a target without locals.
struct LaunchPlan {
  std::vector<UOp> axis_idx;  // per axis: its id expression, null for an axis that is a loop
  std::array<sint, 3> global{1, 1, 1}, local{1, 1, 1};
};
LaunchPlan plan_launch(const KernelInfo& info, const SymShape& full_shape, const Renderer& renderer);

// ---- lowerer.cpp ---------------------------------------------------------------------------
struct IndexContext {
  std::vector<AxisType> axis_types;
  std::vector<UOp> idxs;                // the index of each axis in the current (sub)block
  int64_t start = 0;                    // RANGE args of this block are start + axis
  std::shared_ptr<int64_t> next_start;  // shared by all blocks: every block's ranges are distinct
  std::vector<UOp> launch_idx;          // LaunchPlan::axis_idx (empty on the CPU)
};
const PatternMatcher& pm_lowerer();
// The shape of an AST node as AstShapes (core/spec/ast_shape.hpp) reads it, its errors and a node
// with no shape as CodegenError.
SymShape ast_shape(const UOp& u);

// ---- expander.cpp --------------------------------------------------------------------------
const PatternMatcher& gep_pushing();
const PatternMatcher& expander();

// ---- devectorizer.cpp ----------------------------------------------------------------------
struct ReduceContext {
  int64_t acc_num = 0;
};
const PatternMatcher& pm_reduce();  // context: ReduceContext

// ---- reduce_collapse.cpp ---------------------------------------------------------------------
// A range the reduced value does not depend on: a sum over it is a product with its size, a max
// ignores it. A loop of one iteration, which the symbolic rules fold to the constant 0, goes.
UOp reduce_unparented(const UOp& red);
// A sum over one range in closed form (arange, one-hot indexing), or null when it has none.
UOp reduce_collapse(const UOp& red);
// root with each key of `replace` (and so every node above one) rebuilt on its value.
UOp substitute(const UOp& root, const std::unordered_map<UOp, UOp, UOpHash>& replace);
const PatternMatcher& devectorize();
const PatternMatcher& load_store_folding();  // context: Renderer
const PatternMatcher& pm_render();

// ---- decompositions.cpp -------------------------------------------------------------------
const PatternMatcher& pm_decompositions();  // THREEFRY into 32-bit integer ops

// ---- helpers shared by the passes ----------------------------------------------------------
UOp gep(const UOp& x, std::vector<int64_t> lanes);  // GEP, or x itself for the identity
UOp broadcast(const UOp& x, int n);                 // VECTORIZE(x, x, ...), or x for n == 1
UOp vectorize(const std::vector<UOp>& lanes);       // VECTORIZE, or the lane itself for one
// The lane i of x when it can be read off without a rewrite (a VECTORIZE source, a scalar), else
// GEP(x, i).
UOp lane(const UOp& x, int64_t i);

// The ranges a STORE ends: its RANGE sources after the index and the value.
std::vector<UOp> ended_ranges(const UOp& store);

}  // namespace tunebed::codegen_detail
