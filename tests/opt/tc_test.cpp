// Tensor cores in core/opt: the tables satisfy tinygrad's invariants, the TC opt picks a tensor
// core by tinygrad's rules (dtypes, dims or PADTO, tc_select, axis choices, first opt only), its
// splits put the TC's sub-axes where the WMMA reads them, and the heuristics use it.
#include <gtest/gtest.h>

#include "core/opt/heuristic.hpp"
#include "tests/opt/kernels.hpp"
#include "tests/opt/matmul_ast.hpp"

namespace tunebed {
namespace {

const Renderer cpu = Renderer::cpu(1);
const Renderer cuda = Renderer::cuda(80);


std::vector<UOp> wmmas(const UOp& ast) {
  std::vector<UOp> out;
  for (const UOp& u : ast.toposort())
    if (u.op() == Ops::WMMA) out.push_back(u);
  return out;
}

TEST(TensorCores, EveryTablePassesTinygradsChecks) {
  for (const auto* table : {&cuda_sm80_tensor_cores(), &cuda_sm75_tensor_cores(), &cpu_tensor_cores()})
    for (const TensorCore& tc : *table) EXPECT_NO_THROW(tc.check()) << tc.name();
}

TEST(TensorCores, ABrokenSwizzleFailsTheChecks) {
  TensorCore tc = cpu_tensor_cores()[0];
  tc.swizzle[1][1].pop_back();
  EXPECT_THROW(tc.check(), std::logic_error);
  tc = cpu_tensor_cores()[0];
  tc.elements_per_thread[0] *= 2;
  EXPECT_THROW(tc.check(), std::logic_error);
}

TEST(TensorCores, CpuBlockIsAnOuterProduct) {
  const TensorCore& tc = cpu_tensor_cores()[0];
  EXPECT_EQ(tc.name(), "WMMA_32_8_1_float32_float32");
  EXPECT_EQ(tc.reduce_axes(), 0);
  EXPECT_EQ(tc.base_upcast_axes(),
            (std::vector<std::string>{"u7", "u6", "u5", "u4", "u3", "u2", "u1", "u0"}));
  // B's five N bits (u0..u4) go to the top five positions, the ones its CONTRACT takes.
  std::vector<std::string> ss = {"L0", "u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7", "R0"};
  auto [pa, pb] = tc.permutes_for_shape_str(ss);
  EXPECT_EQ(pa, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(pb, (std::vector<int64_t>{0, 6, 7, 8, 1, 2, 3, 4, 5, 9}));
}

TEST(TensorCores, TcOnTheCpuSplitsNThenMIntoUpcasts) {
  Kernel k(test::named("matmul_64"), cpu);
  k.apply_opt(parse_opt("TC:0:(-1,0,1)"));
  ASSERT_TRUE(k.tensor_core());
  EXPECT_EQ(k.tensor_core()->name(), "WMMA_32_8_1_float32_float32");
  EXPECT_EQ(to_string(k.full_shape()), "(8, 2, 2, 2, 2, 2, 2, 2, 2, 2, 64)");
  EXPECT_EQ(test::letters(k), "LLuuuuuuuuR");
  EXPECT_EQ(to_string(k.applied_opts()), "TC:0:(-1,0,1)");
  const std::vector<UOp> w = wmmas(k.get_optimized_ast());
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].dtype(), dtypes::float32.vec(256));
}

TEST(TensorCores, TcSelectPicksOneTensorCore) {
  Kernel k(test::named("matmul_64"), cpu);
  k.apply_opt(parse_opt("TC:0:(1,0,1)"));
  EXPECT_EQ(k.tensor_core()->name(), "WMMA_16_4_1_float32_float32");
}

TEST(TensorCores, TheNextTensorCoreIsTriedWhenDimsDoNotDivide) {
  Kernel k(test::matmul_ast(4, 48, 8, dtypes::float32, dtypes::float32), cpu);
  k.apply_opt(parse_opt("TC:0:(-1,0,1)"));
  EXPECT_EQ(k.tensor_core()->name(), "WMMA_16_4_1_float32_float32");
}

TEST(TensorCores, AxesThatDoNotDivideArePaddedOnlyAtTcOpt2) {
  const UOp odd = test::named("matmul_33x17x29");
  Kernel k(odd, cpu);
  EXPECT_THROW(k.apply_opt(parse_opt("TC:0:(-1,0,1)")), KernelOptError);
  EXPECT_FALSE(k.tensor_core());
  k.apply_opt(parse_opt("TC:0:(-1,2,1)"));
  ASSERT_TRUE(k.tensor_core());
  ASSERT_TRUE(k.tensor_core_opts());
  EXPECT_FALSE(k.tensor_core_opts()->axis_pads.empty());
}

TEST(TensorCores, HalfMatmulOnCudaGetsAnMmaShape) {
  Kernel half_acc(test::matmul_ast(64, 64, 64, dtypes::float16, dtypes::float16), cuda);
  half_acc.apply_opt(parse_opt("TC:0:(-1,0,1)"));
  EXPECT_EQ(half_acc.tensor_core()->name(), "WMMA_8_16_16_float16_float16");
  Kernel k(test::matmul_ast(64, 64, 64, dtypes::float16, dtypes::float32), cuda);
  k.apply_opt(parse_opt("TC:0:(-1,0,1)"));
  ASSERT_TRUE(k.tensor_core());
  EXPECT_EQ(k.tensor_core()->name(), "WMMA_8_16_16_float16_float32");
  // 32 threads as five LOCAL sub-axes, K as four unrolls.
  EXPECT_EQ(k.axes_of({AxisType::LOCAL}).size(), 5u);
  EXPECT_EQ(k.axes_of({AxisType::UNROLL}).size(), 4u);
  const std::vector<UOp> w = wmmas(k.get_optimized_ast());
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].arg().as_tuple().at(0).as_string(), k.tensor_core()->name());
}

