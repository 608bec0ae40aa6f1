// sint: a size, stride, offset or mask bound of a View, as tinygrad's `sint = int | UOp`.
//
// Almost always a plain int64, and then every operation is integer arithmetic with no UOp in
// sight. A symbolic shape (a DEFINE_VAR dimension, `N`) makes some entries index-dtype UOp
// expressions; arithmetic on those builds the expression and simplifies it with core/symbolic,
// so that structurally equal entries compare equal and a result that folds to a constant becomes
// an int again.
//
// Comparisons follow tinygrad's `resolve()`: `lt(a, b)` is a three-valued answer (true, false, or
// "depends on the variables"), and `resolve(answer, dflt)` picks `dflt` for the third case. The
// movement ops use the default that keeps them correct: an unknown answer never licenses a merge.
//
// Integer arithmetic is Python's (floor division and modulo) and checked: overflowing int64
// throws std::overflow_error instead of wrapping silently.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/uop.hpp"

namespace tunebed {

class sint {
 public:
  sint(int64_t v = 0) : i_(v) {}  // NOLINT: implicit, so `sint s = 4` and `{1, 2}` read as ints
  sint(int v) : i_(v) {}          // NOLINT
  explicit sint(UOp u);           // a CONST becomes its value

  bool is_int() const { return !u_; }
  int64_t to_int() const;                     // throws std::invalid_argument for a symbolic entry
  const UOp& uop() const { return u_; }       // null for an int
  UOp to_uop(DType d = dtypes::index) const;  // ints become constants of d, UOps cast to d
  int64_t vmin() const { return u_ ? u_.vmin() : i_; }
  int64_t vmax() const { return u_ ? u_.vmax() : i_; }

  // Structural equality, as Python's `==` on tinygrad's sints (for UOps: the same interned node).
  bool operator==(const sint& o) const { return i_ == o.i_ && u_ == o.u_; }

 private:
  int64_t i_ = 0;
  UOp u_;
};

// A shape whose dims may be symbolic (core/tensor's Shape is the all-int one of a Tensor).
using SymShape = std::vector<sint>;

sint operator+(const sint& a, const sint& b);
sint operator-(const sint& a, const sint& b);
sint operator-(const sint& a);
sint operator*(const sint& a, const sint& b);
sint floordiv(const sint& a, const sint& b);  // Python's //: rounds toward -inf
sint floormod(const sint& a, const sint& b);  // Python's %: the sign of b
sint ceildiv(const sint& a, const sint& b);
sint smax(const sint& a, const sint& b);
sint smin(const sint& a, const sint& b);
sint prod(const SymShape& s);

bool all_int(const SymShape& s);
std::vector<int64_t> to_ints(const SymShape& s);  // throws for a symbolic entry

// Three-valued comparisons: nullopt when the answer depends on the variables.
using SBool = std::optional<bool>;
SBool lt(const sint& a, const sint& b);
SBool le(const sint& a, const sint& b);
SBool eq(const sint& a, const sint& b);
SBool ne(const sint& a, const sint& b);
inline bool resolve(SBool b, bool dflt = true) { return b.value_or(dflt); }

// As an Arg (an int, or the UOp itself) and back; text prints like tinygrad ("4", or the UOp).
Arg to_arg(const sint& s);
sint sint_from_arg(const Arg& a);
std::string to_string(const sint& s);
std::string to_string(const SymShape& s);  // "(4, 6)", "(4,)", "()"

}  // namespace tunebed
