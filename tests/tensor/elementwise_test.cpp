// Each elementwise Tensor op on a small hand-computed case. Values are exact where the arithmetic
// is (integers, float32 sums of small numbers); transcendental ones compare within 1e-6.
#include <gtest/gtest.h>

#include <cmath>

#include "core/tensor/tensor.hpp"
#include "tests/tensor/values.hpp"

namespace tunebed {
namespace {

Tensor f32(const V& v, const Shape& s) { return Tensor::from_values(v, s, dtypes::float32); }
Tensor i32(const V& v, const Shape& s) { return Tensor::from_values(v, s, dtypes::int32); }

void expect_near(const V& got, const V& want, double tol = 1e-6) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); k++) EXPECT_NEAR(got[k], want[k], tol) << "element " << k;
}

TEST(TensorElementwise, ArithmeticOnFloats) {
  const Tensor a = f32({1, 2, 3, 4}, {2, 2}), b = f32({10, 20, 30, 40}, {2, 2});
  EXPECT_EQ(vals(a + b), (V{11, 22, 33, 44}));
  EXPECT_EQ(vals(b - a), (V{9, 18, 27, 36}));
  EXPECT_EQ(vals(a * b), (V{10, 40, 90, 160}));
  EXPECT_EQ(vals(b / f32({2, 4, 5, 8}, {2, 2})), (V{5, 5, 6, 5}));
  EXPECT_EQ(vals(-a), (V{-1, -2, -3, -4}));
  EXPECT_EQ(vals(a * 2 + 1), (V{3, 5, 7, 9}));
  EXPECT_EQ(vals(10 - a), (V{9, 8, 7, 6}));
  EXPECT_EQ(vals(a.square()), (V{1, 4, 9, 16}));
}

TEST(TensorElementwise, IntegerArithmeticIsExactAndDivisionIsTrue) {
  const Tensor a = i32({7, -7, 9, 2}, {4}), b = i32({2, 2, -4, 5}, {4});
  EXPECT_EQ((a + b).dtype(), dtypes::int32);
  EXPECT_EQ(vals(a * b), (V{14, -14, -36, 10}));
  EXPECT_EQ(vals(a.idiv(b)), (V{3, -3, -2, 0}));  // truncating, as C
  EXPECT_EQ(vals(a.mod(b)), (V{1, -1, 1, 2}));    // the dividend's sign, as C
  EXPECT_EQ((a / b).dtype(), dtypes::float32);    // true division gives a float (tinygrad)
  EXPECT_EQ(vals(a / b), (V{3.5, -3.5, -2.25, 0.4f}));
  EXPECT_EQ(vals(i32({2147483647}, {1}) + 1), (V{-2147483648.0}));  // wraps
}

TEST(TensorElementwise, Transcendentals) {
  const Tensor x = f32({0.5, 1, 2, 4}, {4});
  expect_near(vals(x.exp()), {std::exp(0.5), std::exp(1.0), std::exp(2.0), std::exp(4.0)}, 1e-4);
  expect_near(vals(x.log()), {std::log(0.5), 0, std::log(2.0), std::log(4.0)});
  EXPECT_EQ(vals(x.exp2()), (V{std::sqrt(2.0f), 2, 4, 16}));
  EXPECT_EQ(vals(x.log2()), (V{-1, 0, 1, 2}));
  EXPECT_EQ(vals(x.sqrt()), (V{std::sqrt(0.5f), 1, std::sqrt(2.0f), 2}));
  EXPECT_EQ(vals(x.rsqrt()), (V{1 / std::sqrt(0.5f), 1, 1 / std::sqrt(2.0f), 0.5}));
  EXPECT_EQ(vals(x.reciprocal()), (V{2, 1, 0.5, 0.25}));
  expect_near(vals(x.sin()), {std::sin(0.5), std::sin(1.0), std::sin(2.0), std::sin(4.0)});
  expect_near(vals(x.cos()), {std::cos(0.5), std::cos(1.0), std::cos(2.0), std::cos(4.0)});
  EXPECT_EQ(vals(i32({4, 9}, {2}).sqrt()), (V{2, 3}));  // ints compute as float32
}

