// Properties of simplify() on random expressions (core/symbolic/expr_gen.hpp): it keeps every
// value, and it is idempotent. RapidCheck draws a tape of choices; a failure shrinks the tape
// and prints the expression, its simplification and the assignment where they differ.
// (RC_PARAMS="max_success=3000" runs more cases.)
//
// "simplify never adds ALU ops" does not hold, so it is not asserted: on 20000 generated
// expressions about 1.7% grow (and the total shrinks 306k -> 109k ops). The causes are
// canonical forms that cost an op: a negative divisor or dividend made positive
// (x//-4 -> -(x//4)), (a+b)*c distributed, a constant split out of a division
// ((x*37+29)//6 -> (x*37+5)//6+4), and sums flattened out of shared subexpressions.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "core/symbolic/eval.hpp"
#include "core/symbolic/expr_gen.hpp"
#include "core/symbolic/expr_text.hpp"
#include "core/symbolic/symbolic.hpp"

namespace tunebed {
namespace {

// Reads choices off a RapidCheck-generated tape; past its end every choice is the smallest.
struct TapeSource {
  const std::vector<uint64_t>& tape;
  size_t next = 0;
  int64_t pick(int64_t lo, int64_t hi) {
    uint64_t r = next < tape.size() ? tape[next++] : 0;
    return static_cast<int64_t>(static_cast<uint64_t>(lo) + r % (static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1));
  }
};

UOp random_expression(DType dtype) {
  auto tape = *rc::gen::container<std::vector<uint64_t>>(rc::gen::arbitrary<uint64_t>());
  TapeSource src{tape};
  std::vector<UOp> vars = expr_gen::random_vars(src, 3, dtype);
  // general integer expressions, or the index arithmetic of ShapeTrackers
  return src.pick(0, 1) ? expr_gen::random_int(src, vars, 5) : expr_gen::random_index(src, vars, 3);
}

void check_preserves_value(DType dtype) {
  UOp e = random_expression(dtype);
  UOp s = simplify(e);
  auto seed = *rc::gen::arbitrary<uint64_t>();
  if (auto m = find_mismatch(e, s, 4096, 1000, seed))
    RC_FAIL(print_expr(e) + "  simplified to  " + print_expr(s) + "  differs at " + m->to_string());
}

RC_GTEST_PROP(SymbolicProperty, simplify_preserves_the_value_of_int64_expressions, ()) {
  check_preserves_value(dtypes::int64);
}

RC_GTEST_PROP(SymbolicProperty, simplify_preserves_the_value_of_int32_expressions, ()) {
  check_preserves_value(dtypes::int32);
}

RC_GTEST_PROP(SymbolicProperty, simplify_is_idempotent, ()) {
  UOp s = simplify(random_expression(dtypes::int64));
  UOp again = simplify(s);
  if (!(again == s)) RC_FAIL(print_expr(s) + " simplifies further to " + print_expr(again));
}

}  // namespace
}  // namespace tunebed
