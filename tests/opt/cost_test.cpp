// kernel_cost against counts worked out by hand for kernels tinygrad's scheduler made
// (tests/opt/data/kernels.txt) and a few edited from them.
#include "core/opt/cost.hpp"

#include <gtest/gtest.h>

#include "tests/opt/kernels.hpp"

namespace tunebed {
namespace {

constexpr int64_t kFloat = 4;  // bytes

// The kernel with its one STORE's value replaced by f(value).
UOp with_stored_value(const UOp& ast, const std::function<UOp(const UOp&)>& f) {
  const UOp& store = ast.src(0);
  return ast.with_src({store.with_src({store.src(0), f(store.src(1))})});
}

TEST(KernelCost, MatmulIsTwoFlopsPerMultiplyAccumulate) {
  KernelCost c = kernel_cost(test::named("matmul_512"));
  EXPECT_EQ(c.flops, 2 * 512 * 512 * 512);
  EXPECT_EQ(c.bytes, 3 * 512 * 512 * kFloat);
  // (33x17) @ (17x29): full shape (33, 29, 17); the buffers are 33*29, 33*17 and 17*29 floats.
  KernelCost odd = kernel_cost(test::named("matmul_33x17x29"));
  EXPECT_EQ(odd.flops, 2 * 33 * 29 * 17);
  EXPECT_EQ(odd.bytes, (957 + 561 + 493) * kFloat);
}

TEST(KernelCost, ElementwiseAddIsOneFlopAndThreeBuffersPerElement) {
  const int64_t n = 4096 * 4096;
  KernelCost c = kernel_cost(test::named("add_16M"));
  EXPECT_EQ(c.flops, n);
  EXPECT_EQ(c.bytes, 3 * n * kFloat);
}

TEST(KernelCost, ASumCountsOneAddPerInputElement) {
  KernelCost c = kernel_cost(test::named("sum_4096x4096"));
  EXPECT_EQ(c.flops, 4096 * 4096);
  EXPECT_EQ(c.bytes, (4096 * 4096 + 4096) * kFloat);
  // exp(x).sum() as tinygrad writes it: MUL by 1/ln 2, EXP2, then the reduce, 1000 each.
  EXPECT_EQ(kernel_cost(test::named("exp_sum_1000")).flops, 3 * 1000);
}

TEST(KernelCost, AnOpAfterTheReduceRunsOverTheOutputShape) {
  UOp squared = with_stored_value(test::named("sum_4096x4096"), [](const UOp& r) { return r * r; });
  EXPECT_EQ(kernel_cost(squared).flops, 4096 * 4096 + 4096);
}

TEST(KernelCost, MulaccCountsTwoAndAConstantsValidSelectCountsNothing) {
  const int64_t n = 4096 * 4096;
  const UOp& add = test::named("add_16M").src(0).src(1);
  UOp fma = with_stored_value(test::named("add_16M"), [&](const UOp&) {
    return UOp::make(Ops::MULACC, dtypes::float32, {add.src(0), add.src(1), add.src(0)});
  });
  EXPECT_EQ(kernel_cost(fma).flops, 2 * n);

  UOp plus_one = with_stored_value(test::named("add_16M"), [&](const UOp&) {
    UOp view = UOp::make(Ops::VIEW, dtypes::void_, {}, ShapeTracker::from_shape({4096, 4096}).to_arg());
    UOp valid = UOp::make(Ops::VALID, dtypes::bool_, {view});
    UOp one = UOp::make(Ops::CONST, dtypes::float32, {view}, Arg(1.0));
    UOp zero = UOp::make(Ops::CONST, dtypes::float32, {view}, Arg(0.0));
    return add.src(0) + valid.where(one, zero);
  });
  EXPECT_EQ(kernel_cost(plus_one).flops, n);
  EXPECT_EQ(kernel_cost(plus_one).bytes, 2 * n * kFloat);  // buffer 2 is not read any more
}

TEST(KernelCost, APaddedCopyMovesBytesButDoesNoArithmetic) {
  KernelCost c = kernel_cost(test::named("pad_stack_3x100"));
  EXPECT_EQ(c.flops, 0);
  EXPECT_EQ(c.bytes, (306 + 100) * kFloat);
}

TEST(KernelCost, ABufferOfUnknownSizeIsRefusedByName) {
  const UOp& ast = test::named("add_16M");
  UOp g = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr_to(), {}, Arg(int64_t{7}));
  UOp view = UOp::make(Ops::VIEW, g.dtype(), {g}, ShapeTracker::from_shape({4096, 4096}).to_arg());
  UOp bad =
      with_stored_value(ast, [&](const UOp& v) { return v + UOp::make(Ops::LOAD, dtypes::float32, {view}); });
  try {
    kernel_cost(bad);
    FAIL() << "a DEFINE_GLOBAL without a size was costed";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("DEFINE_GLOBAL 7 has no buffer size"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tunebed
