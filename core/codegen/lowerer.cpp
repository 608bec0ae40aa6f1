// The lowerer, tinygrad's codegen/lowerer.py: VIEWs become INDEX/valid expressions over the
// kernel's loop variables and, on a GPU, its work-group and work-item ids (gpudims.cpp). A STORE
// to local memory (the first stage of a group reduce) is followed by a BARRIER, and the LOADs
// of that buffer read after it. It runs bottom-up (a node before its sources) because the index
// of a node depends on where it sits: under a STORE every axis has the store's index, under a
// REDUCE_AXIS the reduced axes get fresh ranges of their own (a subblock).
#include <algorithm>

#include "core/codegen/passes.hpp"
#include "core/spec/ast_shape.hpp"

namespace tunebed::codegen_detail {

namespace {

std::vector<int64_t> reduce_axes(const UOp& reduce_axis) {
  return reduce_axis.arg().as_tuple().at(1).as_ints();
}

// One index per axis: an UNROLL of lane numbers for UPCAST/UNROLL axes (their size must be a
// number), the core id for THREAD, the work-group or work-item id for a launch axis (GLOBAL,
// LOCAL, GROUP_REDUCE on a GPU) unless `reduced` names it (the second stage of a group reduce
// loops over the partials), else a RANGE whose arg is unique in the kernel.
std::vector<UOp> shape_to_idx(const SymShape& shape, const IndexContext& ctx,
                              const std::vector<int64_t>& reduced = {}) {
  if (shape.size() != ctx.axis_types.size())
    throw CodegenError("kernel has " + std::to_string(shape.size()) + " axes but KernelInfo gives " +
                       std::to_string(ctx.axis_types.size()) + " axis types");
  std::vector<UOp> idxs;
  for (size_t i = 0; i < shape.size(); i++) {
    const AxisType at = ctx.axis_types[i];
    const bool launched = !ctx.launch_idx.empty() && ctx.launch_idx[i] &&
                          std::find(reduced.begin(), reduced.end(), static_cast<int64_t>(i)) == reduced.end();
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
    } else if (launched && !(shape[i] == sint(1))) {
      idxs.push_back(ctx.launch_idx[i]);
    } else if ((at == AxisType::LOCAL || at == AxisType::GROUP_REDUCE) && ctx.launch_idx.empty()) {
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
  IndexContext sub{ctx.axis_types, std::move(idxs), *ctx.next_start += 1000, ctx.next_start, ctx.launch_idx};
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

// A WMMA's own reduce axes (its tensor core's K sub-axes, which the REDUCE_AXIS around it no
// longer names) take all their lanes in its operands, as tinygrad's fixup_wmma; once, while a
// VIEW is left under it.
UOp lower_wmma(const IndexContext& ctx, const UOp& x) {
  const std::vector<int64_t> axes = x.arg().as_tuple().at(7).as_ints();
  const std::vector<UOp> topo = x.toposort();
  if (axes.empty() || std::none_of(topo.begin(), topo.end(), [](const UOp& u) { return u.op() == Ops::VIEW; }))
    return {};
  std::vector<UOp> new_idxs = shape_to_idx(ast_shape(x.src(0)), ctx, axes), full = ctx.idxs;
  for (int64_t a : axes) full.at(a) = new_idxs.at(a);
  return x.with_src(subblock(ctx, full, UOp::make(Ops::SINK, dtypes::void_, x.src())).src());
}

UOp lower_reduce_axis(const IndexContext& ctx, const UOp& x) {
  const std::vector<int64_t> axes = reduce_axes(x);
  std::vector<UOp> new_idxs = shape_to_idx(ast_shape(x.src(0)), ctx, axes);
  std::vector<UOp> full = ctx.idxs;
  if (full.size() != new_idxs.size()) full = new_idxs;  // a REDUCE_AXIS under no STORE: its own block
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

// The work-item ids that must be 0 for a store to run: a GROUP_REDUCE axis the stored value no
// longer varies along (size 1 in the store's view) would otherwise have every lane of the group
// write the same value to the same place.
UOp first_lanes_only(const IndexContext& ctx, const SymShape& shape, UOp valid) {
  for (size_t i = 0; i < shape.size() && !ctx.launch_idx.empty(); i++) {
    if (ctx.axis_types[i] != AxisType::GROUP_REDUCE || !ctx.launch_idx[i] || !(shape[i] == sint(1)))
      continue;
    UOp lane0 = ctx.launch_idx[i].eq(0);
    valid = valid.is_const() && valid.const_value() != 0 ? lane0 : valid & lane0;
  }
  return valid;
}

UOp lower_store(const IndexContext& ctx, const UOp& x, const UOp& buf) {
  const bool local = buf.dtype().addrspace == AddrSpace::Local;
  if (!local && buf.dtype().addrspace != AddrSpace::Global)
    throw CodegenError("a STORE to a buffer that is neither global nor local memory");
  if (local && ctx.launch_idx.empty())
    throw CodegenError("a STORE to local memory, which the C renderer's target does not have");
  const SymShape shape = ast_shape(x.src(0));
  std::vector<UOp> new_idxs = shape_to_idx(shape, ctx);
  auto [idx, valid] = view_st(x.src(0)).to_indexed_uops(new_idxs);
  std::vector<UOp> used = UOp::make(Ops::SINK, dtypes::void_, {idx, valid}).toposort();
  auto is_used = [&](const UOp& i) { return std::find(used.begin(), used.end(), i) != used.end(); };
  // An axis the store does not index keeps the enclosing block's index (where there is one).
  std::vector<UOp> real_idxs;
  for (size_t i = 0; i < new_idxs.size(); i++)
    real_idxs.push_back(is_used(new_idxs[i]) || ctx.idxs.size() <= i ? new_idxs[i] : ctx.idxs[i]);
  UOp stored = subblock(ctx, real_idxs, x.src(1));
  std::vector<UOp> srcs{make_index(buf, idx, first_lanes_only(ctx, shape, valid)), stored};
  for (const UOp& i : new_idxs)
    if (i.op() == Ops::RANGE && is_used(i)) srcs.push_back(i);
  UOp store = UOp::make(Ops::STORE, dtypes::void_, std::move(srcs));
  // What one work-item stores in local memory, the others read: they wait for all the stores.
  return local ? UOp::make(Ops::BARRIER, dtypes::void_, {store}) : store;
}

}  // namespace

SymShape ast_shape(const UOp& u) {
  std::optional<SymShape> s;
  try {
    s = AstShapes()(u);
  } catch (const std::invalid_argument& e) {
    throw CodegenError(e.what());
  }
  if (!s) throw CodegenError("kernel AST: a " + std::string(op_name(u.op())) + " with no VIEW under it has no shape");
  return *s;
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
      {"wmma", UPat(Ops::WMMA).named("x"), [](const Match& m) { return lower_wmma(m.ctx<IndexContext>(), m["x"]); }},
      {"store", UPat(Ops::STORE, {UPat(Ops::VIEW, {UPat::var("buf")})}).allow_any_len().named("x"),
       [](const Match& m) { return lower_store(m.ctx<IndexContext>(), m["x"], m["buf"]); }},
  };
  return pm;
}

}  // namespace tunebed::codegen_detail
