// The swizzler: where VIEWs go in a kernel (tinygrad's opt/swizzler.py at the seed 7b16fadd).
//
// A kernel's graph arrives with VIEWs wherever the tensor graph had movement ops. Codegen wants
// them in exactly two places: on the buffers (LOAD and STORE through a ShapeTracker) and on
// constants (VALID masks). view_left pushes VIEWs towards the buffers, through elementwise ops;
// view_right pushes them the other way past REDUCE_AXIS, rewriting the reduce to the view's
// shape (a permuted or reshaped reduce becomes a reduce over new trailing axes). fix_kernel_ops
// then finishes the AST: one STORE per output, constants as WHERE(VALID, c, 0), no
// CONTIGUOUS/MSELECT/DEVICE, and check_load_st on a kernel that reads the buffer it assigns.
#pragma once

#include "core/rewrite/graph_rewrite.hpp"

namespace tunebed::sched {

const PatternMatcher& merge_views();
const PatternMatcher& view_left();  // merge_views + push views into sources
const PatternMatcher& view_left_through_load();
const PatternMatcher& view_right();      // merge_views + push views past reduces
const PatternMatcher& fix_kernel_ops();  // view_left_through_load + the finishing rules

// graph_rewrite(u, view_left): a VIEW placed on a subgraph, pushed to its leaves.
UOp apply_swizzle(const UOp& u);

}  // namespace tunebed::sched