TEST(TensorElementwise, Activations) {
  const Tensor x = f32({-2, -0.5, 0, 1.5}, {4});
  EXPECT_EQ(vals(x.relu()), (V{0, 0, 0, 1.5}));
  EXPECT_EQ(vals(x.abs()), (V{2, 0.5, 0, 1.5}));
  EXPECT_EQ(vals(x.sign()), (V{-1, -1, 0, 1}));
  auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
  expect_near(vals(x.sigmoid()), {sigmoid(-2), sigmoid(-0.5), 0.5, sigmoid(1.5)});
  expect_near(vals(x.tanh()), {std::tanh(-2.0), std::tanh(-0.5), 0, std::tanh(1.5)});
  auto gelu = [](double v) {
    return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
  };
  expect_near(vals(x.gelu()), {gelu(-2), gelu(-0.5), 0, gelu(1.5)});
}

TEST(TensorElementwise, ComparisonsGiveBool) {
  const Tensor a = i32({1, 2, 3}, {3}), b = i32({3, 2, 1}, {3});
  EXPECT_EQ((a < b).dtype(), dtypes::bool_);
  EXPECT_EQ(vals(a < b), (V{1, 0, 0}));
  EXPECT_EQ(vals(a > b), (V{0, 0, 1}));
  EXPECT_EQ(vals(a <= b), (V{1, 1, 0}));
  EXPECT_EQ(vals(a >= b), (V{0, 1, 1}));
  EXPECT_EQ(vals(a.eq(b)), (V{0, 1, 0}));
  EXPECT_EQ(vals(a.ne(b)), (V{1, 0, 1}));
  EXPECT_EQ(vals((a < b).logical_not()), (V{0, 1, 1}));
}

TEST(TensorElementwise, WhereMaximumMinimum) {
  const Tensor a = f32({1, -5, 3, 0}, {4}), b = f32({2, -6, 3, -1}, {4});
  EXPECT_EQ(vals(a.maximum(b)), (V{2, -5, 3, 0}));
  EXPECT_EQ(vals(a.minimum(b)), (V{1, -6, 3, -1}));
  EXPECT_EQ(vals(i32({1, -5}, {2}).minimum(i32({2, -6}, {2}))), (V{1, -6}));  // through ~x for ints
  EXPECT_EQ(vals((a > 0).where(a, b)), (V{1, -6, 3, -1}));
  EXPECT_EQ(vals((a > 0).where(a, 100)), (V{1, 100, 3, 100}));
}

TEST(TensorElementwise, CastRoundsTruncatesAndWraps) {
  const Tensor x = f32({1.7f, -1.7f, 300.5f, 65520}, {4});
  EXPECT_EQ(vals(x.cast(dtypes::int32)), (V{1, -1, 300, 65520}));
  EXPECT_EQ(vals(x.cast(dtypes::uint8)), (V{1, 255, 44, 240}));  // through int32, then wraps
  EXPECT_EQ(vals(x.cast(dtypes::float16)), (V{1.7001953125, -1.7001953125, 300.5, INFINITY}));
  EXPECT_EQ(vals(x.cast(dtypes::bool_)), (V{1, 1, 1, 1}));
}

TEST(TensorElementwise, DtypePromotion) {
  const Tensor i = i32({1, 2}, {2}), h = Tensor::from_values({0.5, 0.25}, {2}, dtypes::float16);
  EXPECT_EQ((i + h).dtype(), dtypes::float16);
  EXPECT_EQ((i + 1).dtype(), dtypes::int32);  // an int scalar keeps an int tensor's dtype
  EXPECT_EQ((i + 0.5).dtype(), dtypes::float32);
  EXPECT_EQ((h * 2.0).dtype(), dtypes::float16);
  EXPECT_EQ(vals(i + 0.5), (V{1.5, 2.5}));
}

}  // namespace
}  // namespace tunebed
