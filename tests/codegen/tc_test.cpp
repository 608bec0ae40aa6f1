// Tensor cores on the CPU: a matmul with the TC opt lowers to WMMA register blocks, renders as
// the C helper and computes what the plain kernel computes (the direct evaluation of the AST),
// for shapes the blocks divide, shapes that need PADTO (tc_opt 2) and with opts after the TC.
#include <gtest/gtest.h>

#include <random>
#include <tuple>

#include "core/engine/compiled_program.hpp"
#include "core/opt/kernel.hpp"
#include "tests/codegen/kernel_check.hpp"
#include "tests/codegen/kernels.hpp"

namespace tunebed {
namespace {

struct TcCase {
  int64_t m, n, k;
  std::vector<Opt> opts;
  std::string tc_name;  // the tensor core the TC opt picks
};

std::string describe(const TcCase& c) {
  return std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + " " +
         to_string(c.opts);
}

UOp optimized(const TcCase& c, const Renderer& r) {
  Kernel k(testing::matmul(c.m, c.n, c.k), r);
  k.apply_opts(c.opts);
  EXPECT_TRUE(k.tensor_core().has_value());
  if (k.tensor_core()) EXPECT_EQ(k.tensor_core()->name(), c.tc_name);
  return k.get_optimized_ast();
}

TEST(TensorCoreCpu, TcMatmulMatchesThePlainKernel) {
  const Opt tc0{OptOps::TC, 0, TCArg{-1, 0, 1}}, tc_pad{OptOps::TC, 0, TCArg{-1, 2, 1}};
  const std::string big = "WMMA_32_8_1_float32_float32", small = "WMMA_16_4_1_float32_float32";
  const std::vector<TcCase> cases = {
      {8, 32, 4, {tc0}, big},                               // one block, N and M axes vanish
      {16, 64, 24, {tc0}, big},                             // 2 x 2 blocks
      {4, 48, 8, {tc0}, small},                             // 32x8 does not divide: 16x4
      {12, 40, 7, {tc_pad}, big},                           // M and N padded
      {16, 64, 32, {tc0, Opt{OptOps::UNROLL, 0, 4}}, big},  // K unrolled after the TC
      {16, 64, 32, {tc0, Opt{OptOps::UPCAST, 0, 2}}, big},  // more M per block
  };
  auto device = open_device("cpu");
  const Renderer r = Renderer::cpu(1);
  uint32_t seed = 0;
  for (const TcCase& c : cases) {
    SCOPED_TRACE(describe(c));
    UOp plain = testing::matmul(c.m, c.n, c.k);
    std::optional<CompiledProgram> built;
    try {
      built = compile_program(optimized(c, r), device, r);
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    const CompiledProgram& exe = *built;
    EXPECT_NE(exe.spec.source.find("__WMMA_"), std::string::npos) << exe.spec.source;
    const std::vector<HostBuffer> inputs = testing::random_buffers(plain, seed++);
    EXPECT_EQ(testing::wrong_output(plain, inputs, exe.run_on_copies(inputs)), "") << exe.spec.source;
  }
}

// Every TC the opt accepts on a matmul, over tc_select, tc_opt and the axis choice, computes the
// matmul: shapes the blocks divide, shapes only 16x4 divides, and shapes that need padding.
TEST(TensorCoreCpu, EveryAcceptedTcChoiceMatchesThePlainKernel) {
  auto device = open_device("cpu");
  const Renderer r = Renderer::cpu(1);
  int accepted = 0;
  uint32_t seed = 100;
  for (auto [m, n, k] : {std::tuple{16, 32, 8}, std::tuple{8, 48, 5}, std::tuple{33, 17, 29}}) {
    const UOp plain = testing::matmul(m, n, k);
    for (int select = -1; select < static_cast<int>(r.tensor_cores.size()); select++)
      for (int tc_opt = 0; tc_opt <= 2; tc_opt++)
        for (int axis = 0; axis < 3; axis++) {
          const Opt tc{OptOps::TC, axis, TCArg{select, tc_opt, 1}};
          Kernel kernel(plain, r);
          try {
            kernel.apply_opt(tc);
          } catch (const KernelOptError&) {
            continue;
          }
          SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " " + to_string(tc));
          accepted++;
          const CompiledProgram exe = compile_program(kernel.get_optimized_ast(), device, r);
          const std::vector<HostBuffer> inputs = testing::random_buffers(plain, seed++);
          EXPECT_EQ(testing::wrong_output(plain, inputs, exe.run_on_copies(inputs)), "");
        }
  }
  EXPECT_GE(accepted, 6);  // the matmuls do get tensor cores
}

}  // namespace
}  // namespace tunebed
