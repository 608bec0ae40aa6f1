// Error bounds: how far a kernel's floating-point result may lie from the exact one.
//
// exec_alu (exec_alu.hpp) says what one op computes in a dtype. These rules say how far from
// the exact (real-number) result a correct evaluation in that dtype can be, whatever order a
// compiler chose for its sums. The AST interpreter's exact evaluation (core/schedule,
// expect_kernel_ast) applies them node by node in float64: each node carries its exact value x
// and a bound E on |computed - x|, and the result checks (core/engine/check.hpp) accept an output
// element when |out - x| <= E. This is running error analysis (Higham, "Accuracy and Stability of
// Numerical Algorithms", 2nd ed., ch. 3), to first order, with a probabilistic bound for sums.
//
// With u the dtype's unit roundoff (eps/2: 2^-24 float32, 2^-11 float16, 2^-8 bfloat16) and eta
// half its smallest subnormal (rounding near zero is absolute, not relative):
//
//   round(r)                 u(|r| + E) + eta                  one correctly rounded result of a
//                                                              value the kernel holds within E
//   load of an input         E of the buffer (0 for inputs)    inputs are exact in their dtype
//   a + b, a - b             Ea + Eb + round(r)
//   a * b                    |b|Ea + |a|Eb + EaEb + round(r)
//   a / b, 1/b               (Ea + |r|Eb) / (|b| - Eb) + k eps|r|   inf where |b| <= Eb
//   sqrt, exp2, log2, sin    |f'| Ea (bounded form) + k eps|r|      k = the op's ulps (below)
//   max(a, b), neg, select   max(Ea, Eb) / Ea                  1-Lipschitz, no rounding
//   a < b, a != b            uncertain (E = 1) where |a - b| <= Ea + Eb
//   where(c, x, y)           |x - y| + max(Ex, Ey) where c is uncertain
//   cast to a narrower float Ea + round(r); to int: exact unless [x-E, x+E] spans an integer
//   sum of n terms x_i       sum E_i + g (u sum(|x_i| + E_i) + eta)
//                            g = min(n-1, 5 sqrt(sum_j m_j^2 - 1)), m_j = how many terms share value j
//
// n counts the terms that may be nonzero: in any summation tree an addition rounds only where both
// of its operands are nonzero, and there are at most n-1 such (a one-hot or masked sum of 1024
// terms, 50 of them nonzero, rounds like a sum of 50). (n-1) is the worst case of any summation order
// (Higham, Thm 4.1 and eq. 4.4). The square root is Higham and Mary's probabilistic bound ("A new
// approach to probabilistic rounding error analysis", SISC 2019, Thm 3.1) with lambda = 5: with n
// distinct terms sum_j m_j^2 = n and g = 5 sqrt(n-1). Their model takes the n-1 rounding errors as
// independent, and equal terms break it: adding the same value c to partial sums in one binade
// rounds off the same residue (c mod ulp) every time, so m equal terms err like one error m times
// as large, of variance m^2 (sops line 2191: 6400 of 12800 squared deviations equal, from a relu's
// zeros, err 2.4x the independent bound). All terms equal gives n-1, the worst case. Under the
// model the bound fails with probability at most 2 exp(-12.5) = 7e-6 per sum, and far less in
// practice because it charges every addition with sum|x_i|, which bounds every partial sum. It
// grows with sqrt(n) for distinct terms, so an unrolled or grouped sum (another order) passes while
// a sum carried in a narrower dtype (eps 2^13 times larger for float16 in place of float32) does not.
//
// k, the ulps a device's library may be off for an op, is the largest any tunebed target allows:
// OpenCL 1.2 (section 7.4, table 7.1, single precision) permits 2.5 ulp for x/y and 1/x, 3 for
// sqrt, exp2 and log2, 4 for sin and 16 for pow; glibc and CUDA are within those.
//
// An infinite bound means the element cannot be verified (an uncertain integer division, a
// bitcast of an inexact value, a result near the dtype's overflow); checks count such elements.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "core/ir/dtype.hpp"
#include "core/ir/exec_alu.hpp"
#include "core/ir/host_buffer.hpp"
#include "core/ir/ops.hpp"

namespace tunebed {

// What a correct buffer holds, element by element: the exact value and the bound on how far a
// correct kernel's element may be from it.
struct Expected {
  DType dtype;                // the buffer's own dtype
  HostBuffer value;           // float64 for a float buffer, else the buffer's dtype
  std::vector<double> bound;  // one per element

  int64_t numel() const { return value.numel(); }
};

// Exact data: B widened to float64 if it holds floats, every bound 0.
Expected exact(const HostBuffer& b);
// B's values held as an exact run holds them: floats as float64.
HostBuffer widened(const HostBuffer& b);

// eps/2 of a float dtype: 2^-53 float64, 2^-24 float32, 2^-11 float16, 2^-8 bfloat16.
double unit_roundoff(const DType& dtype);

// The bound of rounding an exact R once into DTYPE (0 for integers and bool).
double rounding_bound(const DType& dtype, double r);

// The bound of OP's result in DTYPE, given the operands' exact values X, their bounds E and the
// exact result R (all computed in float64 by the caller; integers exact). FROM is the dtype the
// kernel holds the first operand in (X holds floats as float64), which a CAST needs. Comparisons
// and logic ops answer 0 (certain) or 1 (the boolean may be flipped).
double alu_error_bound(Ops op, const DType& dtype, const DType& from, std::span<const ConstValue> x,
                       std::span<const double> e, const ConstValue& r);

// alu_error_bound's rules for a + b and a * b in DTYPE over a block of lanes (an exact run's
// hottest ops, evaluated a block at a time): OUT[j] bounds R[j] = A[j] + B[j] (or A[j] * B[j]),
// whose operands' bounds are EA[j] and EB[j]. Every span has OUT's length.
void add_error_bounds(const DType& dtype, std::span<const double> ea, std::span<const double> eb,
                      std::span<const double> r, std::span<double> out);
void mul_error_bounds(const DType& dtype, std::span<const double> a, std::span<const double> b,
                      std::span<const double> ea, std::span<const double> eb, std::span<const double> r,
                      std::span<double> out);

// A sum of N terms in DTYPE: what a reduce keeps while it visits its terms.
class SumBound {
 public:
  void add(double x, double e) {
    if (x == 0 && e == 0) return;  // adding a zero is exact in any order
    n_++;
    if (std::isfinite(x)) terms_.push_back(x);
    sum_abs_ += x < 0 ? -x : x;
    sum_bounds_ += e;
  }
  // The bound of the sum in DTYPE, in any order (see g above). Counts equal terms in a table.
  double bound(const DType& dtype);
  // Back to no terms, keeping the memory: an exact run bounds one sum per output element.
  void clear() {
    n_ = 0;
    terms_.clear();
    sum_abs_ = sum_bounds_ = 0;
  }

 private:
  double squared_multiplicities();

  int64_t n_ = 0;              // terms that may be nonzero
  std::vector<double> terms_;  // the finite ones' exact values (NaN equals nothing)
  double sum_abs_ = 0;         // sum |x_i|
  double sum_bounds_ = 0;      // sum E_i
  std::vector<uint64_t> keys_;  // squared_multiplicities' table: a term's bits, and how many
  std::vector<int64_t> counts_;
};

// The largest number of ulps any target's library may be off for OP (k above; 0.5 for the
// correctly rounded + - * and casts).
double library_ulps(Ops op);

}  // namespace tunebed
