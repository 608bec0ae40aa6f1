// What the rule files of core/symbolic share: the rule tables they define, the patterns they are
// written with, and the arithmetic helpers their computed rules use.
//
// Soundness conventions, which every rule in this folder keeps:
//   - Integer values wrap at the dtype's width. +, - and * are ring operations, so a rule built
//     only from them (combining like terms, (x*c0)*c1) holds whatever wraps. A rule that divides,
//     compares or reasons about order needs the operands' true values: it first proves, with
//     128-bit bounds (`Linear::exact`), that the expression it reads cannot have wrapped.
//   - IDIV truncates toward zero and MOD takes the dividend's sign (C). A rule that holds only
//     for floor division is guarded by the dividend being non-negative (vmin >= 0).
//   - Range rules trust vmin/vmax, which are not meaningful for uint64 (stored as its bit
//     pattern); they are limited to the dtypes `range_trusted` accepts.
//   - Floats: only rules exact under IEEE (x*1, x/x is not one of them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/rewrite/pattern_matcher.hpp"

namespace tunebed::symbolic_detail {

using i128 = __int128;

// ---- the tables (one per file) ---------------------------------------------------------------
PatternMatcher fold_rules();        // fold.cpp: constant folding through exec_alu
PatternMatcher identity_rules();    // identities.cpp: x+0, x*1, WHERE, bool algebra, x<x
PatternMatcher combine_rules();     // combine.cpp: like terms, constant chains, canonical order
PatternMatcher range_rules();       // range_fold.cpp: decisions from vmin/vmax
PatternMatcher divmod_rules();      // divmod.cpp: IDIV and MOD of sums
PatternMatcher compare_rules();     // compare.cpp: CMPLT/CMPEQ/CMPNE of sums and products

// ---- dtype predicates ------------------------------------------------------------------------
inline bool is_int(const UOp& u) { return u.dtype().is_int() && u.dtype().count == 1; }
inline bool is_sint(const UOp& u) { return is_int(u) && !u.dtype().is_unsigned(); }
inline bool is_bool(const UOp& u) { return u.dtype().is_bool() && u.dtype().count == 1; }
// vmin/vmax are sound bounds of the value (everything but uint64 and floats).
inline bool range_trusted(const DType& d) {
  return d.count == 1 && !d.ptr && (d.is_bool() || (d.is_int() && d.scalar != Scalar::UInt64));
}

// ---- patterns --------------------------------------------------------------------------------
UPat ivar(const std::string& name);   // any integer (not bool) scalar
UPat sivar(const std::string& name);  // any signed integer scalar
UPat bvar(const std::string& name);   // any bool scalar
UPat icvar(const std::string& name);  // an integer constant

// ---- arithmetic helpers ----------------------------------------------------------------------
// A constant like `u` (same dtype) holding v, wrapped.
UOp const_like(const UOp& u, i128 v);
// a op b on two constants, through exec_alu.
UOp fold_const(Ops op, const UOp& a, const UOp& b);
bool fits(i128 v, const DType& d);
i128 floordiv(i128 a, i128 b);  // Python's //: rounds toward -inf
i128 floormod(i128 a, i128 b);  // Python's %: sign of b
i128 gcd(i128 a, i128 b);       // of absolute values; gcd(0, 0) == 0
// C's truncating division and remainder (b != 0).
inline i128 cdiv(i128 a, i128 b) { return a / b; }
inline i128 cmod(i128 a, i128 b) { return a % b; }

// -x does not wrap: x is never the dtype's minimum.
bool negation_exact(const UOp& x);
// x*y does not wrap for any values in their ranges.
bool mul_exact(const UOp& x, const UOp& y);

// The ADD tree under x, flattened into its summands in order (tinygrad's split_uop).
std::vector<UOp> split_uop(const UOp& x, Ops sep);

// x as sum of coefficient * term plus a constant: the view of an ADD tree that the div, mod and
// comparison rules reason on. Terms are split on ADD; a MUL by a constant gives its coefficient.
struct Linear {
  struct Term {
    UOp v;
    i128 f;
  };
  std::vector<Term> terms;
  i128 k = 0;
  DType dtype;

  static Linear of(const UOp& x);
  // Bounds of the true (unwrapped) value, from each term's vmin/vmax.
  i128 lo() const;
  i128 hi() const;
  // The true value fits the dtype, so the wrapped value built from it is the true value.
  bool exact() const;
  UOp build() const;  // the sum in canonical order (normalize_sum's), constant last
};

// A deterministic total order on UOps, for canonical operand order: by op (constants last),
// then variable names and constant values, then the sources, then the structural hash.
int compare_uops(const UOp& a, const UOp& b);

}  // namespace tunebed::symbolic_detail
