// Kernel counts against tinygrad at the seed commit 7b16fadd. tinygrad's numbers come from running
// it (DEV=CPU, the same shapes): `len(t.schedule())` with every input an already realized
// Tensor.empty. Each test states tinygrad's count beside its own.
#include <gtest/gtest.h>

#include "core/schedule/schedule.hpp"
#include "core/tensor/tensor.hpp"

namespace tunebed {
namespace {

size_t kernels(const Tensor& t) { return create_schedule({t.uop()}).items.size(); }
Tensor E(Shape s) { return Tensor::empty(std::move(s)); }

TEST(KernelCount, ChainOfFiveElementwiseOpsIsOneKernel) {
  Tensor x = E({16});
  EXPECT_EQ(kernels(((((x + 1) * 2).exp() - 3).relu() + x)), 1u);  // tinygrad: 1
}

TEST(KernelCount, MatmulIsOneKernel) {
  EXPECT_EQ(kernels(E({8, 16}).matmul(E({16, 32}))), 1u);  // tinygrad: 1
}

TEST(KernelCount, MatmulBiasReluIsOneKernel) {
  EXPECT_EQ(kernels((E({8, 16}).matmul(E({16, 32})) + E({32})).relu()), 1u);  // tinygrad: 1
}

TEST(KernelCount, SumThenBroadcastDivideIsTwoKernels) {
  Tensor x = E({8, 16});
  EXPECT_EQ(kernels(x / x.sum(1, true)), 2u);  // tinygrad: 2 (the sum is expanded: realized)
}

TEST(KernelCount, SoftmaxIsThreeKernels) {
  EXPECT_EQ(kernels(E({8, 16}).softmax(-1)), 3u);  // tinygrad: 3 (max, sum of exp, divide)
}

TEST(KernelCount, LayernormIsThreeKernels) {
  EXPECT_EQ(kernels(E({8, 16}).layernorm()), 3u);  // tinygrad: 3 (mean, variance, normalise)
}

TEST(KernelCount, Conv2dIsOneKernel) {
  EXPECT_EQ(kernels(E({1, 3, 8, 8}).conv2d(E({4, 3, 3, 3}))), 1u);  // tinygrad: 1
}

TEST(KernelCount, Conv2dBiasReluIsOneKernel) {
  EXPECT_EQ(kernels(E({1, 3, 8, 8}).conv2d(E({4, 3, 3, 3}), E({4})).relu()), 1u);  // tinygrad: 1
}

TEST(KernelCount, AttentionIsFiveKernels) {
  Tensor q = E({1, 2, 8, 16}), k = E({1, 2, 8, 16}), v = E({1, 2, 8, 16});
  EXPECT_EQ(kernels(q.scaled_dot_product_attention(k, v)), 5u);  // tinygrad: 5
}

TEST(KernelCount, RealizedInputAloneNeedsNoKernel) {
  Tensor x = E({4, 4});
  EXPECT_EQ(kernels(x), 0u);                  // tinygrad: 0
  EXPECT_EQ(kernels(x.permute({1, 0})), 0u);  // tinygrad: 0 (a view of a buffer)
}

TEST(KernelCount, ContiguousOfAPermuteIsOneKernel) {
  EXPECT_EQ(kernels(E({4, 6}).permute({1, 0}).contiguous()), 1u);  // tinygrad: 1
}

}  // namespace
}  // namespace tunebed
