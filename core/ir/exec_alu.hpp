// exec_alu: an ALU op on constants, with the exact semantics of the dtype, as tinygrad's
// exec_alu (uop/ops.py) but without Python's unbounded integers. The constant folder of
// core/symbolic and the interpreters share it, so that "what a kernel computes" has one meaning.
//
// Integers (every int dtype and bool) are held in 64 bits: signed values sign-extended, unsigned
// ones zero-extended, uint64 as its bit pattern. Every result wraps to the result dtype (two's
// complement, as the hardware does), and nothing is undefined:
//   - IDIV truncates toward zero and MOD takes the sign of the dividend, as C.
//   - x // 0 == 0 and x % 0 == x, as tinygrad's cdiv/cmod. (So x == (x//y)*y + x%y for all y.)
//     The symbolic simplifier never folds a division by a constant zero: a kernel that divides
//     by zero is wrong, and folding would hide where.
//   - INT_MIN // -1 wraps to INT_MIN (and INT_MIN % -1 == 0), as ADD and MUL wrap.
//   - Shifts by a negative amount or by at least the bit width: SHL gives 0, SHR gives the sign
//     fill (0, or -1 for a negative signed value). SHR is arithmetic for signed dtypes.
//   - POW on integers: exponentiation with wraparound; a negative exponent gives trunc(1/x^-e).
// Floats follow IEEE in double precision, then round to the result dtype (float32 to float,
// float16/bfloat16 by round_float). CAST float -> int truncates toward zero, saturating to the
// int64 range (NaN gives 0) and then wrapping to the target, as UOp::const_float does.
// An op the dtype does not support (XOR of floats, SIN of ints, THREEFRY) throws
// std::invalid_argument naming the op and the dtype.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/ir/dtype.hpp"
#include "core/ir/ops.hpp"

namespace tunebed {

class UOp;

// A scalar constant: its dtype and its value. Integers and bools live in `i`, floats in `f`.
struct ConstValue {
  DType dtype;
  int64_t i = 0;
  double f = 0;

  static ConstValue integer(DType d, int64_t v);  // wrapped to d
  static ConstValue real(DType d, double v) {  // rounded to d; inline: an exact run makes one per op
    return d.is_float() ? ConstValue{d, 0, round_float(v, d)} : integer(d, float_to_int(v));
  }
  static ConstValue of(const UOp& c);             // the value of a scalar CONST
  UOp to_uop() const;                             // the CONST holding this value

  bool truthy() const { return dtype.is_float() ? f != 0 : i != 0; }
  double as_double() const;     // the value as a double (uint64 read as unsigned)
  std::string to_string() const;
  bool operator==(const ConstValue& o) const;  // same dtype and value; NaN equals NaN here
};

// Computes op on the operands; `dtype` is the result dtype (bool for comparisons, the target of
// a CAST). The operands' own dtypes decide comparisons (signed or not) and the source of a CAST.
ConstValue exec_alu(Ops op, DType dtype, std::span<const ConstValue> operands);

}  // namespace tunebed
