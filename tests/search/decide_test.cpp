// Statistical winners (search/decide.hpp): the Mann-Whitney test against an exact permutation
// count, the bootstrap interval, and the decision: few rounds when candidates are far apart, more
// when close, and an incumbent kept unless beaten beyond the noise.
#include "search/decide.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "search/job.hpp"
#include "search/strategy.hpp"

namespace tunebed::search {
namespace {

// The exact one-sided p-value of the rank-sum statistic: the share of all ways to split the
// pooled samples into groups of |a| and |b| whose U for the first group is at least a's.
double exact_p_faster(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> pooled = a;
  pooled.insert(pooled.end(), b.begin(), b.end());
  auto u_of = [&](const std::vector<bool>& in_a) {
    double u = 0;
    for (size_t i = 0; i < pooled.size(); i++)
      for (size_t j = 0; j < pooled.size(); j++)
        if (in_a[i] && !in_a[j]) u += pooled[i] < pooled[j] ? 1 : pooled[i] == pooled[j] ? 0.5 : 0;
    return u;
  };
  std::vector<bool> split(pooled.size(), false);
  std::fill(split.begin(), split.begin() + static_cast<ptrdiff_t>(a.size()), true);
  const double observed = u_of(split);  // a first: also the first split in descending order
  int64_t at_least = 0, all = 0;
  do {
    all++;
    at_least += u_of(split) >= observed;
  } while (std::prev_permutation(split.begin(), split.end()));
  return static_cast<double>(at_least) / static_cast<double>(all);
}

// Timings of a noisy machine: true time x (1 + 5% uniform jitter), and one launch in ten 50% slow.
struct NoisyClock {
  std::mt19937_64 rng;
  explicit NoisyClock(uint64_t seed) : rng(seed) {}
  double time(double truth) {
    const double jitter = 1 + (uniform(rng) - 0.5) * 0.1;
    return truth * jitter * (uniform(rng) < 0.1 ? 1.5 : 1.0);
  }
};

TEST(PFaster, AgreesWithTheExactPermutationTestOnEightSamplesEach) {
  std::mt19937_64 rng(7);
  for (double shift : {0.0, 0.02, 0.05, 0.1}) {
    std::vector<double> a, b;
    for (int i = 0; i < 8; i++) {
      a.push_back(1 + 0.1 * uniform(rng));
      b.push_back(1 + shift + 0.1 * uniform(rng));
    }
    SCOPED_TRACE("shift " + std::to_string(shift));
    // The normal approximation of the rank-sum distribution is good to about 0.01 from 8 each.
    EXPECT_NEAR(p_faster(a, b), exact_p_faster(a, b), 0.01);
  }
  EXPECT_LT(p_faster({1, 2, 3, 4, 5, 6, 7, 8}, {9, 10, 11, 12, 13, 14, 15, 16}), 0.001);
  EXPECT_GT(p_faster({9, 10, 11, 12, 13, 14, 15, 16}, {1, 2, 3, 4, 5, 6, 7, 8}), 0.999);
  EXPECT_EQ(p_faster({2, 2, 2}, {2, 2, 2}), 1);  // nothing tells them apart
  EXPECT_EQ(p_faster({}, {1}), 1);
}

TEST(BootstrapSpeedup, IsTheRatioOfMediansWithAnIntervalAroundIt) {
  const std::vector<double> fast = {1.0, 1.1, 0.9, 1.05, 0.95, 1.0, 1.02};
  const std::vector<double> slow = {2.0, 2.2, 1.8, 2.1, 1.9, 2.0, 2.04};
  const Speedup s = bootstrap_speedup(fast, slow);
  EXPECT_DOUBLE_EQ(s.ratio, 2.0);
  EXPECT_LE(s.low, s.ratio);
  EXPECT_GE(s.high, s.ratio);
  EXPECT_GT(s.low, 1.5);  // the spread is 10%: the interval stays well away from 1
  const Speedup again = bootstrap_speedup(fast, slow);
  EXPECT_EQ(again.low, s.low);  // seeded: the same samples, the same interval
  EXPECT_EQ(again.high, s.high);
}

TEST(Decide, CandidatesFarApartCostOnlyTheFirstRounds) {
  NoisyClock clock(1);
  const double truth[3] = {1.0, 2.0, 3.0};
  const Decision d = decide(3, std::nullopt, {}, [&](int i) { return clock.time(truth[i]); });
  EXPECT_EQ(d.winner, 0);
  EXPECT_EQ(d.challenger, 1);
  EXPECT_EQ(d.rounds, DecisionPolicy{}.min_rounds);
  for (const auto& s : d.samples) EXPECT_EQ(s.size(), static_cast<size_t>(DecisionPolicy{}.min_rounds));
  EXPECT_LT(d.p_value, 1e-3);
  EXPECT_GT(d.speedup.low, 1);  // the interval excludes "equal"
}

TEST(Decide, CloseCandidatesGetMoreRoundsUntilToldApart) {
  int more = 0;
  for (uint64_t seed = 1; seed <= 10; seed++) {
    NoisyClock clock(seed);
    const double truth[3] = {1.0, 1.01, 3.0};  // 1% apart, under 5% jitter; the third far off
    const Decision d = decide(3, std::nullopt, {}, [&](int i) { return clock.time(truth[i]); });
    more += d.rounds > DecisionPolicy{}.min_rounds;
    // Timing stops early only once the two are told apart.
    EXPECT_TRUE(d.rounds == DecisionPolicy{}.max_rounds || d.significant()) << seed;
    // The far one was told apart at once and not timed again.
    EXPECT_EQ(d.samples[2].size(), static_cast<size_t>(DecisionPolicy{}.min_rounds)) << seed;
    EXPECT_LE(d.rounds, DecisionPolicy{}.max_rounds);
  }
  EXPECT_GE(more, 9);  // 1% under 5% jitter is rarely told apart in 10 rounds
}

TEST(Decide, AnIncumbentIsKeptAgainstAnEqualAndReplacedByAFasterCandidate) {
  const DecisionPolicy policy;
  int kept = 0, replaced = 0;
  for (uint64_t seed = 1; seed <= 40; seed++) {
    NoisyClock clock(seed);
    const double equal[2] = {1.0, 1.0};
    const Decision d = decide(2, 1, policy, [&](int i) { return clock.time(equal[i]); });
    kept += d.winner == 1;
    if (d.kept_incumbent) {
      EXPECT_EQ(d.challenger, 0);
      EXPECT_FALSE(d.significant());
    }
    NoisyClock clock2(seed);
    const double faster[2] = {0.8, 1.0};
    const Decision e = decide(2, 1, policy, [&](int i) { return clock2.time(faster[i]); });
    replaced += e.winner == 0 && !e.kept_incumbent && e.significant();
  }
  // Noise alone replaces an equal incumbent at most alpha = 1 in 20 of the time: 2 of 40.
  EXPECT_GE(kept, 38);
  EXPECT_EQ(replaced, 40);
}

TEST(Decide, NoRoundsAreAddedPastMaxSeconds) {
  NoisyClock clock(3);
  double elapsed = 0;
  const double truth[2] = {1.0, 1.0};
  const Decision d = decide(
      2, std::nullopt, {.max_seconds = 0.5},
      [&](int i) {
        elapsed += 0.1;
        return clock.time(truth[i]);
      },
      [&] { return elapsed; });
  EXPECT_EQ(d.rounds, DecisionPolicy{}.min_rounds);  // 2 s of timing passed in the first rounds
}

TEST(Decide, RefusesWhatIsNotADecision) {
  auto t = [](int) { return 1.0; };
  EXPECT_THROW(decide(0, std::nullopt, {}, t), std::invalid_argument);
  EXPECT_THROW(decide(2, 2, {}, t), std::invalid_argument);
  EXPECT_THROW(decide(2, std::nullopt, {.min_rounds = 5, .max_rounds = 4}, t), std::invalid_argument);
  const Decision alone = decide(1, 0, {}, t);
  EXPECT_EQ(alone.winner, 0);
  EXPECT_EQ(alone.challenger, -1);
}

TEST(Wire, ARetimeJobAndItsDecisionSurviveTheRoundTrip) {
  RetimeJob job;
  job.kernels = {{"src", "k", {{2, 1, 1}, {1, 1, 1}}}};
  job.policy = {.min_rounds = 3, .max_rounds = 9, .step = 2, .alpha = 0.01, .max_seconds = 1.5};
  job.incumbent = 0;
  WireReader r(encode(job));
  ASSERT_EQ(r.kind<MessageKind>(), MessageKind::retime);
  const RetimeJob back = decode_retime_job(r);
  EXPECT_EQ(back.policy.min_rounds, 3);
  EXPECT_EQ(back.policy.max_rounds, 9);
  EXPECT_EQ(back.policy.step, 2);
  EXPECT_EQ(back.policy.alpha, 0.01);
  EXPECT_EQ(back.policy.max_seconds, 1.5);
  EXPECT_EQ(back.incumbent, 0);
  job.incumbent.reset();
  WireReader none(encode(job));
  none.kind<MessageKind>();
  EXPECT_FALSE(decode_retime_job(none).incumbent.has_value());

  RetimeResult res;
  res.decision = {.samples = {{1, 2}, {3}},
                  .medians = {1.5, 3},
                  .winner = 1,
                  .leader = 0,
                  .challenger = 0,
                  .kept_incumbent = true,
                  .p_value = 0.2,
                  .level = 0.007,
                  .speedup = {2, 0.9, 3.1},
                  .rounds = 2};
  WireReader rr(encode(res));
  ASSERT_EQ(rr.kind<MessageKind>(), MessageKind::retimed);
  const Decision d = decode_retime_result(rr).decision;
  EXPECT_EQ(d.samples, res.decision.samples);
  EXPECT_EQ(d.medians, res.decision.medians);
  EXPECT_EQ(d.winner, 1);
  EXPECT_EQ(d.leader, 0);
  EXPECT_EQ(d.challenger, 0);
  EXPECT_TRUE(d.kept_incumbent);
  EXPECT_EQ(d.p_value, 0.2);
  EXPECT_EQ(d.level, 0.007);
  EXPECT_EQ(d.speedup.low, 0.9);
  EXPECT_EQ(d.speedup.high, 3.1);
  EXPECT_EQ(d.rounds, 2);
}

}  // namespace
}  // namespace tunebed::search
