// An exact evaluator of expression UOps for given variable values: the oracle of the
// simplifier's tests and fuzzer. It shares nothing with the rules: each node is computed by
// exec_alu, with the dtype's wraparound and C's truncating division.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/exec_alu.hpp"
#include "core/ir/uop.hpp"

namespace tunebed {

class Evaluator {
 public:
  explicit Evaluator(const UOp& root);

  // The variables (DEFINE_VAR) of the expression, sorted by name; eval takes their values in
  // this order.
  const std::vector<UOp>& vars() const { return vars_; }
  std::vector<std::string> var_names() const;

  // The root's value. Throws std::invalid_argument for a node it cannot evaluate (a LOAD) and
  // for a value outside its variable's bounds.
  ConstValue eval(const std::vector<int64_t>& values) const;

 private:
  std::vector<UOp> order_;             // parents first, root last
  std::vector<std::vector<int>> src_;  // each node's sources as indices into order_
  std::vector<int> var_index_;         // for DEFINE_VARs: the index into vars_, else -1
  std::vector<UOp> vars_;
  mutable std::vector<ConstValue> values_;
};

// Where two expressions differ: the variable values and both results.
struct Mismatch {
  std::vector<std::pair<std::string, int64_t>> assignment;
  ConstValue a, b;
  std::string to_string() const;  // "a=3 b=-1: 7:int64 vs 6:int64"
};

// Compares a and b (over a's variables, which must include b's) on every assignment when the
// domain has at most `exhaustive_limit` points, else on `samples` assignments drawn from a
// generator seeded with `seed`, biased to the bounds, zero and +-1.
std::optional<Mismatch> find_mismatch(const UOp& a, const UOp& b, uint64_t exhaustive_limit, int samples,
                                      uint64_t seed);

}  // namespace tunebed
