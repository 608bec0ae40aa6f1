// The symbolic rule set and simplify(): the tables of this folder, composed in the order they
// should be tried (cheap and decisive first).
#include "core/symbolic/symbolic.hpp"

#include "core/symbolic/rules.hpp"

namespace tunebed {

using namespace symbolic_detail;

const PatternMatcher& symbolic_simple() {
  static const PatternMatcher pm = fold_rules() + identity_rules();
  return pm;
}

const PatternMatcher& symbolic() {
  static const PatternMatcher pm = symbolic_simple() + range_rules() + combine_rules() + divmod_rules() + compare_rules();
  return pm;
}

UOp simplify(const UOp& u) { return graph_rewrite(u, symbolic()); }

size_t alu_op_count(const UOp& u) {
  size_t n = 0;
  for (const UOp& x : u.toposort()) n += GroupOp::ALU.contains(x.op());
  return n;
}

}  // namespace tunebed