TEST(TensorCores, NoGroupAndNoUpcastOfTcLocalsAfterTc) {
  Kernel k(test::matmul_ast(64, 64, 64, dtypes::float16, dtypes::float32), cuda);
  k.apply_opt(parse_opt("TC:0:(-1,0,1)"));
  try {
    k.apply_opt(parse_opt("GROUP:0:2"));
    FAIL() << "GROUP after TC was accepted";
  } catch (const KernelOptError& e) {
    EXPECT_EQ(std::string(e.what()), "can't group with tensor cores");
  }
  const int tc_local = k.axes_of({AxisType::LOCAL}).at(0);
  EXPECT_THROW(k.apply_opt(Opt{OptOps::UPCAST, tc_local, 2}), KernelOptError);
}

TEST(TensorCores, UseTensorCores2KeepsTheShapeButNotTheWmma) {
  Kernel k(test::named("matmul_64"), cpu);
  k.apply_opt(parse_opt("TC:0:(-1,0,2)"));
  EXPECT_EQ(test::letters(k), "LLuuuuuuuuR");
  EXPECT_TRUE(wmmas(k.get_optimized_ast()).empty());
}

TEST(TensorCores, TheHeuristicsUseTensorCoresWhereOneFits) {
  auto opts_of = [](const UOp& ast, const Renderer& r) {
    return kernel_info_of(get_optimized_ast(ast, r))->applied_opts;
  };
  EXPECT_EQ(opts_of(test::named("matmul_64"), cpu).at(0).op, OptOps::TC);
  EXPECT_EQ(opts_of(test::named("matmul_64"), Renderer::cpu(4)).back().op, OptOps::THREAD);
  for (const Opt& o : opts_of(test::named("sum_4096x4096"), cpu)) EXPECT_NE(o.op, OptOps::TC);
  Renderer no_tc = cpu;
  no_tc.tensor_cores.clear();
  for (const Opt& o : opts_of(test::named("matmul_64"), no_tc)) EXPECT_NE(o.op, OptOps::TC);
}

}  // namespace
}  // namespace tunebed
