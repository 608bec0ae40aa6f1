// Kernel::why_illegal and apply_opt: tinygrad's legality rules, one check (and one message) per
// rule, decided before the Kernel changes.
//
// why_illegal runs every rule on the Kernel as it is and builds a message only for the rule that
// fails, so that search can try hundreds of actions per state without copying the Kernel or
// throwing (kernel_actions). apply_opt runs the same rules, then changes the Kernel; a refused
// opt leaves it exactly as it was. Two rules are about the kernel an opt makes: the shared-memory
// bound, predicted from the axis sizes (shared_memory_after), and TC, whose matching is its
// application (why_illegal tries it on a copy).
// tunebed refuses a few inputs tinygrad would mis-read: a negative axis or amount (Python would
// index from the end) and a missing axis or amount (tinygrad reads None as the last axis).
#include <algorithm>

#include "core/opt/kernel.hpp"

namespace tunebed {

namespace {

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

// The axis types whose sizes multiply into a grouped reduce's workgroup buffer.
bool in_workgroup_buffer(AxisType t) {
  return t == AxisType::LOCAL || t == AxisType::GROUP_REDUCE || t == AxisType::UPCAST;
}

AxisType shifted_type(OptOps op) {
  switch (op) {
    case OptOps::LOCAL: return AxisType::LOCAL;
    case OptOps::GROUP:
    case OptOps::GROUPTOP: return AxisType::GROUP_REDUCE;
    case OptOps::UPCAST: return AxisType::UPCAST;
    case OptOps::UNROLL: return AxisType::UNROLL;
    case OptOps::THREAD: return AxisType::THREAD;
    default: return AxisType::LOOP;  // the ops that shift no axis
  }
}

}  // namespace

std::variant<int, std::string> Kernel::real_axis(OptOps op, std::optional<int> axis) const {
  const std::string_view name = optops_name(op);
  if (!axis) return std::string(name) + " needs an axis";
  if (*axis < 0) return "invalid axis " + std::to_string(*axis) + " for " + std::string(name) + ": axes count from 0";
  if (op == OptOps::UNROLL) {
    std::vector<int> dims = unrollable_dims();
    if (*axis >= static_cast<int>(dims.size()))
      return "UNROLL axis " + std::to_string(*axis) +
             " is not an unrollable dim: UNROLL counts the reduce axes of size > 1 that are not already "
             "unrolled, here " +
             std::to_string(dims.size()) + " of them";
    return dims[*axis];
  }
  if (op == OptOps::GROUP || op == OptOps::GROUPTOP) {
    std::vector<int> reduces = axes_of({AxisType::REDUCE});
    if (*axis >= static_cast<int>(reduces.size()))
      return std::string(name) + " axis " + std::to_string(*axis) + " is not a reduce axis: " + std::string(name) +
             " counts the REDUCE axes, here " + std::to_string(reduces.size()) + " of them";
    return reduces[*axis];
  }
  if (*axis >= shape_len())
    return "invalid axis " + std::to_string(*axis) + " for " + std::string(name) + ": the kernel has " +
           std::to_string(shape_len()) + " axes " + to_string(full_shape());
  return *axis;
}

// The bytes of the workgroup buffer a grouped reduce goes through (group_reduce in
// optimized_ast.cpp): one accumulator per LOCAL, GROUP_REDUCE and UPCAST element.
int64_t Kernel::shared_memory_bytes() const {
  if (!reduceop() || !group_for_reduces()) return 0;
  return reduceop()->dtype().itemsize() *
         prod_int(full_shape(), axes_of({AxisType::LOCAL, AxisType::GROUP_REDUCE, AxisType::UPCAST}));
}

// shared_memory_bytes of the kernel that OP on AXIS by AMT makes, without making it: a shift
// splits the axis into AMT (the new type) and size/AMT (its old type), and PADTO rounds the
// axis's size up to a multiple of AMT. An UNROLL of a whole grouped axis may leave no group at
// all (0 bytes); the prediction is then the smaller buffer, which passes all the same.
int64_t Kernel::shared_memory_after(OptOps op, int axis, int64_t amt) const {
  const bool groups = op == OptOps::GROUP || op == OptOps::GROUPTOP || group_for_reduces();
  if (!reduceop() || !groups) return 0;
  int64_t elements = prod_int(full_shape(), axes_of({AxisType::LOCAL, AxisType::GROUP_REDUCE, AxisType::UPCAST}));
  const bool old_in = axis >= 0 && in_workgroup_buffer(axis_types_[axis]);
  if (op == OptOps::PADTO) {
    if (old_in) {
      const int64_t size = full_shape()[axis].to_int();
      elements = elements / size * ((size + amt - 1) / amt * amt);
    }
  } else if (op != OptOps::SWAP && op != OptOps::NOLOCALS) {
    const bool new_in = in_workgroup_buffer(shifted_type(op));
    if (new_in && !old_in) elements *= amt;
    if (old_in && !new_in) elements /= amt;
  }
  return reduceop()->dtype().itemsize() * elements;
}

std::variant<Kernel::Legal, std::string> Kernel::check_opt(const Opt& opt) const {
  const std::string name(optops_name(opt.op));
  if (dont_use_locals_ && (opt.op == OptOps::LOCAL || opt.op == OptOps::GROUP || opt.op == OptOps::GROUPTOP))
    return "not using locals: " + name + " after NOLOCALS";

  if (opt.op == OptOps::TC) {
    if (!applied_opts_.empty()) return "tensor core opts must be first";
    if (opts_.tensor_cores.empty()) return "target " + opts_.device + " has no tensor cores";
    if (!opt.axis) return "tensor core opts must have an axis";
    const TCArg* tc = std::get_if<TCArg>(&opt.arg);
    if (!tc) return "tensor core opts must have an arg (tc_select, tc_opt, use_tensor_cores)";
    if (tc->tc_select < -1 || tc->tc_select >= static_cast<int>(opts_.tensor_cores.size()))
      return "tensor core opts must have a valid tc_select: " + std::to_string(tc->tc_select) + " is not in -1.." +
             std::to_string(opts_.tensor_cores.size() - 1);
    if (tc->tc_opt < 0 || tc->tc_opt > 2)
      return "tensor core opts must have a valid tc_opt (0..2), got " + std::to_string(tc->tc_opt);
    if (tc->use_tensor_cores <= 0 || tc->use_tensor_cores > 2)
      return "use_tensor_cores value is not valid (1 or 2), got " + std::to_string(tc->use_tensor_cores);
    return Legal{*opt.axis, -1};
  }

  int axis = -1;
  if (opt.op != OptOps::NOLOCALS) {
    std::variant<int, std::string> real = real_axis(opt.op, opt.axis);
    if (auto* why = std::get_if<std::string>(&real)) return std::move(*why);
    axis = std::get<int>(real);
  }
  int64_t amt = -1;
  if (opt.op == OptOps::SWAP) {
    if (!opt.amount()) return "SWAP needs the other axis as its arg";
    std::variant<int, std::string> other = real_axis(opt.op, opt.amount());
    if (auto* why = std::get_if<std::string>(&other)) return std::move(*why);
    amt = std::get<int>(other);
  } else if (opt.op != OptOps::NOLOCALS) {
    if (!opt.amount()) return name + " needs an int amount";
    const sint& size = full_shape()[axis];
    if (*opt.amount() < 0) return name + " amount " + std::to_string(*opt.amount()) + " is negative";
    if (*opt.amount() == 0 && !size.is_int())
      return name + ":" + std::to_string(*opt.axis) + ":0 takes the whole axis, which is symbolic (" +
             to_string(size) + ")";
    amt = *opt.amount() != 0 ? *opt.amount() : size.to_int();
    if (amt == 1) return "shift/padto of amt=1 is meaningless";
    if (opt.op != OptOps::PADTO && !resolve(eq(floormod(size, amt), 0), false))
      return "no longer valid shift: axis " + std::to_string(axis) + " has size " + to_string(size) +
             ", which amt=" + std::to_string(amt) + " does not divide";
  }

  if (std::optional<std::string> why = why_op_illegal(opt.op, axis, amt)) return std::move(*why);
  if (const int64_t smem = shared_memory_after(opt.op, axis, amt); smem > opts_.shared_max)
    return "exceeds maximum shared memory size: needs " + std::to_string(smem) + " bytes, max " +
           std::to_string(opts_.shared_max);
  return Legal{axis, amt};
}

// The rules of each op on its resolved axis and amount (SWAP's amount is the other axis).
std::optional<std::string> Kernel::why_op_illegal(OptOps op, int axis, int64_t amt) const {
  const std::string name(optops_name(op));
  switch (op) {
    case OptOps::LOCAL:
      if (!opts_.has_local) return "target " + opts_.device + " does not support local";
      if (axis_types_[axis] != AxisType::GLOBAL)
        return "local is for globals: axis " + std::to_string(axis) + " is " + type_name(axis_types_[axis]);
      return std::nullopt;
    case OptOps::GROUP:
    case OptOps::GROUPTOP: {
      if (!opts_.has_local || !opts_.has_shared) return "target " + opts_.device + " does not support local or shared mem";
      if (tensor_core_) return "can't group with tensor cores";
      std::vector<int64_t> reduce_axes;
      for (const UOp& r : reduceops_)
        for (int64_t a : r.arg().as_tuple().at(1).as_ints()) reduce_axes.push_back(a);
      std::ranges::sort(reduce_axes);
      if (std::ranges::adjacent_find(reduce_axes) != reduce_axes.end()) return "can't group with parallel reduces";
      // tunebed, not tinygrad: the local buffer's view keeps only the grouped reduce's axes, so an
      // outer reduce over its result would lose its own loop and compute the wrong answer.
      if (reduceops_.size() != 1) return "can't group a kernel with nested reduces";
      return std::nullopt;
    }
    case OptOps::UNROLL:
      if (amt > opts_.unroll_max)
        return "don't unroll more than " + std::to_string(opts_.unroll_max) + ", got " + std::to_string(amt);
      return std::nullopt;
    case OptOps::UPCAST: {
      std::vector<int> dims = upcastable_dims();
      if (std::ranges::find(dims, axis) == dims.end())
        return "axis=" + std::to_string(axis) + " not in upcastable_dims=" + list(dims) +
               " (loop axes of an int size > 1)";
      // tinygrad's assumption: the first LOCAL axes are the tensor core's threads.
      if (tensor_core_) {
        std::vector<int> locals = axes_of({AxisType::LOCAL});
        locals.resize(std::min<size_t>(locals.size(), tensor_core_->local_axes()));
        if (std::ranges::find(locals, axis) != locals.end()) return "can't upcast TC locals";
      }
      if (amt > opts_.upcast_max)
        return "don't upcast more than " + std::to_string(opts_.upcast_max) + ", got " + std::to_string(amt);
      return std::nullopt;
    }
    case OptOps::NOLOCALS:
      if (!opts_.has_local || dont_use_locals_)
        return "NOLOCALS is meaningless if target does not support local or already not using locals";
      if (!axes_of({AxisType::LOCAL}).empty() || group_for_reduces() != 0) return "can't have no locals with locals";
      return std::nullopt;
    case OptOps::SWAP:
      if (axis >= amt)
        return "swap is only for axis < amt, getting amt=" + std::to_string(amt) + ", axis=" + std::to_string(axis);
      if (axis_types_[axis] != AxisType::GLOBAL || axis_types_[amt] != AxisType::GLOBAL)
        return "swap is for globals: axis " + std::to_string(axis) + " is " + type_name(axis_types_[axis]) +
               ", axis " + std::to_string(amt) + " is " + type_name(axis_types_[amt]);
      return std::nullopt;
    case OptOps::PADTO:
      return why_padto_illegal(axis, amt);
    case OptOps::THREAD:
      if (opts_.threads <= 0) return "target " + opts_.device + " has no thread pool: THREAD is for the CPU";
      if (!axes_of({AxisType::THREAD}).empty()) return "THREAD is already applied: a kernel has one THREAD axis";
      if (axis_types_[axis] != AxisType::LOOP)
        return "THREAD splits a loop (global) axis: axis " + std::to_string(axis) + " is " +
               type_name(axis_types_[axis]);
      if (amt > opts_.threads)
        return "THREAD amount " + std::to_string(amt) + " exceeds the " + std::to_string(opts_.threads) +
               " cores of the target";
      return std::nullopt;
    case OptOps::TC:
      return std::nullopt;  // check_opt's own
  }
  return std::nullopt;
}

// PADTO pads the axis on the right up to a multiple of amt; the padding reads 0 (masked), which
// is harmless for a loop axis and for a sum whose sources keep f(0) = 0.
std::optional<std::string> Kernel::why_padto_illegal(int axis, int64_t amt) const {
  if (!vars_.empty()) return "PADTO does not work with symbolic shape";
  if (axis_types_[axis] == AxisType::UPCAST || axis_types_[axis] == AxisType::UNROLL)
    return "cannot pad upcasted: axis " + std::to_string(axis) + " is " + type_name(axis_types_[axis]);
  if (const UOp* r = reduceop();
      r && (axis_types_[axis] == AxisType::GROUP_REDUCE || axis_types_[axis] == AxisType::REDUCE)) {
    Ops rop = r->arg().as_tuple().at(0).as_op();
    if (rop != Ops::ADD)
      return "cannot pad a reduce axis of a " + std::string(op_name(rop)) + " reduce: only a sum can be padded";
    for (const UOp& u : r->toposort())
      if (GroupOp::UnsafePad.contains(u.op()))
        return "cannot pad the sum: its source uses " + std::string(op_name(u.op())) + ", and f(0) != 0 for it";
  }
  bool pads = false;
  for (const ShapeTracker& st : sts_) {
    const int64_t s = st.shape()[axis].to_int();
    if (s == 1) continue;  // reduced in this tracker
    if (s <= amt / 4)
      return "pad adds more than quadruple the work: axis " + std::to_string(axis) + " has size " + std::to_string(s) +
             ", which is not > amt//4=" + std::to_string(amt / 4);
    pads = pads || s % amt != 0;
  }
  if (!pads) return "nothing was padded: axis " + std::to_string(axis) + " is already a multiple of " + std::to_string(amt);
  return std::nullopt;
}

std::optional<std::string> Kernel::why_illegal(const Opt& opt) const {
  std::variant<Legal, std::string> checked = check_opt(opt);
  if (auto* why = std::get_if<std::string>(&checked)) return std::move(*why);
  if (opt.op != OptOps::TC) return std::nullopt;
  Kernel trial = *this;  // a tensor core is matched by applying it
  return trial.try_apply_opt(opt);
}

std::optional<std::string> Kernel::try_apply_opt(const Opt& opt, bool append_opt) {
  std::variant<Legal, std::string> checked = check_opt(opt);
  if (auto* why = std::get_if<std::string>(&checked)) return std::move(*why);
  const auto [axis, amt] = std::get<Legal>(checked);
  if (opt.op == OptOps::TC) {
    const TCArg& tc = std::get<TCArg>(opt.arg);
    if (!apply_tc_opt(tc.use_tensor_cores, axis, tc.tc_select, tc.tc_opt))
      return "no tensor core available: the reduce is not a sum of a product of two " +
             std::string(tc.tc_opt >= 1 ? "(cast) " : "") + "loads in a tensor core's dtypes" +
             (tc.tc_opt < 2 ? " whose dims divide the axes" : "") + ", or TC axis " + std::to_string(axis) +
             " is not one of its (N, M, K) choices";
    applied_opts_.push_back(opt);
    return std::nullopt;
  }
  apply_legal(opt.op, axis, amt);
  if (append_opt) applied_opts_.push_back(opt);
  if (simplify_ones() && tensor_core_opts_) tensor_core_opts_->fix_axes(axis);
  if (shared_memory_bytes() > opts_.shared_max)
    throw std::logic_error("shared_memory_after predicted a smaller buffer than " + to_string(opt) + " made");
  return std::nullopt;
}

void Kernel::apply_opt(const Opt& opt, bool append_opt) {
  if (std::optional<std::string> why = try_apply_opt(opt, append_opt)) throw KernelOptError(*why);
}

// The change an opt makes, once check_opt has passed it.
void Kernel::apply_legal(OptOps op, int axis, int64_t amt) {
  switch (op) {
    case OptOps::LOCAL:
      shift_to(axis, amt, AxisType::LOCAL, false, std::ranges::max(axes_of({AxisType::GLOBAL, AxisType::LOCAL})) + 1);
      break;
    case OptOps::GROUP:
    case OptOps::GROUPTOP:
      shift_to(axis, amt, AxisType::GROUP_REDUCE, op == OptOps::GROUPTOP, std::ranges::min(axes_of({AxisType::REDUCE})));
      break;
    case OptOps::UNROLL:
      shift_to(axis, amt, AxisType::UNROLL);
      break;
    case OptOps::UPCAST:
      shift_to(axis, amt, AxisType::UPCAST, false,
               std::ranges::max(axes_of({AxisType::GLOBAL, AxisType::LOCAL, AxisType::LOOP, AxisType::UPCAST})) + 1);
      break;
    case OptOps::NOLOCALS:
      dont_use_locals_ = true;
      break;
    case OptOps::SWAP: {
      std::vector<int64_t> perm;
      for (int i = 0; i < shape_len(); i++) perm.push_back(i);
      std::swap(perm[axis], perm[amt]);
      permute(perm);
      break;
    }
    case OptOps::PADTO:
      for (ShapeTracker& st : sts_) {
        const int64_t s = st.shape()[axis].to_int();
        if (const int64_t extra = (s + amt - 1) / amt * amt - s; s != 1 && extra) {
          Mask pad(st.shape().size(), {0, 0});
          pad[axis] = {0, extra};
          st = st.pad(pad);
        }
      }
      break;
    // THREAD (tunebed): the CPU runtime runs the slices of axis 0 on a thread pool. The split
    // takes the outer part of a loop axis and makes it the outermost axis, so that each core gets
    // one contiguous slab of the output.
    case OptOps::THREAD:
      shift_to(axis, amt, AxisType::THREAD, true, 0);
      break;
    case OptOps::TC:
      break;  // try_apply_opt's own
  }
}

Kernel& Kernel::apply_opts(const std::vector<Opt>& opts) {
  for (const Opt& o : opts) apply_opt(o);
  return *this;
}

}  // namespace tunebed
