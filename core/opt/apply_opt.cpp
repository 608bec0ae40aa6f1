// Kernel::apply_opt: tinygrad's legality rules, one check (and one message) per rule.
//
// Every check runs before the Kernel changes (the shared-memory bound checks the changed copy),
// and PADTO builds its padded trackers aside, so an opt that is refused leaves the Kernel exactly
// as it was (tinygrad may leave a PADTO half done).
// tunebed refuses a few inputs tinygrad would mis-read: a negative axis or amount (Python would
// index from the end) and a missing axis or amount (tinygrad reads None as the last axis).
#include <algorithm>

#include "core/opt/kernel.hpp"

namespace tunebed {

namespace {

void check(bool cond, const std::string& msg) {
  if (!cond) throw KernelOptError(msg);
}

std::string list(const std::vector<int>& xs) {
  std::string s = "[";
  for (size_t i = 0; i < xs.size(); i++) s += (i ? ", " : "") + std::to_string(xs[i]);
  return s + "]";
}

std::string type_name(AxisType t) { return std::string(axis_type_name(t)); }

int64_t prod_int(const SymShape& full, const std::vector<int>& axes) {
  int64_t p = 1;
  for (int a : axes) p *= full[a].to_int();
  return p;
}

}  // namespace

int Kernel::real_axis(OptOps op, std::optional<int> axis) const {
  std::string name(optops_name(op));
  check(axis.has_value(), name + " needs an axis");
  check(*axis >= 0, "invalid axis " + std::to_string(*axis) + " for " + name + ": axes count from 0");
  if (op == OptOps::UNROLL) {
    std::vector<int> dims = unrollable_dims();
    check(*axis < static_cast<int>(dims.size()),
          "UNROLL axis " + std::to_string(*axis) +
              " is not an unrollable dim: UNROLL counts the reduce axes of size > 1 "
              "that are not already unrolled, here " +
              std::to_string(dims.size()) + " of them");
    return dims[*axis];
  }
  if (op == OptOps::GROUP || op == OptOps::GROUPTOP) {
    std::vector<int> reduces = axes_of({AxisType::REDUCE});
    check(*axis < static_cast<int>(reduces.size()),
          name + " axis " + std::to_string(*axis) + " is not a reduce axis: " + name +
              " counts the REDUCE axes, here " + std::to_string(reduces.size()) + " of them");
    return reduces[*axis];
  }
  check(*axis < shape_len(), "invalid axis " + std::to_string(*axis) + " for " + name + ": the kernel has " +
                                 std::to_string(shape_len()) + " axes " + to_string(full_shape()));
  return *axis;
}

// The bytes of the workgroup buffer a grouped reduce goes through (group_reduce in
// optimized_ast.cpp): one accumulator per LOCAL, GROUP_REDUCE and UPCAST element.
int64_t Kernel::shared_memory_bytes() const {
  if (!reduceop() || !group_for_reduces()) return 0;
  return reduceop()->dtype().itemsize() *
         prod_int(full_shape(), axes_of({AxisType::LOCAL, AxisType::GROUP_REDUCE, AxisType::UPCAST}));
}

// tunebed, not tinygrad: the shared-memory bound holds for the kernel an opt makes. tinygrad
// estimates it before the opt as amt * upcasts * locals, which leaves out the grouped axes and
// skips PADTO, so LOCAL:0:16 GROUP:0:16 LOCAL:0:2 PADTO:3:32 UPCAST:0:0 on a 16x32x64 matmul
// passed with a 64 KiB buffer that NVRTC refuses (48 KiB max). An opt on a kernel that groups
// or may group runs on a copy, so that a refused opt still leaves the Kernel as it was.
void Kernel::apply_opt(const Opt& opt, bool append_opt) {
  const bool groups = opt.op == OptOps::GROUP || opt.op == OptOps::GROUPTOP;
  if (!reduceop() || !(groups || group_for_reduces())) return apply_opt_unbounded(opt, append_opt);
  Kernel next = *this;
  next.apply_opt_unbounded(opt, append_opt);
  const int64_t smem = next.shared_memory_bytes();
  check(smem <= opts_.shared_max, "exceeds maximum shared memory size: needs " + std::to_string(smem) +
                                      " bytes, max " + std::to_string(opts_.shared_max));
  *this = std::move(next);
}

void Kernel::apply_opt_unbounded(const Opt& opt, bool append_opt) {
  std::string name(optops_name(opt.op));
  if (dont_use_locals_)
    check(opt.op != OptOps::LOCAL && opt.op != OptOps::GROUP && opt.op != OptOps::GROUPTOP,
          "not using locals: " + name + " after NOLOCALS");

  if (opt.op == OptOps::TC) {
    check(applied_opts_.empty(), "tensor core opts must be first");
    check(!opts_.tensor_cores.empty(), "target " + opts_.device + " has no tensor cores");
    check(opt.axis.has_value(), "tensor core opts must have an axis");
    const TCArg* tc = std::get_if<TCArg>(&opt.arg);
    check(tc != nullptr, "tensor core opts must have an arg (tc_select, tc_opt, use_tensor_cores)");
    check(-1 <= tc->tc_select && tc->tc_select < static_cast<int>(opts_.tensor_cores.size()),
          "tensor core opts must have a valid tc_select: " + std::to_string(tc->tc_select) +
              " is not in -1.." + std::to_string(opts_.tensor_cores.size() - 1));
    check(0 <= tc->tc_opt && tc->tc_opt <= 2,
          "tensor core opts must have a valid tc_opt (0..2), got " + std::to_string(tc->tc_opt));
    check(0 < tc->use_tensor_cores && tc->use_tensor_cores <= 2,
          "use_tensor_cores value is not valid (1 or 2), got " + std::to_string(tc->use_tensor_cores));
    check(apply_tc_opt(tc->use_tensor_cores, *opt.axis, tc->tc_select, tc->tc_opt),
          "no tensor core available: the reduce is not a sum of a product of two " +
              std::string(tc->tc_opt >= 1 ? "(cast) " : "") + "loads in a tensor core's dtypes" +
              (tc->tc_opt < 2 ? " whose dims divide the axes" : "") + ", or TC axis " + std::to_string(*opt.axis) +
              " is not one of its (N, M, K) choices");
    applied_opts_.push_back(opt);
    return;
  }

  int axis = opt.op == OptOps::NOLOCALS ? -1 : real_axis(opt.op, opt.axis);
  int64_t amt = -1;
  if (opt.op == OptOps::SWAP) {
    check(opt.amount().has_value(), "SWAP needs the other axis as its arg");
    amt = real_axis(opt.op, opt.amount());
  } else if (opt.op != OptOps::NOLOCALS) {
    check(opt.amount().has_value(), name + " needs an int amount");
    const sint& size = full_shape()[axis];
    check(*opt.amount() >= 0, name + " amount " + std::to_string(*opt.amount()) + " is negative");
    check(*opt.amount() != 0 || size.is_int(), name + ":" + std::to_string(*opt.axis) +
                                                   ":0 takes the whole axis, which is symbolic (" +
                                                   to_string(size) + ")");
    amt = *opt.amount() != 0 ? *opt.amount() : size.to_int();
    check(amt != 1, "shift/padto of amt=1 is meaningless");
    if (opt.op != OptOps::PADTO)
      check(resolve(eq(floormod(size, amt), 0), false),
            "no longer valid shift: axis " + std::to_string(axis) + " has size " + to_string(size) +
                ", which amt=" + std::to_string(amt) + " does not divide");
  }

  switch (opt.op) {
    case OptOps::LOCAL:
      check(opts_.has_local, "target " + opts_.device + " does not support local");
      check(axis_types_[axis] == AxisType::GLOBAL,
            "local is for globals: axis " + std::to_string(axis) + " is " + type_name(axis_types_[axis]));
      shift_to(axis, amt, AxisType::LOCAL, false,
               std::ranges::max(axes_of({AxisType::GLOBAL, AxisType::LOCAL})) + 1);
      break;
    case OptOps::GROUP:
    case OptOps::GROUPTOP: {
      check(opts_.has_local && opts_.has_shared,
            "target " + opts_.device + " does not support local or shared mem");
      check(!tensor_core_, "can't group with tensor cores");
      std::vector<int64_t> reduce_axes;
      for (const UOp& r : reduceops_)
        for (int64_t a : r.arg().as_tuple().at(1).as_ints()) reduce_axes.push_back(a);
      std::vector<int64_t> unique = reduce_axes;
      std::ranges::sort(unique);
      check(std::ranges::adjacent_find(unique) == unique.end(), "can't group with parallel reduces");
      // tunebed, not tinygrad: the local buffer's view keeps only the grouped reduce's axes, so an
      // outer reduce over its result would lose its own loop and compute the wrong answer.
      check(reduceops_.size() == 1, "can't group a kernel with nested reduces");
      shift_to(axis, amt, AxisType::GROUP_REDUCE, opt.op == OptOps::GROUPTOP,
               std::ranges::min(axes_of({AxisType::REDUCE})));
      break;
    }
    case OptOps::UNROLL:
      check(amt <= opts_.unroll_max,
            "don't unroll more than " + std::to_string(opts_.unroll_max) + ", got " + std::to_string(amt));
      shift_to(axis, amt, AxisType::UNROLL);
      break;
    case OptOps::UPCAST: {
      std::vector<int> dims = upcastable_dims();
      check(std::ranges::find(dims, axis) != dims.end(), "axis=" + std::to_string(axis) +
                                                             " not in upcastable_dims=" + list(dims) +
                                                             " (loop axes of an int size > 1)");
      // tinygrad's assumption: the first LOCAL axes are the tensor core's threads.
      if (tensor_core_) {
        std::vector<int> locals = axes_of({AxisType::LOCAL});
        locals.resize(std::min<size_t>(locals.size(), tensor_core_->local_axes()));
        check(std::ranges::find(locals, axis) == locals.end(), "can't upcast TC locals");
      }
      check(amt <= opts_.upcast_max,
            "don't upcast more than " + std::to_string(opts_.upcast_max) + ", got " + std::to_string(amt));
      shift_to(
          axis, amt, AxisType::UPCAST, false,
          std::ranges::max(axes_of({AxisType::GLOBAL, AxisType::LOCAL, AxisType::LOOP, AxisType::UPCAST})) +
              1);
      break;
    }
    case OptOps::NOLOCALS:
      check(opts_.has_local && !dont_use_locals_,
            "NOLOCALS is meaningless if target does not support local or already not using locals");
      check(axes_of({AxisType::LOCAL}).empty() && group_for_reduces() == 0,
            "can't have no locals with locals");
      dont_use_locals_ = true;
      break;
    case OptOps::SWAP: {
      check(axis < amt, "swap is only for axis < amt, getting amt=" + std::to_string(amt) +
                            ", axis=" + std::to_string(axis));
      check(axis_types_[axis] == AxisType::GLOBAL && axis_types_[amt] == AxisType::GLOBAL,
            "swap is for globals: axis " + std::to_string(axis) + " is " + type_name(axis_types_[axis]) +
                ", axis " + std::to_string(amt) + " is " + type_name(axis_types_[amt]));
      std::vector<int64_t> perm;
      for (int i = 0; i < shape_len(); i++) perm.push_back(i);
      std::swap(perm[axis], perm[amt]);
      permute(perm);
      break;
    }
    case OptOps::PADTO:
      apply_padto(axis, amt);
      break;
    case OptOps::THREAD:
      apply_thread(axis, amt);
      break;
    case OptOps::TC:
      break;  // handled above
  }
  if (append_opt) applied_opts_.push_back(opt);
  if (simplify_ones() && tensor_core_opts_) tensor_core_opts_->fix_axes(axis);
}

Kernel& Kernel::apply_opts(const std::vector<Opt>& opts) {
  for (const Opt& o : opts) apply_opt(o);
  return *this;
}

// PADTO pads the axis on the right up to a multiple of amt; the padding reads 0 (masked), which
// is harmless for a loop axis and for a sum whose sources keep f(0) = 0.
void Kernel::apply_padto(int axis, int64_t amt) {
  check(vars_.empty(), "PADTO does not work with symbolic shape");
  check(axis_types_[axis] != AxisType::UPCAST && axis_types_[axis] != AxisType::UNROLL,
        "cannot pad upcasted: axis " + std::to_string(axis) + " is " + type_name(axis_types_[axis]));
  if (const UOp* r = reduceop();
      r && (axis_types_[axis] == AxisType::GROUP_REDUCE || axis_types_[axis] == AxisType::REDUCE)) {
    Ops rop = r->arg().as_tuple().at(0).as_op();
    check(rop == Ops::ADD,
          "cannot pad a reduce axis of a " + std::string(op_name(rop)) + " reduce: only a sum can be padded");
    for (const UOp& u : r->toposort())
      check(!GroupOp::UnsafePad.contains(u.op()),
            "cannot pad the sum: its source uses " + std::string(op_name(u.op())) + ", and f(0) != 0 for it");
  }
  std::vector<ShapeTracker> padded_sts = sts_;
  bool padded = false;
  for (ShapeTracker& st : padded_sts) {
    int64_t s = st.shape()[axis].to_int();
    if (s == 1) continue;  // reduced in this tracker
    check(s > amt / 4, "pad adds more than quadruple the work: axis " + std::to_string(axis) + " has size " +
                           std::to_string(s) + ", which is not > amt//4=" + std::to_string(amt / 4));
    if (int64_t ru = (s + amt - 1) / amt * amt - s) {
      Mask pad(st.shape().size(), {0, 0});
      pad[axis] = {0, ru};
      st = st.pad(pad);
      padded = true;
    }
  }
  check(padded, "nothing was padded: axis " + std::to_string(axis) + " is already a multiple of " +
                    std::to_string(amt));
  sts_ = std::move(padded_sts);
}

// THREAD (tunebed): the CPU runtime runs the slices of axis 0 on a thread pool. The split takes
// the outer part of a loop axis and makes it the outermost axis, so that each core gets one
// contiguous slab of the output; one THREAD axis per kernel, no wider than the cores.
void Kernel::apply_thread(int axis, int64_t amt) {
  check(opts_.threads > 0, "target " + opts_.device + " has no thread pool: THREAD is for the CPU");
  check(axes_of({AxisType::THREAD}).empty(), "THREAD is already applied: a kernel has one THREAD axis");
  check(axis_types_[axis] == AxisType::LOOP, "THREAD splits a loop (global) axis: axis " +
                                                 std::to_string(axis) + " is " +
                                                 type_name(axis_types_[axis]));
  check(amt <= opts_.threads, "THREAD amount " + std::to_string(amt) + " exceeds the " +
                                  std::to_string(opts_.threads) + " cores of the target");
  shift_to(axis, amt, AxisType::THREAD, true, 0);
}

}  // namespace tunebed
