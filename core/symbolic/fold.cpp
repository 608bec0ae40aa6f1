// Constant folding: an ALU op (or CAST/BITCAST) whose sources are all scalar constants becomes
// the constant exec_alu computes, as the constant-folding rules of tinygrad's symbolic_simple.
// A division or modulo by a constant zero is left alone: exec_alu defines it (x//0 == 0) so the
// interpreters do not crash, but a kernel that divides by zero is wrong and folding would hide
// where. An op exec_alu cannot evaluate (THREEFRY, SIN of an int) is left alone too.
#include <stdexcept>

#include "core/ir/exec_alu.hpp"
#include "core/symbolic/rules.hpp"

namespace tunebed::symbolic_detail {

namespace {

bool scalar_const(const UOp& u) { return u.is_const() && u.dtype().count == 1; }

UOp fold(const Match& m) {
  const UOp& a = m.root;
  if (a.dtype().count != 1) return {};
  if ((a.op() == Ops::IDIV || a.op() == Ops::MOD) && a.src(1).const_value() == 0) return {};
  std::vector<ConstValue> operands;
  operands.reserve(a.src().size());
  for (const UOp& s : a.src()) operands.push_back(ConstValue::of(s));
  try {
    return exec_alu(a.op(), a.dtype(), operands).to_uop();
  } catch (const std::invalid_argument&) {
    return {};
  }
}

}  // namespace

PatternMatcher fold_rules() {
  UPat c = UPat::var().where(scalar_const);
  OpSet foldable = GroupOp::ALU | OpSet{Ops::CAST, Ops::BITCAST};
  return PatternMatcher({
      {"fold-const", UPat::ops(foldable).src_all(c), fold},
  });
}

}  // namespace tunebed::symbolic_detail
