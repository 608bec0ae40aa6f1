// Evaluates an index expression (ALU ops over RANGE variables and constants) for concrete values
// of the RANGEs, with core/ir's exec_alu: the same arithmetic a kernel does, int32 wraparound
// included. Used by the tests and the fuzzer to check to_indexed_uops against the naive map.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/ir/exec_alu.hpp"
#include "core/ir/uop.hpp"

namespace tunebed::naive {

class UOpEvaluator {
 public:
  // The expressions evaluated together (index and valid share subexpressions). Constants are
  // evaluated here, and every node's operands resolved to slots, so run() does no lookups.
  explicit UOpEvaluator(const std::vector<UOp>& roots) {
    std::unordered_map<const UOpNode*, size_t> slot;
    for (const UOp& r : roots) {
      for (const UOp& u : r.toposort()) {
        if (!slot.emplace(u.get(), nodes_.size()).second) continue;
        Node n{u, {}, {}};
        for (const UOp& s : u.src()) n.operands.push_back(slot.at(s.get()));
        if (u.op() == Ops::CONST)
          n.value = ConstValue::of(u);
        else if (u.op() != Ops::RANGE && !GroupOp::ALU.contains(u.op()) && u.op() != Ops::CAST)
          throw std::invalid_argument("cannot evaluate " + std::string(op_name(u.op())) +
                                      " in an index expression");
        nodes_.push_back(std::move(n));
      }
    }
    for (const UOp& r : roots) root_slots_.emplace(r.get(), slot.at(r.get()));
  }

  // Evaluates every node for RANGE(axis) = axis_values[axis]; then value(root) reads a result.
  void run(const std::vector<int64_t>& axis_values) {
    ConstValue operands[3];
    for (Node& n : nodes_) {
      Ops op = n.u.op();
      if (op == Ops::CONST) continue;
      if (op == Ops::RANGE) {
        n.value = ConstValue::integer(n.u.dtype(), axis_values.at(n.u.arg().as_int()));
        continue;
      }
      for (size_t i = 0; i < n.operands.size(); i++) operands[i] = nodes_[n.operands[i]].value;
      n.value = exec_alu(op, n.u.dtype(), std::span<const ConstValue>(operands, n.operands.size()));
    }
  }

  int64_t value(const UOp& root) const { return nodes_[root_slots_.at(root.get())].value.i; }

 private:
  struct Node {
    UOp u;
    std::vector<size_t> operands;
    ConstValue value;
  };
  std::vector<Node> nodes_;
  std::unordered_map<const UOpNode*, size_t> root_slots_;
};

}  // namespace tunebed::naive
