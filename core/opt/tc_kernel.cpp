// Tensor cores on a Kernel, as tinygrad's opt/kernel.py (_create_tc_opts, _apply_tc_opt,
// apply_tensor_cores and the WMMA branch of get_optimized_ast).
//
// Matching: the reduce must be a sum of a MUL of two buffer loads in the TC's input dtype (with a
// CAST to the output dtype around the MUL when they differ; tc_opt >= 1 also takes loads CAST to
// the input dtype, and several reduce axes). N is an axis that only B varies along (A's stride 0),
// M one that only A varies along, K a reduce axis; `axis` picks among those triples, counting
// from the last. An axis the TC's dims do not divide is padded (tc_opt 2) or the TC is refused.
//
// Applying: PADTO what needs it, then the TC's opts split N and M by 2 into upcasts and locals,
// and log2(K) unrolls by 2 split K; each operand's view is permuted by the TC's swizzle when the
// optimized AST is built, so that the sub-axes the WMMA contracts are the ones each register
// lane holds.
#include <algorithm>

#include "core/opt/kernel.hpp"

namespace tunebed {

namespace {

bool is_zero(const std::optional<sint>& stride) { return stride && *stride == sint(0); }

int log2_int(int x) {
  int n = 0;
  while ((1 << n) < x) n++;
  return n;
}

// The MUL under a reduce that a tensor core computes, or a null UOp.
UOp tc_mul(const UOp& reduceop, const TensorCore& tc) {
  UOp src = reduceop.src(0);
  if (tc.dtype_in != tc.dtype_out) {
    if (src.op() != Ops::CAST || src.dtype() != tc.dtype_out) return {};
    src = src.src(0);
  }
  return src.op() == Ops::MUL ? src : UOp();
}

}  // namespace

std::optional<TensorCoreOptions> Kernel::create_tc_opts(const UOp& reduceop, const TensorCore& tc, int axis,
                                                        int opt_level) const {
  UOp mul = tc_mul(reduceop, tc);
  if (!mul) return std::nullopt;
  auto buf_index = [&](const UOp& src) -> std::optional<size_t> {
    const UOp* load = nullptr;
    if (src.op() == Ops::LOAD && src.dtype() == tc.dtype_in) load = &src;
    if (opt_level >= 1 && src.op() == Ops::CAST && src.dtype() == tc.dtype_in) load = &src.src(0);
    if (!load) return std::nullopt;
    auto it = std::ranges::find(bufs_, *load);
    if (it == bufs_.end()) return std::nullopt;
    return it - bufs_.begin();
  };
  std::optional<size_t> buf0 = buf_index(mul.src(0)), buf1 = buf_index(mul.src(1));
  if (!buf0 || !buf1) return std::nullopt;
  auto strides0 = sts_[*buf0].real_strides(), strides1 = sts_[*buf1].real_strides();
  std::vector<int> axis_buf0, axis_buf1;  // N candidates (A does not vary), M candidates
  for (int i : upcastable_dims()) {
    if (is_zero(strides0[i])) axis_buf0.push_back(i);
    if (is_zero(strides1[i])) axis_buf1.push_back(i);
  }
  std::vector<int> reduces = axes_of({AxisType::GROUP_REDUCE, AxisType::REDUCE});
  if (axis_buf0.empty() || axis_buf1.empty() || (reduces.size() != 1 && opt_level < 1)) return std::nullopt;
  // itertools.product(axis_buf0, axis_buf1, reduces), counted from the end
  const size_t choices = axis_buf0.size() * axis_buf1.size() * reduces.size();
  if (static_cast<size_t>(axis) >= choices) return std::nullopt;
  const size_t pick = choices - 1 - axis;
  TensorCoreOptions o;
  o.axes = {axis_buf0[pick / (axis_buf1.size() * reduces.size())],
            axis_buf1[pick / reduces.size() % axis_buf1.size()], reduces[pick % reduces.size()]};
  for (int d = 0; d < 3; d++)
    if (resolve(ne(floormod(full_shape()[o.axes[d]], tc.dims[d]), 0)))
      o.axis_pads.emplace_back(o.axes[d], tc.dims[d]);
  if (!o.axis_pads.empty() && opt_level < 2) return std::nullopt;
  return o;
}

// The splits happen on a copy, so that a TC that fails half way (a PADTO refused) leaves nothing
// behind and the next tensor core is tried on the kernel as it was.
bool Kernel::apply_tc_opt(int use_tensor_cores, int axis, int tc_select, int opt_level) {
  if (!use_tensor_cores || !reduceop() || reduceop()->arg().as_tuple().at(0).as_op() != Ops::ADD)
    return false;
  std::vector<TensorCore> candidates = opts_.tensor_cores;
  if (tc_select != -1) candidates = {opts_.tensor_cores.at(tc_select)};
  for (const TensorCore& tc : candidates) {
    std::optional<TensorCoreOptions> tc_opts = create_tc_opts(reduceops_[0], tc, axis, opt_level);
    // tinygrad asserts this: fused reduces share their tensor core
    for (const UOp& r : reduceops_)
      if (create_tc_opts(r, tc, axis, opt_level) != tc_opts) return false;
    if (!tc_opts) continue;
    Kernel k = *this;
    k.tensor_core_opts_ = tc_opts;
    if (!k.apply_tc_splits(tc)) continue;
    k.tensor_core_ = tc;
    k.use_tensor_cores_ = use_tensor_cores;  // 2 does the shape ops without the WMMA
    *this = std::move(k);
    return true;
  }
  return false;
}

// The TC's PADTOs, its splits of N and M by 2 and log2(K) unrolls by 2, not recorded as opts;
// false at the first one refused.
bool Kernel::apply_tc_splits(const TensorCore& tc) {
  for (auto [pad_axis, dim] : tensor_core_opts_->axis_pads)
    if (try_apply_opt(Opt{OptOps::PADTO, pad_axis, dim}, false)) return false;
  for (const std::string& o : tc.opts)
    if (try_apply_opt(Opt{o[0] == 'u' ? OptOps::UPCAST : OptOps::LOCAL, tensor_core_opts_->axes[o[1] - '0'], 2}, false))
      return false;
  for (int i = 0; i < tc.reduce_axes(); i++)
    if (try_apply_opt(Opt{OptOps::UNROLL, 0, 2}, false)) return false;
  return true;
}

bool Kernel::apply_tensor_cores(int use_tensor_cores, const std::optional<std::vector<Opt>>& extra_opts,
                                int axis, int tc_select, int tc_opt) {
  if (opts_.tensor_cores.empty() || use_tensor_cores == 0) return false;
  Kernel k = *this;
  if (k.try_apply_opt(Opt{OptOps::TC, axis, TCArg{tc_select, tc_opt, use_tensor_cores}})) return false;
  if (extra_opts) {
    for (const Opt& o : *extra_opts)
      if (k.try_apply_opt(o)) return false;
  } else if (k.tensor_core_->threads > 1) {
    // A warp's tensor core gets more work per thread: upcast M, then N, and a local of N. A
    // register block (threads == 1) already fills the registers, as tinygrad's AMX.
    for (int d : {1, 0}) {
      if (!k.tensor_core_opts_->axes_exist[d]) continue;
      const int a = k.tensor_core_opts_->axes[d];
      for (int sz : {5, 4, 3, 2})
        if (k.full_shape()[a].to_int() % sz == 0) {
          if (k.try_apply_opt(Opt{OptOps::UPCAST, a, sz})) return false;
          break;
        }
    }
    if (k.tensor_core_opts_->axes_exist[0])
      for (int sz : {4, 2})
        if (k.full_shape()[k.tensor_core_opts_->axes[0]].to_int() % sz == 0) {
          if (k.try_apply_opt(Opt{OptOps::LOCAL, k.tensor_core_opts_->axes[0], sz})) return false;
          break;
        }
  }
  *this = std::move(k);
  return true;
}

// The reduce as tinygrad's WMMA form:
//   [REDUCE_AXIS(ADD, other axes)] UNROLL(WMMA(CONTRACT(A'), CONTRACT(B'), 0), C's sub-axes)
// where A' and B' are the MUL's loads with their views permuted by the swizzle (tinygrad puts a
// VIEW over each load and lets view_left merge it; a permute of size-2 sub-axes merges into the
// load's tracker as a permute).
UOp Kernel::tc_reduce(const UOp& reduce, const std::vector<int>& axes) const {
  const TensorCore& tc = *tensor_core_;
  const std::vector<std::string> ss = shape_str();
  auto axis_of = [&](const std::string& s) {
    return static_cast<int64_t>(std::ranges::find(ss, s) - ss.begin());
  };
  std::vector<int> tc_reduce_axes;
  for (int i = 0; i < tc.reduce_axes(); i++) tc_reduce_axes.push_back(axis_of("r" + std::to_string(i)));
  std::vector<int64_t> base;
  for (const std::string& s : tc.base_upcast_axes()) base.push_back(axis_of(s));
  std::array<Arg, 3> upcast_args;
  for (int i = 0; i < 3; i++) {
    ArgTuple t;
    for (int k = 0; k < log2_int(tc.elements_per_thread[i]); k++)
      t.push_back(Arg::tuple({Arg(base[k]), Arg(2)}));
    upcast_args[i] = Arg(std::move(t));
  }

  UOp mul = tc_mul(reduce, tc);
  std::array<std::vector<int64_t>, 2> perms = tc.permutes_for_shape_str(ss);
  std::array<UOp, 2> operands;
  for (int i = 0; i < 2; i++) {
    const UOp& src = mul.src(i);
    const UOp& load = src.op() == Ops::LOAD ? src : src.src(0);
    std::vector<UOp> load_src = load.src();
    load_src[0] =
        load_src[0].with_arg(load_src[0].arg().as_object<ShapeTracker>().permute(perms[i]).to_arg());
    UOp permuted = load.with_src(load_src);
    UOp operand = src.op() == Ops::LOAD ? permuted : src.with_src({permuted});
    operands[i] =
        UOp::make(Ops::CONTRACT, operand.dtype().vec(tc.elements_per_thread[i]), {operand}, upcast_args[i]);
  }
  ArgTuple upcast_tuple(upcast_args.begin(), upcast_args.end());
  Arg wmma_arg = Arg::tuple({Arg(tc.name()), Arg::ints(std::vector<int>(tc.dims.begin(), tc.dims.end())),
                             Arg(tc.dtype_in), Arg(tc.dtype_out), Arg(opts_.device), Arg(tc.threads),
                             Arg(std::move(upcast_tuple)), Arg::ints(tc_reduce_axes)});
  const DType out = tc.dtype_out.vec(tc.elements_per_thread[2]);
  UOp wmma = UOp::make(Ops::WMMA, out, {operands[0], operands[1], UOp::const_float(out, 0.0)}, wmma_arg);
  UOp tc_uop = UOp::make(Ops::UNROLL, tc.dtype_out, {wmma}, upcast_args[2]);
  std::vector<int> rest;
  for (int a : axes)
    if (std::ranges::find(tc_reduce_axes, a) == tc_reduce_axes.end()) rest.push_back(a);
  if (rest.empty()) return tc_uop;
  return UOp::make(Ops::REDUCE_AXIS, reduce.dtype(), {tc_uop}, Arg::tuple({Arg(Ops::ADD), Arg::ints(rest)}));
}

}  // namespace tunebed
