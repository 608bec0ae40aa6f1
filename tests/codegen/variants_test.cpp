// Optimized variants (UPCAST, UNROLL, THREAD axes made by split_axis) compute what the plain
// kernel computes: each is compiled, run on seeded random inputs and checked against the exact run
// of the unsplit AST (kernel_check.hpp). And the structural promises of the passes, on the same kernels.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>

#include "core/engine/compiled_program.hpp"
#include "core/spec/ast_shape.hpp"
#include "tests/codegen/kernel_check.hpp"
#include "tests/codegen/kernels.hpp"

namespace tunebed {
namespace {

using testing::split_axis;

struct Variant {
  std::string name;
  UOp plain, optimized;
};

std::vector<Variant> variants() {
  using namespace testing;
  const AxisType UP = AxisType::UPCAST, UN = AxisType::UNROLL, TH = AxisType::THREAD;
  UOp add16 = elementwise_add(16), add12 = elementwise_add(12), add64 = elementwise_add(64),
      add10 = elementwise_add(10);
  UOp sum = sum_rows(4, 16), short_sum = sum_rows(2, 4), bsum = sum_broadcast(3, 8), mm = matmul(8, 8, 8),
      mm2 = matmul(6, 12, 10);
  return {
      {"add upcast 4", add16, split_axis(add16, 0, 4, UP)},
      {"add upcast 3 (no float3: scalar accesses)", add12, split_axis(add12, 0, 3, UP)},
      {"add upcast 8", add64, split_axis(add64, 0, 8, UP)},
      {"add upcast 4 twice", add64, split_axis(split_axis(add64, 0, 4, UP), 0, 4, UP)},
      {"add thread 4", add16, split_axis(add16, 0, 4, TH)},
      // PADTO: lanes past 10 are gated off; the C renderer reads them at index 0 and drops them.
      {"add 10 padded to 32, upcast 4", add10, with_opts(add10, "PADTO:0:32,UPCAST:0:4")},
      {"sum unroll 4", sum, split_axis(sum, 1, 4, UN)},
      {"sum unroll 4 of 4 (a reduce loop of one iteration)", short_sum, split_axis(short_sum, 1, 4, UN)},
      // The reduce loop nests in the row loop it does not read: its accumulator resets per row.
      {"sum independent of the output axis", bsum, bsum},
      {"sum upcast rows 2, unroll 8", sum, split_axis(split_axis(sum, 0, 2, UP), 1, 8, UN)},
      {"matmul upcast 4 unroll 4", mm, split_axis(split_axis(mm, 1, 4, UP), 2, 4, UN)},
      {"matmul upcast m 2, n 4, unroll 2", mm2,
       split_axis(split_axis(split_axis(mm2, 0, 2, UP), 1, 4, UP), 2, 2, UN)},
      {"matmul thread 2, upcast 4", mm, split_axis(split_axis(mm, 0, 2, TH), 1, 4, UP)},
  };
}

TEST(CodegenVariants, OptimizedVariantsMatchThePlainKernel) {
  auto device = open_device("cpu");
  uint32_t seed = 0;
  for (const Variant& v : variants()) {
    SCOPED_TRACE(v.name);
    const CompiledProgram exe = compile_program(v.optimized, device);
    const std::vector<HostBuffer> inputs = testing::random_buffers(v.plain, seed++);
    EXPECT_EQ(testing::wrong_output(v.plain, inputs, exe.run_on_copies(inputs)), "") << exe.spec.source;
  }
}

TEST(CodegenVariants, ThreadAxisLaunchesOneSlicePerCore) {
  ProgramSpec p = get_program(split_axis(testing::elementwise_add(16), 0, 4, AxisType::THREAD));
  EXPECT_EQ(p.num_cores, 4);
  EXPECT_NE(p.source.find("core_id"), std::string::npos) << p.source;
}

// After full_rewrite no kernel-level or expansion op is left, and every RANGE is closed by one
// ENDRANGE after it, properly nested.
void check_linear_program(const std::vector<UOp>& uops) {
  std::vector<UOp> open;
  for (const UOp& u : uops) {
    RC_ASSERT(!OpSet({Ops::VIEW, Ops::REDUCE_AXIS, Ops::REDUCE, Ops::UNROLL, Ops::CONTRACT, Ops::VALID})
                   .contains(u.op()));
    if (u.op() == Ops::RANGE) open.push_back(u);
    if (u.op() == Ops::ENDRANGE) {
      RC_ASSERT(!open.empty());
      RC_ASSERT(u.src(0) == open.back());
      open.pop_back();
    }
  }
  RC_ASSERT(open.empty());
  RC_ASSERT(uops.back().op() == Ops::SINK);
}

RC_GTEST_PROP(CodegenVariants, full_rewrite_leaves_only_nested_loops_and_plain_ops, ()) {
  const int64_t m = *rc::gen::elementOf(std::vector<int64_t>{2, 4, 6, 8});
  const int64_t n = *rc::gen::elementOf(std::vector<int64_t>{4, 8, 12});
  const int64_t k = *rc::gen::elementOf(std::vector<int64_t>{2, 4, 8});
  UOp ast = *rc::gen::elementOf(std::vector<UOp>{testing::matmul(m, n, k), testing::sum_rows(m, k)});
  // Split some axes by a divisor of their size, as UPCAST (kept axes) or UNROLL (reduced axes).
  const size_t rank = AstShapes().full_shape(ast).size();
  for (size_t axis = 0; axis < rank; axis++) {
    const int64_t size = AstShapes().full_shape(ast)[axis].to_int();  // of the AST split so far
    const int64_t amount = *rc::gen::elementOf(std::vector<int64_t>{1, 2, 4});
    if (amount == 1 || size % amount != 0) continue;
    const bool reduced = kernel_info(ast).axis_types[axis] == AxisType::REDUCE;
    ast = split_axis(ast, static_cast<int64_t>(axis), amount, reduced ? AxisType::UNROLL : AxisType::UPCAST);
  }
  check_linear_program(full_rewrite(ast));
}

// MAX propagates NaN from either side, as exec_alu does (C's fmax would not).
TEST(CodegenSemantics, MaxPropagatesNanFromEitherOperand) {
  const CompiledProgram exe = compile_program(testing::elementwise(Ops::MAX, 4), open_device("cpu"));
  std::vector<HostBuffer> bufs = exe.make_buffers();
  const double nan = std::nan(""), a[4] = {nan, 1, nan, 1}, b[4] = {1, nan, nan, 2};
  for (int i = 0; i < 4; i++) bufs[1].set_float(i, a[i]), bufs[2].set_float(i, b[i]);
  const std::vector<HostBuffer> got = exe.run_on_copies(bufs);
  EXPECT_EQ(testing::wrong_output(testing::elementwise(Ops::MAX, 4), bufs, got), "") << exe.spec.source;
  EXPECT_TRUE(std::isnan(got[0].get_float(0)) && std::isnan(got[0].get_float(1)));
  EXPECT_EQ(got[0].get_float(3), 2);
}

TEST(CodegenErrors, BadKernelInfoIsAClearError) {
  UOp ast = testing::elementwise_add(16);
  KernelInfo info = kernel_info(ast);
  info.axis_types.push_back(AxisType::GLOBAL);
  try {
    full_rewrite(with_kernel_info(ast, info));
    FAIL() << "two axis types for one axis were accepted";
  } catch (const CodegenError& e) {
    EXPECT_NE(std::string(e.what()).find("axis types"), std::string::npos) << e.what();
  }
  info.axis_types = {AxisType::LOCAL};
  EXPECT_THROW(full_rewrite(with_kernel_info(ast, info)), CodegenError);
  EXPECT_THROW(full_rewrite(ast.with_arg(Arg(None{}))), CodegenError);
}

}  // namespace
}  // namespace tunebed
