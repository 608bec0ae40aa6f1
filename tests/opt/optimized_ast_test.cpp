// get_optimized_ast: the KernelInfo in the SINK, every VIEW at the full shape, reduce axes, the
// shared-memory form of GROUP, and the THREAD heuristic.
#include <gtest/gtest.h>

#include "core/opt/heuristic.hpp"
#include "tests/opt/kernels.hpp"

namespace tunebed {
namespace {

std::vector<UOp> of_op(const UOp& root, Ops op) {
  std::vector<UOp> r;
  for (const UOp& u : root.toposort())
    if (u.op() == op) r.push_back(u);
  return r;
}

TEST(OptimizedAst, SinkCarriesTheDocumentedKernelInfo) {
  Kernel k(test::named("matmul_64"), Renderer::cpu(1));
  k.apply_opts(parse_opts("UPCAST:1:4,UNROLL:0:4"));
  UOp ast = k.get_optimized_ast();
  std::optional<KernelInfo> info = kernel_info_of(ast);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->name, "r_64_16_4_16_4");
  EXPECT_EQ(info->axis_types, (std::vector<AxisType>{AxisType::LOOP, AxisType::LOOP, AxisType::UPCAST,
                                                     AxisType::REDUCE, AxisType::UNROLL}));
  EXPECT_FALSE(info->dont_use_locals);
  EXPECT_EQ(info->applied_opts, parse_opts("UPCAST:1:4,UNROLL:0:4"));
  EXPECT_FALSE(info->opts_to_apply);
}

TEST(OptimizedAst, EveryViewHasTheKernelsAxesAndReducesTheirNewAxes) {
  Kernel k(test::named("matmul_64"), Renderer::opencl());
  k.apply_opts(parse_opts("UPCAST:0:4,LOCAL:1:8,UNROLL:0:4"));
  UOp ast = k.get_optimized_ast();
  // each VIEW has the kernel's axes: the full size, or 1 where an output is reduced
  for (const UOp& v : of_op(ast, Ops::VIEW)) {
    const SymShape& s = v.arg().as_object<ShapeTracker>().shape();
    ASSERT_EQ(s.size(), k.full_shape().size());
    for (size_t i = 0; i < s.size(); i++) EXPECT_TRUE(s[i] == k.full_shape()[i] || s[i] == sint(1));
  }
  std::vector<UOp> reduces = of_op(ast, Ops::REDUCE_AXIS);
  ASSERT_EQ(reduces.size(), 1u);
  std::vector<int> axes = k.axes_of({AxisType::REDUCE, AxisType::UNROLL});
  EXPECT_EQ(reduces[0].arg().as_tuple().at(1).as_ints(), std::vector<int64_t>(axes.begin(), axes.end()));
}

TEST(OptimizedAst, NameOverrideAndAGivenKernelInfoName) {
  Kernel k(test::named("add_16M"), Renderer::cpu(1));
  EXPECT_EQ(kernel_info_of(k.get_optimized_ast("mine"))->name, "mine");
  KernelInfo given;
  given.name = "from_db";
  Kernel named(test::named("add_16M").with_arg(given.to_record()), Renderer::cpu(1));
  EXPECT_EQ(kernel_info_of(named.get_optimized_ast("mine"))->name, "from_db");
}

TEST(OptimizedAst, GroupReducesThroughALocalBuffer) {
  Kernel k(test::named("sum_all_4096"), Renderer::opencl());
  k.apply_opt(parse_opt("GROUPTOP:0:16"));
  UOp ast = k.get_optimized_ast();
  std::vector<UOp> locals = of_op(ast, Ops::DEFINE_LOCAL);
  ASSERT_EQ(locals.size(), 1u);
  EXPECT_EQ(locals[0].dtype(), dtypes::float32.ptr_to(16, AddrSpace::Local));
  EXPECT_EQ(locals[0].arg().as_string(), "temp0");
  std::vector<UOp> reduces = of_op(ast, Ops::REDUCE_AXIS);
  ASSERT_EQ(reduces.size(), 2u);
  // the partial sum over the REDUCE axis, then the fold over the GROUP_REDUCE one
  EXPECT_EQ(reduces[0].arg().as_tuple().at(1).as_ints(), (std::vector<int64_t>{1}));
  EXPECT_EQ(reduces[1].arg().as_tuple().at(1).as_ints(), (std::vector<int64_t>{0}));
  EXPECT_EQ(reduces[1].src(0).op(), Ops::LOAD);
}

TEST(OptimizedAst, OptsToApplyReplaceTheHeuristics) {
  KernelInfo given;
  given.opts_to_apply = parse_opts("UPCAST:0:2");
  UOp ast = get_optimized_ast(test::named("add_16M").with_arg(given.to_record()), Renderer::cpu(1));
  EXPECT_EQ(kernel_info_of(ast)->applied_opts, parse_opts("UPCAST:0:2"));
  UOp heuristic = get_optimized_ast(test::named("add_16M"), Renderer::cpu(1));
  EXPECT_EQ(kernel_info_of(heuristic)->applied_opts, parse_opts("UPCAST:0:4"));
}

TEST(OptimizedAst, EveryDatasetKernelOptimizesOnEveryTarget) {
  // symbolic shapes included: the heuristics must stay legal and the AST must carry its info
  int optimized = 0;
  for (const auto& [line, ast] : test::dataset_kernels()) {
    for (const Renderer& r : {Renderer::cpu(8), Renderer::opencl(), Renderer::cuda(80)}) {
      SCOPED_TRACE("line " + std::to_string(line) + " on " + r.device);
      std::optional<Kernel> k;
      try {
        k.emplace(ast, r);
      } catch (const std::invalid_argument&) {
        continue;  // reduce axes not last: tinygrad refuses these too
      }
      k->apply_opts(hand_coded_optimizations(*k));
      std::optional<KernelInfo> info = kernel_info_of(k->get_optimized_ast());
      ASSERT_TRUE(info);
      EXPECT_EQ(info->axis_types.size(), static_cast<size_t>(k->shape_len()));
      EXPECT_EQ(info->applied_opts, k->applied_opts());
      optimized++;
    }
  }
  EXPECT_GE(optimized, 3 * 140);
}

TEST(ThreadHeuristic, SplitsLargeKernelsOnTheLoopAxisWithTheMostSlices) {
  // add_16M after UPCAST:0:4 is (4194304, 4): 8 divides the loop axis.
  Kernel add(test::named("add_16M"), Renderer::cpu(8));
  EXPECT_EQ(to_string(hand_coded_optimizations(add)), "UPCAST:0:4,THREAD:0:8");
  // 6 cores: 4194304 = 2^22, so the widest split is 4
  Kernel add6(test::named("add_16M"), Renderer::cpu(6));
  EXPECT_EQ(to_string(hand_coded_optimizations(add6)), "UPCAST:0:4,THREAD:0:4");
  // 33*29*17 = 16269 iterations: too small to be worth the pool
  EXPECT_FALSE(thread_opt(Kernel(test::named("matmul_33x17x29"), Renderer::cpu(8))));
}

TEST(ThreadHeuristic, LeavesSmallKernelsAndSingleCoresAlone) {
  EXPECT_FALSE(thread_opt(Kernel(test::named("exp_sum_1000"), Renderer::cpu(8))));
  EXPECT_FALSE(thread_opt(Kernel(test::named("add_16M"), Renderer::cpu(1))));
}

TEST(ThreadHeuristic, TheThreadAxisIsFirstInTheOptimizedAst) {
  Kernel k(test::named("matmul_512"), Renderer::cpu(8));
  k.apply_opts(hand_coded_optimizations(k));
  EXPECT_EQ(k.axis_types().front(), AxisType::THREAD);
  EXPECT_EQ(kernel_info_of(k.get_optimized_ast())->axis_types.front(), AxisType::THREAD);
}

}  // namespace
}  // namespace tunebed
