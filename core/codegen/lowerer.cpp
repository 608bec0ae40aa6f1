// The lowerer, tinygrad's codegen/lowerer.py: VIEWs become INDEX/valid expressions over the
// kernel's loop variables. It runs bottom-up (a node before its sources) because the index of a
// node depends on where it sits: under a STORE every axis has the store's index, under a
// REDUCE_AXIS the reduced axes get fresh ranges of their own (a subblock).
#include <algorithm>

#include "core/codegen/passes.hpp"

namespace tunebed::codegen_detail {

namespace {

std::vector<int64_t> reduce_axes(const UOp& reduce_axis) {
  return reduce_axis.arg().as_tuple().at(1).as_ints();
}

// One index per axis: an UNROLL of lane numbers for UPCAST/UNROLL axes (their size must be a
// number), the core id for THREAD, else a RANGE whose arg is unique in the kernel.
std::vector<UOp> shape_to_idx(const SymShape& shape, const IndexContext& ctx) {
  if (shape.size() != ctx.axis_types.size())
    throw CodegenError("kernel has " + std::to_string(shape.size()) + " axes but KernelInfo gives " +
                       std::to_string(ctx.axis_types.size()) + " axis types");
  std::vector<UOp> idxs;
  for (size_t i = 0; i < shape.size(); i++) {
    const AxisType at = ctx.axis_types[i];
    if (at == AxisType::UPCAST || at == AxisType::UNROLL) {
      if (!shape[i].is_int())
        throw CodegenError("axis " + std::to_string(i) + " is symbolic, so it cannot be upcast");
      const int64_t n = shape[i].to_int();
      std::vector<UOp> lanes;
      for (int64_t k = 0; k < n; k++) lanes.push_back(UOp::index(k));
      UOp lane_numbers = UOp::make(Ops::VECTORIZE, dtypes::index.vec(static_cast<int>(n)), lanes);
      idxs.push_back(UOp::make(Ops::UNROLL, dtypes::index, {lane_numbers},
                               Arg::tuple({Arg::tuple({Arg(static_cast<int64_t>(i)), Arg(n)})})));
    } else if (at == AxisType::THREAD) {
      // The CPU runs the kernel once per core; the THREAD axis is as long as the launch is wide.
      idxs.push_back(
          UOp::make(Ops::SPECIAL, dtypes::index, {}, Arg::tuple({Arg("core_id"), to_arg(shape[i])})));
    } else if (at == AxisType::LOCAL || at == AxisType::GROUP_REDUCE) {
      throw CodegenError(std::string("axis type ") + std::string(axis_type_name(at)) +
                         " needs local memory, which the C renderer's target does not have");
    } else {
      idxs.push_back(UOp::make(Ops::RANGE, dtypes::index, {shape[i].to_uop()},
                               Arg(ctx.start + static_cast<int64_t>(i))));
    }
  }
  return idxs;
}

// Lower `src` with the index `idxs`; its ranges get args no other block uses.
UOp subblock(const IndexContext& ctx, std::vector<UOp> idxs, const UOp& src) {
  IndexContext sub{ctx.axis_types, std::move(idxs), *ctx.next_start += 1000, ctx.next_start};
  return graph_rewrite(src, pm_lowerer(), sub, {.bottom_up = true});
}

UOp make_index(const UOp& buf, const UOp& idx, const UOp& valid) {
  if (valid.is_const() && valid.const_value() != 0) return UOp::make(Ops::INDEX, buf.dtype(), {buf, idx});
  return UOp::make(Ops::INDEX, buf.dtype(), {buf, idx, valid});
}

// A constant seen through a VIEW is the constant where the view is valid and 0 where it is padding.
UOp lower_const(const IndexContext& ctx, const UOp& c, const UOp& view) {
  UOp bare = c.with_src({});
  const ShapeTracker& st = view_st(view);
  bool masked =
      std::any_of(st.views().begin(), st.views().end(), [](const View& v) { return v.mask().has_value(); });
  if (!masked) return bare;
  UOp zero = bare.dtype().is_float() ? bare.const_like_float(0) : bare.const_like(0);
  return st.to_indexed_uops(ctx.idxs).second.where(bare, zero);
}

UOp lower_reduce_axis(const IndexContext& ctx, const UOp& x) {
  std::vector<UOp> new_idxs = shape_to_idx(ast_shape(x.src(0)), ctx);
  std::vector<UOp> full = ctx.idxs;
  if (full.size() != new_idxs.size()) full = new_idxs;  // a REDUCE_AXIS under no STORE: its own block
  const std::vector<int64_t> axes = reduce_axes(x);
  for (int64_t a : axes) full.at(a) = new_idxs.at(a);
  UOp ret = subblock(ctx, full, x.src(0));

  // Reduced RANGEs loop; reduced UNROLLs are the lanes of one vector, reduced horizontally later.
  std::vector<UOp> srcs{UOp()};
  ArgTuple contract;
  int64_t lanes = 1;
  for (int64_t a : axes) {
    const UOp& idx = full[a];
    if (idx.op() == Ops::RANGE) srcs.push_back(idx);
    if (idx.op() != Ops::UNROLL) continue;
    for (const Arg& ax : idx.arg().as_tuple()) {
      contract.push_back(ax);
      lanes *= ax.as_tuple().at(1).as_int();
    }
  }
  if (!contract.empty())
    ret = UOp::make(Ops::CONTRACT, x.dtype().vec(static_cast<int>(lanes)), {ret}, Arg(std::move(contract)));
  srcs[0] = ret;
  return UOp::make(Ops::REDUCE, x.dtype(), std::move(srcs), Arg(x.arg().as_tuple().at(0).as_op()));
}

UOp lower_store(const IndexContext& ctx, const UOp& x, const UOp& buf) {
  if (buf.dtype().addrspace != AddrSpace::Global)
    throw CodegenError("a STORE to local memory, which the C renderer's target does not have");
  std::vector<UOp> new_idxs = shape_to_idx(ast_shape(x.src(0)), ctx);
  auto [idx, valid] = view_st(x.src(0)).to_indexed_uops(new_idxs);
  std::vector<UOp> used = UOp::make(Ops::SINK, dtypes::void_, {idx, valid}).toposort();
  auto is_used = [&](const UOp& i) { return std::find(used.begin(), used.end(), i) != used.end(); };
  // An axis the store does not index keeps the enclosing block's index (where there is one).
  std::vector<UOp> real_idxs;
  for (size_t i = 0; i < new_idxs.size(); i++)
    real_idxs.push_back(is_used(new_idxs[i]) || ctx.idxs.size() <= i ? new_idxs[i] : ctx.idxs[i]);
  UOp stored = subblock(ctx, real_idxs, x.src(1));
  std::vector<UOp> srcs{make_index(buf, idx, valid), stored};
  for (const UOp& i : new_idxs)
    if (i.op() == Ops::RANGE && is_used(i)) srcs.push_back(i);
  return UOp::make(Ops::STORE, dtypes::void_, std::move(srcs));
}

}  // namespace

SymShape ast_shape(const UOp& u) {
  if (u.op() == Ops::VIEW) return view_st(u).shape();
  if (u.op() == Ops::REDUCE_AXIS) {
    SymShape s = ast_shape(u.src(0));
    for (int64_t a : reduce_axes(u)) s.at(a) = 1;
    return s;
  }
  for (const UOp& s : u.src())
    if (s.op() == Ops::VIEW || !s.src().empty()) return ast_shape(s);
  throw CodegenError("kernel AST: a " + std::string(op_name(u.op())) + " with no VIEW under it has no shape");
}

const PatternMatcher& pm_lowerer() {
  static const UPat view = UPat(Ops::VIEW).named("view");
  static const PatternMatcher pm = {
      // tinygrad's older forms: CONST(VIEW), and VALID(VIEW) (a WHERE's condition) for padding.
      {"const-view", UPat::ops({Ops::CONST, Ops::DEFINE_VAR}, {view}).named("c"),
       [](const Match& m) { return lower_const(m.ctx<IndexContext>(), m["c"], m["view"]); }},
      {"valid-view", UPat(Ops::VALID, {view}),
       [](const Match& m) { return view_st(m["view"]).to_indexed_uops(m.ctx<IndexContext>().idxs).second; }},
      {"view-const", UPat(Ops::VIEW, {UPat::ops({Ops::CONST, Ops::DEFINE_VAR}).named("c")}).named("view"),
       [](const Match& m) { return lower_const(m.ctx<IndexContext>(), m["c"], m["view"]); }},
      {"load",
       UPat(Ops::LOAD, {UPat(Ops::VIEW, {UPat::var("buf")}).named("view")}).allow_any_len().named("x"),
       [](const Match& m) {
         auto [idx, valid] = view_st(m["view"]).to_indexed_uops(m.ctx<IndexContext>().idxs);
         std::vector<UOp> srcs = m["x"].src();
         srcs[0] = make_index(m["buf"], idx, valid);
         return UOp::make(Ops::LOAD, m["x"].dtype(), std::move(srcs));
       }},
      {"reduce-axis", UPat(Ops::REDUCE_AXIS).named("x"),
       [](const Match& m) { return lower_reduce_axis(m.ctx<IndexContext>(), m["x"]); }},
      {"store", UPat(Ops::STORE, {UPat(Ops::VIEW, {UPat::var("buf")})}).allow_any_len().named("x"),
       [](const Match& m) { return lower_store(m.ctx<IndexContext>(), m["x"], m["buf"]); }},
  };
  return pm;
}

}  // namespace tunebed::codegen_detail
