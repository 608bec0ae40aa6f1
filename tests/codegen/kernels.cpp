// Builders of test kernels, split_axis (tinygrad's shift_to with the new axis last) and with_opts.
#include "tests/codegen/kernels.hpp"

#include <algorithm>
#include <map>

#include "core/opt/kernel.hpp"

namespace tunebed::testing {

namespace {

UOp global(int64_t i, int64_t size) {
  return UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr_to(size), {}, Arg(i));
}

UOp view(const UOp& buf, const ShapeTracker& st) {
  return UOp::make(Ops::VIEW, buf.dtype(), {buf}, st.to_arg());
}

UOp load(const UOp& buf, const ShapeTracker& st) {
  return UOp::make(Ops::LOAD, dtypes::float32, {view(buf, st)});
}

UOp kernel(const UOp& store) {
  UOp ast = UOp::make(Ops::SINK, dtypes::void_, {store});
  return with_kernel_info(ast, no_opts_info(ast));
}

UOp store(const UOp& buf, const ShapeTracker& st, const UOp& val) {
  return UOp::make(Ops::STORE, dtypes::void_, {view(buf, st), val});
}

UOp reduce_add(const UOp& x, std::vector<int64_t> axes) {
  return UOp::make(Ops::REDUCE_AXIS, x.dtype(), {x}, Arg::tuple({Arg(Ops::ADD), Arg::ints(axes)}));
}

}  // namespace

UOp elementwise(Ops op, int64_t n) {
  ShapeTracker st = ShapeTracker::from_shape({n});
  return kernel(store(global(0, n), st, load(global(1, n), st).alu(op, load(global(2, n), st))));
}

UOp elementwise_add(int64_t n) { return elementwise(Ops::ADD, n); }

UOp sum_rows(int64_t m, int64_t k) {
  ShapeTracker in = ShapeTracker::from_shape({m, k}), out = ShapeTracker::from_shape({m, 1});
  return kernel(store(global(0, m), out, reduce_add(load(global(1, m * k), in), {1})));
}

UOp sum_broadcast(int64_t m, int64_t k) {
  ShapeTracker in = ShapeTracker::from_shape({1, k}).expand({m, k}), out = ShapeTracker::from_shape({m, 1});
  return kernel(store(global(0, m), out, reduce_add(load(global(1, k), in), {1})));
}

UOp matmul(int64_t m, int64_t n, int64_t k) {
  // Full shape (m, n, k): a broadcast along n, b along m, the output along k.
  ShapeTracker a = ShapeTracker::from_shape({m, 1, k}).expand({m, n, k});
  ShapeTracker b = ShapeTracker::from_shape({k, n}).permute({1, 0}).reshape({1, n, k}).expand({m, n, k});
  ShapeTracker c = ShapeTracker::from_shape({m, n, 1});
  return kernel(
      store(global(0, m * n), c, reduce_add(load(global(1, m * k), a) * load(global(2, k * n), b), {2})));
}

UOp split_axis(const UOp& ast, int64_t axis, int64_t amount, AxisType type) {
  KernelInfo info = kernel_info(ast);
  const size_t rank = info.axis_types.size();
  std::vector<int64_t> to_end;  // the permutation moving axis + 1 (the inner part) last
  for (size_t i = 0; i <= rank; i++)
    if (i != static_cast<size_t>(axis) + 1) to_end.push_back(static_cast<int64_t>(i));
  to_end.push_back(axis + 1);
  auto split = [&](const ShapeTracker& st) {
    SymShape s = st.shape();
    const sint size = s.at(axis);
    s[axis] = size == sint(1) ? sint(1) : floordiv(size, amount);
    s.insert(s.begin() + axis + 1, size == sint(1) ? sint(1) : sint(amount));
    return st.reshape(s).permute(to_end);
  };
  std::map<const UOpNode*, UOp> done;
  for (const UOp& u : ast.toposort()) {
    std::vector<UOp> srcs;
    for (const UOp& s : u.src()) srcs.push_back(done.at(s.get()));
    UOp v = u.with_src(srcs);
    if (u.op() == Ops::VIEW) v = v.with_arg(split(u.arg().as_object<ShapeTracker>()).to_arg());
    if (u.op() == Ops::REDUCE_AXIS) {
      std::vector<int64_t> axes = u.arg().as_tuple().at(1).as_ints();
      if (std::find(axes.begin(), axes.end(), axis) != axes.end()) axes.push_back(static_cast<int64_t>(rank));
      v = v.with_arg(Arg::tuple({u.arg().as_tuple().at(0), Arg::ints(axes)}));
    }
    done[u.get()] = v;
  }
  info.axis_types.push_back(type);
  UOp out = done.at(ast.get());
  info.name = default_kernel_name(out);
  return with_kernel_info(out, info);
}

UOp with_opts(const UOp& ast, std::string_view opts) {
  return Kernel(ast, Renderer::cpu(1)).apply_opts(parse_opts(opts)).get_optimized_ast();
}

}  // namespace tunebed::testing
