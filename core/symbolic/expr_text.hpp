// Integer expressions as text, for `tunebed simplify`, tests and fuzzing:
//
//   ((i*6 + j)//4) % 3        max(a, b) - min(a, 2)        where(x < 3, x, -x)
//
// Operators, loosest first: `|`, `^`, `&` (bool or int), `<` `==` `!=` (not chained), `+` `-`,
// `*` `//` `%`, unary `-` and `!`. `//` and `%` truncate toward zero, as C. Integer literals,
// `true`, `false`, variables, parentheses and the functions max(a,b), min(a,b), where(c,a,b).
// Expressions are typed: arithmetic takes ints, `!` and where's condition take bools.
//
// A variable becomes a DEFINE_VAR with its bounds. Values are int64 by default: index
// arithmetic over variables as large as 2^31 (the default bound) multiplies them, and int32
// would wrap and leave the div/mod rules nothing they could prove.
//
// The printer writes a UOp back in the same syntax: subtraction and negation as `a-b` and `-a`,
// min(a,b) for tinygrad's -max(-a,-b), and ops outside the syntax as `opname(a, b)`.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/ir/uop.hpp"

namespace tunebed {

struct VarBounds {
  int64_t min = 0, max = 2147483647;  // 2^31 - 1
};

struct ExprOptions {
  DType dtype = dtypes::int64;               // of literals, variables and arithmetic
  std::map<std::string, VarBounds> vars;     // bounds by name
  VarBounds default_bounds;                  // for variables not in `vars`
};

// A malformed expression; `col` is the 1-based column where it was found.
class ExprError : public std::runtime_error {
 public:
  ExprError(int col, const std::string& msg);
  int col;
};

UOp parse_expr(std::string_view text, const ExprOptions& opts = {});
std::string print_expr(const UOp& u);

}  // namespace tunebed
