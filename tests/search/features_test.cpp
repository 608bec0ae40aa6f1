// kernel_features on a real kernel: each feature moves with the opt it describes.
#include "search/features.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/opt/kernel.hpp"
#include "tests/opt/kernels.hpp"

namespace tunebed::search {
namespace {

float feature(const Kernel& k, const std::string& name) {
  const std::vector<std::string>& names = kernel_feature_names();
  const auto it = std::ranges::find(names, name);
  EXPECT_NE(it, names.end()) << name;
  return kernel_features(k).at(static_cast<size_t>(it - names.begin()));
}

float log2p(double x) { return static_cast<float>(std::log2(1 + x)); }

Kernel matmul(const std::vector<Opt>& opts) {
  Kernel k(test::named("matmul_512"), Renderer::cpu(4));
  k.apply_opts(opts);
  return k;
}

TEST(KernelFeatures, OneValuePerNameAndAllFinite) {
  const std::vector<float> f = kernel_features(matmul({}));
  ASSERT_EQ(f.size(), kernel_feature_names().size());
  for (float x : f) EXPECT_TRUE(std::isfinite(x));
}

TEST(KernelFeatures, TheUnoptimizedMatmulIsThreeLoopsOfScalarLoads) {
  const Kernel k = matmul({});
  EXPECT_FLOAT_EQ(feature(k, "loops"), log2p(512 * 512));
  EXPECT_FLOAT_EQ(feature(k, "reduce"), log2p(512));
  EXPECT_FLOAT_EQ(feature(k, "upcast"), log2p(1));  // a product of no axes is 1
  EXPECT_FLOAT_EQ(feature(k, "inner_loop"), log2p(512));
  EXPECT_FLOAT_EQ(feature(k, "loads"), log2p(2));   // one element of each input
  EXPECT_FLOAT_EQ(feature(k, "stores"), log2p(1));
  EXPECT_FLOAT_EQ(feature(k, "accumulators"), log2p(1));
  EXPECT_FLOAT_EQ(feature(k, "load_vector"), log2p(1));
  // Along the reduce, A[m, k] walks contiguously and B[k, n] strides a row per step.
  EXPECT_FLOAT_EQ(feature(k, "inner_contiguous"), 0.5F);
  EXPECT_FLOAT_EQ(feature(k, "inner_strided"), 0.5F);
  EXPECT_FLOAT_EQ(feature(k, "opts"), 0);
}

TEST(KernelFeatures, UpcastsAndUnrollsGrowTheBodyAndItsVectors) {
  // UPCAST of n (output axis 1) by 4: four accumulators, B read as a 4-wide vector, A re-used.
  const Kernel up = matmul({{OptOps::UPCAST, 1, 4}});
  EXPECT_FLOAT_EQ(feature(up, "upcast"), log2p(4));
  EXPECT_FLOAT_EQ(feature(up, "accumulators"), log2p(4));
  EXPECT_FLOAT_EQ(feature(up, "loads"), log2p(1 + 4));
  EXPECT_FLOAT_EQ(feature(up, "load_vector"), log2p(4));
  EXPECT_FLOAT_EQ(feature(up, "store_vector"), log2p(4));
  EXPECT_FLOAT_EQ(feature(up, "stores"), log2p(4));
  EXPECT_FLOAT_EQ(feature(up, "registers"), log2p(4 + 5));
  // ... then UNROLL of the reduce by 4: A read as a vector too, still four accumulators.
  const Kernel both = matmul({{OptOps::UPCAST, 1, 4}, {OptOps::UNROLL, 0, 4}});
  EXPECT_FLOAT_EQ(feature(both, "unroll"), log2p(4));
  EXPECT_FLOAT_EQ(feature(both, "reduce"), log2p(128));
  EXPECT_FLOAT_EQ(feature(both, "accumulators"), log2p(4));
  EXPECT_FLOAT_EQ(feature(both, "loads"), log2p(4 + 16));
  EXPECT_FLOAT_EQ(feature(both, "opts"), 2);
  EXPECT_GT(feature(both, "flops_per_load"), feature(matmul({}), "flops_per_load"));
}

TEST(KernelFeatures, ThreadsAreCounted) {
  EXPECT_FLOAT_EQ(feature(matmul({{OptOps::THREAD, 0, 4}}), "threads"), log2p(4));
  EXPECT_FLOAT_EQ(feature(matmul({}), "threads"), log2p(1));
}

}  // namespace
}  // namespace tunebed::search
