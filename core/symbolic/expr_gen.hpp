// Random integer expressions over bounded variables, for the simplifier's property tests and its
// fuzzer. The generator draws every choice from a Source, anything with
//
//   int64_t pick(int64_t lo, int64_t hi);   // a value in [lo, hi]
//
// so RapidCheck (a tape of random choices) and libFuzzer (FuzzedDataProvider) drive the same
// generator, and a failing input of either shrinks or minimises choice by choice.
//
// The expressions use every op of the expression syntax (+ - * // % < == != max min where and
// !), with small, large and negative constants and divisions by anything, nested: the corners
// where C's truncation, wraparound and range analysis disagree with naive algebra.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/ir/uop.hpp"

namespace tunebed::expr_gen {

// Variable bounds: small and non-negative (index-like), around zero, shifted, one value, or huge.
template <class Source>
UOp random_var(Source& src, const std::string& name, DType dtype) {
  int64_t lo, hi;
  switch (src.pick(0, 5)) {
    case 0: lo = 0, hi = src.pick(1, 16); break;
    case 1: hi = src.pick(0, 8), lo = -src.pick(1, 8); break;
    case 2: lo = src.pick(-100, 100), hi = lo + src.pick(0, 40); break;
    case 3: lo = hi = src.pick(-5, 5); break;
    case 4: lo = 0, hi = 2147483647; break;
    default: lo = dtype.int_min() / 2, hi = dtype.int_max() / 2; break;
  }
  return UOp::variable(name, lo, hi, dtype);
}

template <class Source>
std::vector<UOp> random_vars(Source& src, int max_vars, DType dtype) {
  std::vector<UOp> vars;
  int n = static_cast<int>(src.pick(1, max_vars));
  for (int i = 0; i < n; i++) vars.push_back(random_var(src, std::string(1, static_cast<char>('a' + i)), dtype));
  return vars;
}

template <class Source>
UOp random_const(Source& src, DType dtype) {
  static constexpr int64_t kFactors[] = {2, 3, 4, 6, 8, 12, 16, 32, 64, 1024};
  switch (src.pick(0, 5)) {
    case 0:
    case 1: return UOp::const_int(dtype, src.pick(-8, 8));
    case 2: return UOp::const_int(dtype, kFactors[src.pick(0, 9)]);
    case 3: return UOp::const_int(dtype, -kFactors[src.pick(0, 9)]);
    case 4: return UOp::const_int(dtype, src.pick(-100000, 100000));
    default: {
      const int64_t big[] = {dtype.int_max(), dtype.int_min(), dtype.int_max() / 2 + 1, 2147483647, -2147483648LL};
      return UOp::const_int(dtype, big[src.pick(0, 4)]);
    }
  }
}

template <class Source>
UOp random_int(Source& src, const std::vector<UOp>& vars, int depth);

template <class Source>
UOp random_bool(Source& src, const std::vector<UOp>& vars, int depth) {
  UOp a = random_int(src, vars, depth - 1), b = random_int(src, vars, depth - 1);
  switch (src.pick(0, 4)) {
    case 0:
    case 1: return a.lt(b);
    case 2: return a.eq(b);
    case 3: return a.ne(b);
    default: return a.lt(b).logical_not();
  }
}

template <class Source>
UOp random_int(Source& src, const std::vector<UOp>& vars, int depth) {
  DType dtype = vars.at(0).dtype();
  if (depth <= 0 || src.pick(0, 9) < 2)
    return src.pick(0, 2) ? vars[static_cast<size_t>(src.pick(0, static_cast<int64_t>(vars.size()) - 1))]
                          : random_const(src, dtype);
  int64_t op = src.pick(0, 11);
  if (op == 11) {
    UOp c = random_bool(src, vars, depth);
    return c.where(random_int(src, vars, depth - 1), random_int(src, vars, depth - 1));
  }
  UOp a = random_int(src, vars, depth - 1);
  // A constant right operand half the time: the shape of index arithmetic (x*c, x//c, x%c).
  UOp b = src.pick(0, 1) ? random_const(src, dtype) : random_int(src, vars, depth - 1);
  switch (op) {
    case 0:
    case 1: return a + b;
    case 2: return a - b;
    case 3:
    case 4: return a * b;
    case 5:
    case 6: return a / b;
    case 7:
    case 8: return a % b;
    case 9: return a.max(b);
    default: return a.min(b);
  }
}

// Index arithmetic, the simplifier's main diet: linear combinations of variables and of nested
// index expressions, divided and reduced by small constants, as a ShapeTracker writes them.
template <class Source>
UOp random_index(Source& src, const std::vector<UOp>& vars, int depth) {
  static constexpr int64_t kDivisors[] = {1, 2, 3, 4, 5, 6, 8, 9, 12, 16, 32, 64};
  DType dtype = vars.at(0).dtype();
  UOp sum = UOp::const_int(dtype, src.pick(-10, 50));
  for (int64_t n = src.pick(1, 4); n > 0; n--) {
    UOp term = depth > 0 && src.pick(0, 2) == 0
                   ? random_index(src, vars, depth - 1)
                   : vars[static_cast<size_t>(src.pick(0, static_cast<int64_t>(vars.size()) - 1))];
    sum = sum + term * src.pick(-3, 40);
  }
  UOp c1 = UOp::const_int(dtype, kDivisors[src.pick(0, 11)]), c2 = UOp::const_int(dtype, kDivisors[src.pick(0, 11)]);
  switch (src.pick(0, 4)) {
    case 0: return sum / c1;
    case 1: return sum % c1;
    case 2: return (sum / c1) % c2;
    case 3: return (sum % c1) / c2;
    default: return sum;
  }
}

}  // namespace tunebed::expr_gen
