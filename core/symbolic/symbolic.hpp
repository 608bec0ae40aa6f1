// The symbolic simplifier: tinygrad's uop/symbolic.py rule families as PatternMatcher tables.
#pragma once

#include "core/rewrite/graph_rewrite.hpp"

namespace tunebed {

// Simplify an expression graph to a fixed point with the full symbolic rule set.
UOp simplify(const UOp& u);

}  // namespace tunebed
