// The kernel-AST contract in code, as tinygrad's uop/spec.py (spec + ast_spec) at the seed: two
// named rule tables, one for each form a kernel AST takes.
//
//   kernel AST     what create_schedule and `import` produce and Kernel(ast) reads:
//                  SINK(STORE(VIEW(DEFINE_GLOBAL i), value), ...) over LOAD(VIEW(DEFINE_GLOBAL)),
//                  ALU ops, CAST/BITCAST, REDUCE_AXIS (arg (op, axes)), constants
//                  CONST(VIEW) and WHERE(VALID(VIEW), CONST, CONST), DEFINE_VAR
//   optimized AST  what Kernel::get_optimized_ast produces and code generation reads: the same
//                  ops plus DEFINE_LOCAL (a grouped reduce's buffer, LOAD(VIEW, STORE)) and the
//                  tensor core's WMMA, CONTRACT and UNROLL; every VIEW in the full shape after
//                  the opts, the SINK's arg a KernelInfo (which codegen checks itself)
//
// Both tables hold the structure and dtype rules. The shape rules (sources agree on a shape,
// every axis is 1 or n across the VIEWs, reduce axes exist) hold only for the kernel AST: after
// the opts a tensor core's operands are views of different shapes (CUDA's attention with
// TC:0:(-1,2,1) multiplies sources of shapes that differ), so, as tinygrad, which checks ast_spec
// in Kernel() and only spec on the optimized AST, codegen's entry checks the optimized rules.
//
// A rule is a PatternMatcher rule that "rewrites" a node breaking it to NOOP(arg=complaint), and
// leaves every other node alone: so rules are named, indexed by op, counted by rule_stats, and a
// verify is one toposort with one table lookup per node. Sources are visited before the nodes
// that use them, so the first complaint is about the deepest broken node.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

#include "core/ir/uop.hpp"
#include "core/rewrite/pattern_matcher.hpp"

namespace tunebed {

// A kernel AST that breaks a rule. One line: "kernel AST rule store-has-view: STORE void writes
// through a LOAD, not a VIEW of a buffer", naming the rule and the node (op, dtype, short arg).
class KernelAstError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

const PatternMatcher& kernel_ast_spec();
const PatternMatcher& optimized_ast_spec();

// The first broken rule's message, or nullopt for an AST that keeps them all.
std::optional<std::string> kernel_ast_violation(const UOp& sink);
std::optional<std::string> optimized_ast_violation(const UOp& sink);

// The same, throwing KernelAstError.
void verify_kernel_ast(const UOp& sink);
void verify_optimized_ast(const UOp& sink);

}  // namespace tunebed
