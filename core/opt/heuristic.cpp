// hand_coded_optimizations: tinygrad's opt/heuristic.py, step by step, plus tunebed's THREAD.
#include "core/opt/heuristic.hpp"

#include <algorithm>
#include <tuple>

namespace tunebed {

namespace {

int64_t prod_ints(const SymShape& shape, const std::vector<int>& axes) {
  int64_t p = 1;
  for (int a : axes) p *= shape[a].to_int();
  return p;
}

// prod over the output tracker's sizes of the upcastable axes, as tinygrad's
// prod(k.sts[0].shape[i] for i in k.upcastable_dims)
int64_t output_upcastable(const Kernel& k) { return prod_ints(k.sts()[0].shape(), k.upcastable_dims()); }

size_t buf_index(const Kernel& k, const UOp& u) { return std::ranges::find(k.bufs(), u) - k.bufs().begin(); }

bool has_expanded_axis(const SymShape& shape, const std::vector<std::optional<sint>>& strides) {
  for (size_t i = 0; i < shape.size(); i++)
    if (resolve(lt(1, shape[i])) && strides[i] && *strides[i] == sint(0)) return true;
  return false;
}

// Whether the tracker's validity depends on `axis`: tinygrad's ShapeTracker.axis_is_masked.
bool axis_is_masked(const ShapeTracker& st, int axis) {
  if (st.views().size() == 1 && !st.views()[0].mask())
    return false;  // valid everywhere: skip the symbolic work
  auto [idx, valid] = st.to_indexed_uops();
  for (const UOp& u : valid.toposort())
    if (u.op() == Ops::RANGE && u.arg().as_int() == axis) return true;
  return false;
}

// Matrix-vector: split the reduce across the workgroup and block the output (tinygrad's MV with
// its defaults MV_BLOCKSIZE=4, MV_THREADS_PER_ROW=8, MV_ROWS_PER_THREAD=4).
std::optional<Kernel> matvec(Kernel k) {
  constexpr int block = 4, threads_per_row = 8, rows_per_thread = 4;
  const UOp* r = k.reduceop();
  if (!k.opts().has_local || !k.opts().has_shared || !r || r->arg().as_tuple().at(0).as_op() != Ops::ADD ||
      k.full_shape().size() < 2)
    return std::nullopt;
  const UOp& mul = r->src(0);
  if (mul.op() != Ops::MUL || mul.src(0).op() != Ops::LOAD || mul.src(1).op() != Ops::LOAD)
    return std::nullopt;
  const ShapeTracker &st0 = k.sts()[buf_index(k, mul.src(0))], &st1 = k.sts()[buf_index(k, mul.src(1))];
  auto strides0 = st0.real_strides(), strides1 = st1.real_strides();
  int first_reduce = k.axes_of({AxisType::REDUCE}).at(0);
  if (!(strides0[first_reduce] && *strides0[first_reduce] == sint(1)) ||
      (has_expanded_axis(st0.shape(), strides0) && has_expanded_axis(st1.shape(), strides1)))
    return std::nullopt;
  for (int global_idx : k.axes_of({AxisType::GLOBAL})) {
    if (!resolve(eq(floormod(k.full_shape()[first_reduce], threads_per_row), 0), false) ||
        !resolve(eq(floormod(k.full_shape()[global_idx], block * rows_per_thread), 0), false))
      continue;
    k.apply_opt(Opt{OptOps::GROUP, 0, threads_per_row});
    k.apply_opt(Opt{OptOps::LOCAL, global_idx, block});
    k.apply_opt(Opt{OptOps::UPCAST, global_idx, rows_per_thread});
    return k;
  }
  return std::nullopt;
}

// Upcast small masked axes (they may come from Tensor.stack), then broadcast axes while the
// output is large.
void upcast_axes(Kernel& k) {
  std::vector<int> to_upcast;
  for (int axis : k.upcastable_dims()) {
    int64_t size = k.full_shape()[axis].to_int();
    bool masked =
        std::ranges::any_of(k.sts(), [&](const ShapeTracker& st) { return axis_is_masked(st, axis); });
    if (size <= 7 && masked && prod_ints(k.full_shape(), to_upcast) * size <= 7 * 7)
      to_upcast.push_back(axis);
  }
  for (auto it = to_upcast.rbegin(); it != to_upcast.rend(); ++it) k.apply_opt(Opt{OptOps::UPCAST, *it, 0});

  std::vector<int> upcasted_axis;
  while (output_upcastable(k) >= 1024) {
    // (buffers with a positive stride on the axis, sum of those strides, axis, amount): the
    // smallest wins, so axes that many buffers broadcast over go first.
    std::vector<std::tuple<int64_t, int64_t, int, int>> choices;
    for (int axis : k.upcastable_dims())
      for (int amount : {3, 4}) {
        if (std::ranges::find(upcasted_axis, axis) != upcasted_axis.end() ||
            k.full_shape()[axis].to_int() % amount != 0)
          continue;
        bool broadcast = std::ranges::any_of(k.sts(), [&](const ShapeTracker& st) {
          if (!(st.views().back().strides()[axis] == sint(0))) return false;
          auto rs = st.real_strides();
          for (size_t i = 0; i < rs.size(); i++) {
            AxisType t = k.axis_types()[i];
            if ((t == AxisType::UPCAST || t == AxisType::UNROLL) && rs[i] && *rs[i] == sint(0)) return false;
          }
          return true;
        });
        if (!broadcast) continue;
        int64_t positive = 0, sum = 0;
        for (const ShapeTracker& st : k.sts()) {
          const sint& s = st.views().back().strides()[axis];
          positive += resolve(lt(0, s), false);
          sum += s.is_int() ? s.to_int() : s.vmax();
        }
        choices.emplace_back(positive, sum, axis, amount);
      }
    if (choices.empty()) break;
    auto [p, s, axis, amount] = *std::ranges::min_element(choices);
    k.apply_opt(Opt{OptOps::UPCAST, axis, amount});
    upcasted_axis.push_back(axis);
  }
}

// Unroll the last reduce axis when it is small (and a second one when both are tiny), else by 4.
void unroll_reduce(Kernel& k) {
  int64_t upcast_size = prod_ints(k.full_shape(), k.axes_of({AxisType::UPCAST, AxisType::UNROLL}));
  if (k.unrollable_dims().empty() || !(upcast_size <= 4 || k.axes_of({AxisType::UNROLL}).empty()) ||
      upcast_size >= 64)
    return;
  auto last = [&] { return static_cast<int>(k.unrollable_dims().size()) - 1; };
  int64_t s = k.full_shape()[k.unrollable_dims().back()].to_int();
  if (s <= 32) {
    k.apply_opt(Opt{OptOps::UNROLL, last(), 0});
    if (!k.unrollable_dims().empty() && s <= 3 && k.full_shape()[k.unrollable_dims().back()].to_int() <= 3)
      k.apply_opt(Opt{OptOps::UNROLL, last(), 0});
  } else if (s % 4 == 0) {
    k.apply_opt(Opt{OptOps::UNROLL, last(), 4});
  }
}

// Up to three local axes of at most 128 threads in all, broadcast axes first, then inner axes.
void local_axes(Kernel& k) {
  std::vector<std::pair<bool, int>> ranking;
  for (int axis : k.axes_of({AxisType::GLOBAL, AxisType::LOOP})) {
    bool broadcast = std::ranges::any_of(
        k.sts(), [&](const ShapeTracker& st) { return st.views().back().strides()[axis] == sint(0); });
    ranking.emplace_back(broadcast, axis);
  }
  std::ranges::sort(ranking, [](const auto& a, const auto& b) {
    return std::pair(-a.first, -a.second) < std::pair(-b.first, -b.second);
  });
  std::vector<std::pair<int, int>> to_local;
  for (auto [broadcast, axis] : ranking) {
    int64_t local_size = 1;
    for (auto [a, sz] : to_local) local_size *= sz;
    std::vector<int> candidates = {16, 8, 4, 3, 2};
    if (axis == 0) candidates.insert(candidates.begin(), 32);
    for (int x : candidates)
      if (resolve(eq(floormod(k.full_shape()[axis], x), 0), false) && local_size * x <= 128) {
        to_local.emplace_back(axis, x);
        break;
      }
  }
  if (to_local.size() > 3) to_local.resize(3);
  std::ranges::sort(to_local);
  int deleted_shape = 0;
  for (auto [axis, local_sz] : to_local) {
    axis -= deleted_shape;
    bool will_delete_shape = k.full_shape()[axis] == sint(local_sz);
    k.apply_opt(Opt{OptOps::LOCAL, axis, local_sz});
    if (will_delete_shape) deleted_shape++;
  }
}

// The kernel after the hand-coded opts; hand_coded_optimizations returns its applied_opts and
// get_optimized_ast uses it directly, so the opts are not applied a second time.
Kernel hand_coded_kernel(Kernel k) {
  if (std::optional<Kernel> mv = matvec(k)) return *mv;
  // Group a reduce across the workgroup when the output is small.
  if (output_upcastable(k) <= 2048 && !k.why_illegal(Opt{OptOps::GROUPTOP, 0, 16}))
    k.apply_opt(Opt{OptOps::GROUPTOP, 0, 16});
  if (k.group_for_reduces()) return k;

  upcast_axes(k);
  unroll_reduce(k);
  // If nothing is upcast yet and it is easy to, upcast the last loop axis by 4.
  if (!k.upcasted() && !k.upcastable_dims().empty() &&
      k.full_shape()[k.upcastable_dims().back()].to_int() % 4 == 0)
    k.apply_opt(Opt{OptOps::UPCAST, k.upcastable_dims().back(), 4});
  if (k.opts().has_local) local_axes(k);
  if (std::optional<Opt> t = thread_opt(k)) k.apply_opt(*t);
  return k;
}

}  // namespace

std::vector<Opt> hand_coded_optimizations(const Kernel& k) { return hand_coded_kernel(k).applied_opts(); }

std::vector<Opt> default_opts(const Kernel& k) {
  Kernel tc = k;
  if (!tc.apply_tensor_cores()) return hand_coded_optimizations(k);
  if (std::optional<Opt> t = thread_opt(tc)) tc.apply_opt(*t);
  return tc.applied_opts();
}

std::optional<Opt> thread_opt(const Kernel& k) {
  if (k.opts().threads < 2 || !all_int(k.full_shape()) || prod(k.full_shape()).to_int() < kThreadMinWork)
    return std::nullopt;
  std::optional<Opt> best;
  int best_amt = 1;
  for (int axis : k.axes_of({AxisType::LOOP})) {
    int64_t size = k.full_shape()[axis].to_int();
    for (int amt = std::min<int64_t>(k.opts().threads, size); amt > best_amt; amt--)
      if (size % amt == 0) {
        best = Opt{OptOps::THREAD, axis, amt};
        best_amt = amt;
        break;
      }
  }
  return best;
}

UOp get_optimized_ast(const UOp& ast, const Renderer& renderer) {
  Kernel k(ast, renderer);
  std::optional<KernelInfo> info = kernel_info_of(ast);
  if (info && info->opts_to_apply)
    k.apply_opts(*info->opts_to_apply);
  else
    k.apply_opts(default_opts(k));
  return k.get_optimized_ast();
}

}  // namespace tunebed
