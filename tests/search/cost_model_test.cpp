// The cost models on synthetic data whose law is known: what they learn is a ranking within a
// kernel, and it carries over to a kernel they never saw.
#include "search/cost_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace tunebed::search {
namespace {

// A kernel of the synthetic law: time = scale * exp(2 x0 - x1 + (x2 > 0.5 ? 0.8 : 0)), x3 noise-free junk.
struct Rows {
  std::vector<std::vector<float>> x;
  std::vector<double> seconds;
};
Rows synthetic(uint64_t seed, int n, double scale) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0, 1);
  Rows r;
  for (int i = 0; i < n; i++) {
    std::vector<float> f = {u(rng), u(rng), u(rng), u(rng)};
    r.seconds.push_back(scale * std::exp(2 * f[0] - f[1] + (f[2] > 0.5F ? 0.8 : 0.0)));
    r.x.push_back(std::move(f));
  }
  return r;
}

std::vector<float> flat(const Rows& r) {
  std::vector<float> out;
  for (const auto& f : r.x) out.insert(out.end(), f.begin(), f.end());
  return out;
}

// Spearman's rank correlation of A and B (no ties in continuous data).
double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  auto ranks = [](const std::vector<double>& v) {
    std::vector<size_t> idx(v.size());
    std::iota(idx.begin(), idx.end(), size_t{0});
    std::ranges::sort(idx, {}, [&](size_t i) { return v[i]; });
    std::vector<double> r(v.size());
    for (size_t i = 0; i < idx.size(); i++) r[idx[i]] = static_cast<double>(i);
    return r;
  };
  const std::vector<double> ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(a.size());
  double d2 = 0;
  for (size_t i = 0; i < ra.size(); i++) d2 += (ra[i] - rb[i]) * (ra[i] - rb[i]);
  return 1 - 6 * d2 / (n * (n * n - 1));
}

TEST(TrainingSet, TargetsAreLogTimesCenteredPerKernelAndFailuresAreDropped) {
  TrainingSet data;
  data.add_kernel("a", {{1}, {2}, {3}}, {1e-6, 4e-6, INFINITY});
  data.add_kernel("b", {{1}, {2}}, {1.0, 1.0});
  ASSERT_EQ(data.rows(), 4u);
  EXPECT_EQ(data.kernels(), 2u);
  EXPECT_NEAR(data.target()[0], -std::log(2.0), 1e-6);  // log(1e-6) - mean(log 1e-6, log 4e-6)
  EXPECT_NEAR(data.target()[1], std::log(2.0), 1e-6);
  EXPECT_FLOAT_EQ(data.target()[2], 0);
  const TrainingSet without_a = data.without("a");
  EXPECT_EQ(without_a.rows(), 2u);
  EXPECT_EQ(without_a.kernels(), 1u);
  EXPECT_EQ(without_a.features(), (std::vector<float>{1, 2}));
  EXPECT_THROW(data.add_kernel("c", {{1, 2}}, {1.0}), std::invalid_argument);  // another width
}

TEST(TrainingSet, EachKernelsWinnerGoesWhereItsRowsGo) {
  TrainingSet data;
  data.add_kernel("a", {{1}}, {1.0}, 1, "UPCAST:0:4");
  data.add_kernel("b", {{1}}, {1.0});  // no winner known
  data.add_kernel("c", {{1}}, {1.0}, 1, "THREAD:0:2");
  EXPECT_EQ(data.winners(), (std::vector<std::string>{"UPCAST:0:4", "THREAD:0:2"}));
  EXPECT_EQ(data.without("a").winners(), (std::vector<std::string>{"THREAD:0:2"}));
  TrainingSet more = data.without("c");
  more.append(data.without("a"));
  EXPECT_EQ(more.winners(), (std::vector<std::string>{"UPCAST:0:4", "THREAD:0:2"}));
}

class CostModels : public testing::TestWithParam<std::string> {};

TEST_P(CostModels, RankAKernelTheyWereNotTrainedOn) {
  TrainingSet data;
  for (uint64_t k = 0; k < 4; k++) {
    const Rows r = synthetic(k, 200, std::pow(10.0, -static_cast<double>(k)));  // 1 s down to 1 ms
    data.add_kernel("kernel " + std::to_string(k), r.x, r.seconds);
  }
  auto model = make_cost_model(GetParam(), 7);
  model->fit(data);
  const Rows unseen = synthetic(99, 300, 3e-5);
  const std::vector<float> score = model->predict(flat(unseen));
  ASSERT_EQ(score.size(), unseen.seconds.size());
  const double rho = spearman(std::vector<double>(score.begin(), score.end()), unseen.seconds);
  // The law is smooth but for one step; trees approximate both, a linear model only the smooth part.
  EXPECT_GT(rho, GetParam() == "xgboost" ? 0.95 : 0.85) << GetParam();
}

TEST_P(CostModels, TheSameDataGiveTheSamePredictions) {
  TrainingSet data;
  const Rows r = synthetic(1, 100, 1e-3);
  data.add_kernel("k", r.x, r.seconds);
  auto a = make_cost_model(GetParam(), 3), b = make_cost_model(GetParam(), 3);
  a->fit(data);
  b->fit(data);
  EXPECT_EQ(a->predict(flat(r)), b->predict(flat(r)));
}

INSTANTIATE_TEST_SUITE_P(Both, CostModels, testing::Values("xgboost", "ridge"));

TEST(CostModel, MisuseIsRefusedWithAMessage) {
  EXPECT_THROW(make_cost_model("forest", 0), std::invalid_argument);
  EXPECT_THROW(make_ridge(0), std::invalid_argument);
  EXPECT_THROW(make_xgboost()->fit(TrainingSet{}), std::invalid_argument);
  EXPECT_THROW(make_xgboost()->predict({1, 2, 3}), std::logic_error);
}

}  // namespace
}  // namespace tunebed::search
