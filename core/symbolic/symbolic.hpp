// The symbolic simplifier: tinygrad's uop/symbolic.py rule families as PatternMatcher tables.
//
// The rules live in one file per concern (see rules.hpp): fold.cpp (constants), identities.cpp
// (x+0, x*1, WHERE, bools), combine.cpp (the normal form of sums and products), range_fold.cpp
// (decisions from vmin/vmax), divmod.cpp (IDIV and MOD of sums) and compare.cpp (comparisons).
// Every rule holds for C's truncating division and for integer wraparound; rules.hpp says how.
#pragma once

#include "core/rewrite/graph_rewrite.hpp"

namespace tunebed {

// Constant folding and identities only: rules that never look below a node's sources.
const PatternMatcher& symbolic_simple();
// The full rule set that simplify() runs.
const PatternMatcher& symbolic();

// Simplify an expression graph to a fixed point with the full symbolic rule set.
UOp simplify(const UOp& u);

// The number of distinct ALU nodes in the graph under u: the size a simplification shrinks.
size_t alu_op_count(const UOp& u);

}  // namespace tunebed
