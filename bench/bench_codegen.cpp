// Code generation time: AST -> rendered C source (get_program: every pass, linearize, render),
// per kernel. The target is under 1 ms for a matmul with UPCAST and UNROLL, so that a search can
// render thousands of candidates a second.
#include <benchmark/benchmark.h>

#include "core/codegen/codegen.hpp"

namespace tunebed {
namespace {

UOp reduce_add(const UOp& x, std::vector<int64_t> axes) {
  return UOp::make(Ops::REDUCE_AXIS, x.dtype(), {x}, Arg::tuple({Arg(Ops::ADD), Arg::ints(axes)}));
}

UOp access(Ops op, int64_t buf, int64_t size, const ShapeTracker& st, std::vector<UOp> value = {}) {
  UOp g = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr_to(size), {}, Arg(buf));
  std::vector<UOp> srcs{UOp::make(Ops::VIEW, g.dtype(), {g}, st.to_arg())};
  srcs.insert(srcs.end(), value.begin(), value.end());
  return UOp::make(op, op == Ops::LOAD ? dtypes::float32 : dtypes::void_, srcs);
}

// c = a @ b for n x n matrices. With upcast, the kernel tinygrad's UPCAST 4 (on the output
// columns) and UNROLL 4 (on the reduction) give: full shape (n, n/4, n/4, 4, 4).
UOp matmul(int64_t n, bool upcast) {
  ShapeTracker a = ShapeTracker::from_shape({n, 1, n}).expand({n, n, n});
  ShapeTracker b = ShapeTracker::from_shape({n, n}).permute({1, 0}).reshape({1, n, n}).expand({n, n, n});
  ShapeTracker c = ShapeTracker::from_shape({n, n, 1});
  std::vector<int64_t> reduced{2};
  KernelInfo info;
  info.name = "r_matmul";
  info.axis_types = {AxisType::GLOBAL, AxisType::GLOBAL, AxisType::REDUCE};
  if (upcast) {
    auto split = [&](const ShapeTracker& st) {
      SymShape s = st.shape();
      return st.reshape({n, n / 4, 4, s[2] == sint(1) ? 1 : n / 4, s[2] == sint(1) ? 1 : 4})
          .permute({0, 1, 3, 2, 4});
    };
    a = split(a), b = split(b), c = split(c);
    reduced = {2, 4};
    info.axis_types = {AxisType::GLOBAL, AxisType::GLOBAL, AxisType::REDUCE, AxisType::UPCAST,
                       AxisType::UNROLL};
  }
  UOp mul = access(Ops::LOAD, 1, n * n, a) * access(Ops::LOAD, 2, n * n, b);
  UOp store = access(Ops::STORE, 0, n * n, c, {reduce_add(mul, reduced)});
  return UOp::make(Ops::SINK, dtypes::void_, {store}, Arg(info.to_record()));
}

UOp elementwise_add(int64_t n) {
  ShapeTracker st = ShapeTracker::from_shape({n});
  UOp sum = access(Ops::LOAD, 1, n, st) + access(Ops::LOAD, 2, n, st);
  UOp store = access(Ops::STORE, 0, n, st, {sum});
  KernelInfo info;
  info.name = "E_add";
  info.axis_types = {AxisType::GLOBAL};
  return UOp::make(Ops::SINK, dtypes::void_, {store}, Arg(info.to_record()));
}

void render(benchmark::State& state, const UOp& ast) {
  size_t uops = 0;
  for (auto _ : state) {
    ProgramSpec p = get_program(ast);
    uops = p.uops.size();
    benchmark::DoNotOptimize(p.source);
  }
  state.counters["uops"] = static_cast<double>(uops);
  state.SetItemsProcessed(state.iterations());
}

void BM_RenderElementwiseAdd(benchmark::State& state) { render(state, elementwise_add(1024)); }
BENCHMARK(BM_RenderElementwiseAdd)->Unit(benchmark::kMicrosecond);

void BM_RenderMatmul(benchmark::State& state) { render(state, matmul(64, false)); }
BENCHMARK(BM_RenderMatmul)->Unit(benchmark::kMicrosecond);

void BM_RenderMatmulUpcast4Unroll4(benchmark::State& state) { render(state, matmul(64, true)); }
BENCHMARK(BM_RenderMatmulUpcast4Unroll4)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace tunebed
