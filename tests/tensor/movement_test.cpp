// Movement ops and reductions on small hand-computed cases, with exact values.
#include <gtest/gtest.h>

#include "core/tensor/tensor.hpp"
#include "tests/tensor/values.hpp"

namespace tunebed {
namespace {

TEST(TensorMovement, ReshapeInfersOneDim) {
  const Tensor x = iota({2, 3}).reshape({3, -1});
  EXPECT_EQ(x.shape(), (Shape{3, 2}));
  EXPECT_EQ(vals(x), (V{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(iota({2, 3}).flatten().shape(), (Shape{6}));
  EXPECT_EQ(iota({2, 3, 4}).flatten(1).shape(), (Shape{2, 12}));
  EXPECT_EQ(iota({2, 3}).unsqueeze(1).shape(), (Shape{2, 1, 3}));
  EXPECT_EQ(iota({2, 1, 3}).squeeze(1).shape(), (Shape{2, 3}));
}

TEST(TensorMovement, PermuteAndTranspose) {
  EXPECT_EQ(vals(iota({2, 3}).transpose()), (V{0, 3, 1, 4, 2, 5}));
  const Tensor p = iota({2, 3, 4}).permute({2, 0, 1});
  EXPECT_EQ(p.shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(vals(p.index(0, 1)), (V{1, 5, 9, 13, 17, 21}));
}

TEST(TensorMovement, ExpandPadShrinkFlip) {
  EXPECT_EQ(vals(iota({2, 1}).expand({2, 3})), (V{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(vals(iota({3}).expand({2, -1})), (V{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(vals(iota({2, 2}).pad({{1, 0}, {0, 1}})), (V{0, 0, 0, 0, 1, 0, 2, 3, 0}));
  EXPECT_EQ(vals(iota({3}).pad({{1, 1}}, -1)), (V{-1, 0, 1, 2, -1}));
  EXPECT_EQ(vals(iota({4}).pad({{-1, 1}})), (V{1, 2, 3, 0}));  // negative padding shrinks
  EXPECT_EQ(vals(iota({3, 3}).shrink({{1, 3}, {0, 2}})), (V{3, 4, 6, 7}));
  EXPECT_EQ(vals(iota({2, 3}).flip({1})), (V{2, 1, 0, 5, 4, 3}));
  EXPECT_EQ(vals(iota({2, 3}).flip({0, 1})), (V{5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(vals(iota({2}).repeat({2, 2})), (V{0, 1, 0, 1, 0, 1, 0, 1}));
}

TEST(TensorMovement, SlicingFollowsPython) {
  const Tensor x = iota({10});
  EXPECT_EQ(vals(x.slice({{2, 7, 1}})), (V{2, 3, 4, 5, 6}));
  EXPECT_EQ(vals(x.slice({{1, std::nullopt, 3}})), (V{1, 4, 7}));
  EXPECT_EQ(vals(x.slice({{std::nullopt, std::nullopt, -1}})), (V{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(vals(x.slice({{8, 1, -3}})), (V{8, 5, 2}));
  EXPECT_EQ(vals(x.slice({{-3, std::nullopt, 1}})), (V{7, 8, 9}));
  EXPECT_EQ(x.slice({{5, 2, 1}}).shape(), (Shape{0}));
  const Tensor m = iota({3, 4});
  EXPECT_EQ(vals(m.slice({{1, 3, 1}, {std::nullopt, std::nullopt, 2}})), (V{4, 6, 8, 10}));
  EXPECT_EQ(vals(m.index(1, -1)), (V{3, 7, 11}));
}

TEST(TensorReduce, SumMaxMinProdOverAxes) {
  const Tensor x = Tensor::from_values({1, -2, 3, 4, 5, -6}, {2, 3});
  EXPECT_EQ(vals(x.sum()), (V{5}));
  EXPECT_EQ(x.sum().shape(), Shape{});
  EXPECT_EQ(vals(x.sum(0)), (V{5, 3, -3}));
  EXPECT_EQ(vals(x.sum(1, true)), (V{2, 3}));
  EXPECT_EQ(x.sum(1, true).shape(), (Shape{2, 1}));
  EXPECT_EQ(vals(x.sum({0, 1})), (V{5}));
  EXPECT_EQ(vals(x.max(1)), (V{3, 5}));
  EXPECT_EQ(vals(x.min(0)), (V{1, -2, -6}));
  EXPECT_EQ(vals(x.prod(1)), (V{-6, -120}));
  EXPECT_EQ(vals(x.sum(-1)), (V{2, 3}));
}

TEST(TensorReduce, MeanVarArgmax) {
  const Tensor x = Tensor::from_values({1, 2, 3, 4, 6, 8}, {2, 3});
  EXPECT_EQ(vals(x.mean(1)), (V{2, 6}));
  EXPECT_EQ(vals(x.var(1)), (V{1, 4}));
  EXPECT_EQ(vals(x.var(1, false, 0)), (V{2.0f / 3, 8.0f / 3}));
  const Tensor i = Tensor::from_values({3, 1, 3, 0, 7, 7}, {2, 3}, dtypes::int32);
  EXPECT_EQ(i.mean().dtype(), dtypes::float32);
  EXPECT_EQ(vals(i.mean()), (V{21.0 / 6}));
  EXPECT_EQ(vals(i.argmax(1)), (V{0, 1}));  // the first maximum
  EXPECT_EQ(vals(i.argmax()), (V{4}));
  EXPECT_EQ(i.argmax(1).dtype(), dtypes::int32);
}

TEST(TensorReduce, SumDtypes) {
  // In float16 2048 + 1 rounds back to 2048 (the spacing there is 2); a float32 accumulator keeps
  // both ones, and 2050 is a float16.
  const Tensor h = Tensor::from_values({2048, 1, 1}, {3}, dtypes::float16);
  EXPECT_EQ(h.sum().dtype(), dtypes::float16);
  EXPECT_EQ(vals(h.sum()), (V{2050}));
  const Tensor b = Tensor::from_values({1, 0, 1}, {3}, dtypes::bool_);
  EXPECT_EQ(b.sum().dtype(), dtypes::int32);
  EXPECT_EQ(vals(b.sum()), (V{2}));
}

TEST(TensorCreation, FullArangeAndSeededRandom) {
  EXPECT_EQ(vals(Tensor::full({2, 2}, 7)), (V{7, 7, 7, 7}));
  EXPECT_EQ(Tensor::full({2}, 7).dtype(), dtypes::int32);
  EXPECT_EQ(vals(Tensor::zeros({3})), (V{0, 0, 0}));
  EXPECT_EQ(vals(Tensor::ones({2}, dtypes::int32)), (V{1, 1}));
  EXPECT_EQ(vals(Tensor::arange(5)), (V{0, 1, 2, 3, 4}));
  EXPECT_EQ(vals(Tensor::arange(10, 0, -3)), (V{10, 7, 4, 1}));
  const V a = vals(Tensor::rand({1000}, 42)), b = vals(Tensor::rand({1000}, 42)),
          c = vals(Tensor::rand({1000}, 43));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  for (double v : a) EXPECT_TRUE(v >= 0 && v < 1) << v;
  const V n = vals(Tensor::randn({20000}, 1));
  double mean = 0, sq = 0;
  for (double v : n) mean += v / n.size(), sq += v * v / n.size();
  EXPECT_NEAR(mean, 0, 0.03);
  EXPECT_NEAR(sq, 1, 0.05);
  for (double v : vals(Tensor::randint({500}, -3, 4, 9))) EXPECT_TRUE(v >= -3 && v <= 3) << v;
}

// The generator is SplitMix64, written out: these first values pin it across platforms.
TEST(TensorCreation, RandIsTheSameOnEveryPlatform) {
  const V r = vals(Tensor::rand({3}, 0, dtypes::float64));
  EXPECT_EQ(r, (V{static_cast<double>(0xe220a8397b1dcdafull >> 12) / 0x1p52,
                  static_cast<double>(0x6e789e6aa1b965f4ull >> 12) / 0x1p52,
                  static_cast<double>(0x06c45d188009454full >> 12) / 0x1p52}));
}

}  // namespace
}  // namespace tunebed
