// Kernel::get_optimized_ast: the AST rewritten to the kernel's shape after the opts, as
// tinygrad's fixup_ast at the seed.
//
// Each buffer access gets its tracker from the Kernel (full shape, axis i = axis i of
// axis_types); each REDUCE_AXIS gets the axes it folds in the new shape, REDUCE and UNROLL ones
// in its arg; the SINK gets the KernelInfo record. A reduce with GROUP_REDUCE axes becomes, as in
// tinygrad, a two-stage reduce through shared memory:
//
//   REDUCE_AXIS(x, (ADD, reduce+unroll axes))          each thread's partial sum
//   STORE(VIEW(DEFINE_LOCAL "temp0", st), partial)     into the workgroup's buffer
//   LOAD(VIEW(DEFINE_LOCAL, st), STORE)                read back by every thread
//   REDUCE_AXIS(load, (ADD, grouped axes))             folded across the group
//
// where st lays the buffer out as (locals, grouped, upcasts) and expands it over the globals;
// for a reduce that is not the last, the result goes through the buffer once more.
//
// tinygrad ends with graph_rewrite(view_left + view_left_through_load). On these ASTs its rules
// only fire for the VIEWs the tensor-core path builds over LOADs; tunebed's tensor-core path
// (tc_kernel.cpp) permutes those loads' trackers directly instead.
#include <algorithm>
#include <functional>
#include <unordered_map>

#include "core/opt/kernel.hpp"

namespace tunebed {

namespace {

UOp view(const UOp& buf, const ShapeTracker& st) {
  return UOp::make(Ops::VIEW, buf.dtype(), {buf}, st.to_arg());
}

// The grouped half of a reduce: partial results through a DEFINE_LOCAL, folded over `grouped`.
UOp group_reduce(const Kernel& k, const UOp& op, const UOp& partial, const std::vector<int>& grouped,
                 size_t reduce_index) {
  const SymShape& full = k.full_shape();
  std::vector<int> local_axes;
  for (int i = 0; i < k.shape_len(); i++) {
    AxisType t = k.axis_types()[i];
    if (t == AxisType::LOCAL || t == AxisType::UPCAST || std::ranges::find(grouped, i) != grouped.end())
      local_axes.push_back(i);
  }
  // The UPCAST axes last, so that they have stride 1 and can merge.
  std::vector<int> order = k.axes_of({AxisType::LOCAL});
  order.insert(order.end(), grouped.begin(), grouped.end());
  for (int a : k.axes_of({AxisType::UPCAST})) order.push_back(a);
  SymShape base_shape;
  std::vector<int64_t> permute_axes;
  for (int a : order) {
    base_shape.push_back(full[a]);
    permute_axes.push_back(std::ranges::find(local_axes, a) - local_axes.begin());
  }
  SymShape local_shape, local_src_shape;
  std::vector<int> globals = k.axes_of({AxisType::GLOBAL});
  for (int i = 0; i < k.shape_len(); i++) {
    bool in_local = std::ranges::find(local_axes, i) != local_axes.end();
    local_shape.push_back(in_local ? full[i] : sint(1));
    local_src_shape.push_back(std::ranges::find(globals, i) != globals.end() ? full[i] : local_shape.back());
  }
  ShapeTracker st =
      ShapeTracker::from_shape(base_shape).permute(permute_axes).reshape(local_shape).expand(local_src_shape);
  DType ptr = op.dtype().ptr_to(st.real_size(), AddrSpace::Local);
  UOp local_buffer = UOp::make(Ops::DEFINE_LOCAL, ptr, {}, Arg("temp" + std::to_string(reduce_index)));
  auto store_load = [&](const ShapeTracker& s, const UOp& value) {
    UOp store = UOp::make(Ops::STORE, dtypes::void_, {view(local_buffer, s), value});
    return UOp::make(Ops::LOAD, op.dtype(), {view(local_buffer, s), store});
  };
  UOp grouped_reduce = UOp::make(Ops::REDUCE_AXIS, op.dtype(), {store_load(st, partial)},
                                 Arg::tuple({op.arg().as_tuple().at(0), Arg::ints(grouped)}));
  if (op == k.reduceops().back()) return grouped_reduce;
  SymShape out_shape = local_shape;
  for (int a : grouped) out_shape[a] = 1;
  return store_load(ShapeTracker::from_shape(out_shape), grouped_reduce);
}

}  // namespace

UOp Kernel::get_optimized_ast(std::optional<std::string> name_override) const {
  std::unordered_map<const UOpNode*, UOp> memo;
  std::function<UOp(const UOp&)> fixup = [&](const UOp& op) -> UOp {
    if (auto it = memo.find(op.get()); it != memo.end()) return it->second;
    std::vector<UOp> src;
    for (const UOp& s : op.src()) src.push_back(fixup(s));
    UOp ret = op.with_src(src);
    if (auto b = std::ranges::find(bufs_, op); b != bufs_.end()) {
      src[0] = src[0].with_arg(sts_[b - bufs_.begin()].to_arg());
      ret = op.with_src(src);
    } else if (op.op() == Ops::SINK) {
      KernelInfo info{name(), axis_types_, dont_use_locals_, applied_opts_, std::nullopt};
      if (std::optional<KernelInfo> given = kernel_info_of(op))
        info.name = given->name;
      else if (name_override)
        info.name = *name_override;
      ret = ret.with_arg(info.to_record());
    } else if (op.op() == Ops::REDUCE_AXIS) {
      size_t r = std::ranges::find(reduceops_, op) - reduceops_.begin();
      const ShapeTracker &out = sts_[bufs_.size() + 2 * r], &in = sts_[bufs_.size() + 2 * r + 1];
      std::vector<int> axes, grouped;
      for (int i = 0; i < shape_len(); i++) {
        if (!resolve(ne(out.shape()[i], in.shape()[i]))) continue;
        AxisType t = axis_types_[i];
        if (t == AxisType::REDUCE || t == AxisType::UNROLL) axes.push_back(i);
        if (t == AxisType::GROUP_REDUCE) grouped.push_back(i);
      }
      if (tensor_core_ && use_tensor_cores_ == 1) {
        ret = tc_reduce(ret, axes);  // tc_kernel.cpp: a WMMA (TC forbids GROUP)
      } else {
        ret = ret.with_arg(Arg::tuple({op.arg().as_tuple().at(0), Arg::ints(axes)}));
        if (!grouped.empty()) ret = group_reduce(*this, op, ret, grouped, r);
      }
    }
    memo.emplace(op.get(), ret);
    return ret;
  };
  return fixup(ast_);
}

}  // namespace tunebed
