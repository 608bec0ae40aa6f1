// matmul, conv2d, pools, softmax, layernorm and attention on cases small enough to do by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "core/tensor/tensor.hpp"
#include "tests/tensor/values.hpp"

namespace tunebed {
namespace {

TEST(TensorNN, MatmulAndDot) {
  const Tensor a = Tensor::from_values({1, 2, 3, 4}, {2, 2}), b = Tensor::from_values({5, 6, 7, 8}, {2, 2});
  EXPECT_EQ(vals(a.matmul(b)), (V{19, 22, 43, 50}));
  EXPECT_EQ(vals(Tensor::from_values({1, 2, 3}, {3}).dot(Tensor::from_values({1, 1, 0}, {3}))), (V{3}));
  EXPECT_EQ(vals(iota({2, 3}).matmul(iota({3}))), (V{5, 14}));  // matrix @ vector
  const Tensor batched = iota({2, 2, 3}).matmul(iota({2, 3, 2}));
  EXPECT_EQ(batched.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(vals(batched), (V{10, 13, 28, 40, 172, 193, 244, 274}));
  EXPECT_EQ(vals(iota({2, 3}).matmul(iota({2, 3, 1}))), (V{5, 14, 14, 50}));  // batch broadcast
  const Tensor ai = Tensor::from_values({1, 2, 3, 4}, {2, 2}, dtypes::int32);
  EXPECT_EQ(ai.matmul(ai).dtype(), dtypes::int32);
  EXPECT_EQ(vals(ai.matmul(ai)), (V{7, 10, 15, 22}));
}

TEST(TensorNN, Conv2dBasicStridePaddingDilationGroups) {
  const Tensor x = iota({1, 1, 3, 3}), w = Tensor::ones({1, 1, 2, 2});
  EXPECT_EQ(vals(x.conv2d(w)), (V{8, 12, 20, 24}));
  EXPECT_EQ(vals(x.conv2d(w, std::nullopt, {.padding = {1}})),
            (V{0, 1, 3, 2, 3, 8, 12, 7, 9, 20, 24, 13, 6, 13, 15, 8}));
  EXPECT_EQ(vals(x.conv2d(w, std::nullopt, {.stride = {2}, .padding = {1}})), (V{0, 3, 9, 24}));
  EXPECT_EQ(vals(x.conv2d(w, std::nullopt, {.dilation = {2}})), (V{16}));  // 0 + 2 + 6 + 8
  // Two groups of one channel, each with its own filter, and a bias.
  const Tensor x2 = iota({1, 2, 2, 2}), w2 = Tensor::from_values({1, 0, 0, 0, 0, 0, 0, 2}, {2, 1, 2, 2});
  const Tensor bias = Tensor::from_values({10, 20}, {2});
  EXPECT_EQ(vals(x2.conv2d(w2, bias, {.groups = 2})), (V{10, 34}));
}

TEST(TensorNN, Pools) {
  const Tensor x = iota({1, 1, 4, 4});
  EXPECT_EQ(vals(x.max_pool2d()), (V{5, 7, 13, 15}));
  EXPECT_EQ(vals(x.avg_pool2d()), (V{2.5, 4.5, 10.5, 12.5}));
  EXPECT_EQ(vals(x.max_pool2d({3, 3}, {1, 1})), (V{10, 11, 14, 15}));
  EXPECT_EQ(vals(x.max_pool2d({2, 2}, {2, 2}, {1}, {1})), (V{0, 2, 3, 8, 10, 11, 12, 14, 15}));
  EXPECT_EQ(vals(-x.max_pool2d({2, 2}, {2, 2}, {1}, {1})), (V{0, -2, -3, -8, -10, -11, -12, -14, -15}));
  EXPECT_EQ(vals((-x).max_pool2d({2, 2}, {2, 2}, {1}, {1})),
            (V{0, -1, -3, -4, -5, -7, -12, -13, -15}));  // pad never wins
}

TEST(TensorNN, SoftmaxLogSoftmaxLayernorm) {
  const Tensor x = Tensor::from_values({0, std::log(3.0), 1, 1}, {2, 2});
  const V s = vals(x.softmax());
  EXPECT_NEAR(s[0], 0.25, 1e-6);
  EXPECT_NEAR(s[1], 0.75, 1e-6);
  EXPECT_NEAR(s[2], 0.5, 1e-6);
  const V ls = vals(x.log_softmax());
  EXPECT_NEAR(ls[0], std::log(0.25), 1e-6);
  EXPECT_NEAR(ls[3], std::log(0.5), 1e-6);
  const V ln = vals(Tensor::from_values({1, 3}, {1, 2}).layernorm(-1, 0));
  EXPECT_NEAR(ln[0], -1, 1e-6);
  EXPECT_NEAR(ln[1], 1, 1e-6);
}

TEST(TensorNN, AttentionWithAndWithoutCausalMask) {
  // One query row attends equally to two identical keys, so it averages the value rows.
  const Tensor q = Tensor::from_values({1, 0, 1, 0}, {2, 2}), k = Tensor::from_values({1, 0, 1, 0}, {2, 2});
  const Tensor v = Tensor::from_values({2, 4, 6, 8}, {2, 2});
  const V plain = vals(q.scaled_dot_product_attention(k, v));
  for (size_t j = 0; j < 4; j++) EXPECT_NEAR(plain[j], (V{4, 6, 4, 6})[j], 1e-5);
  const V causal = vals(q.scaled_dot_product_attention(k, v, std::nullopt, true));
  for (size_t j = 0; j < 4; j++) EXPECT_NEAR(causal[j], (V{2, 4, 4, 6})[j], 1e-5);  // row 0 sees key 0 only
}

}  // namespace
}  // namespace tunebed
