// How launches become samples (core/runtime/sampler.hpp): launches per sample, the calibration of
// each call by the last, and a warm-up that spans a time, not only a count.
#include "core/runtime/sampler.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace tunebed {
namespace {

TEST(LaunchesPerSample, EnoughToSpanTheMinimumSampleAndNoMore) {
  EXPECT_EQ(launches_per_sample(kMinSampleSpan), 1);
  EXPECT_EQ(launches_per_sample(1e-3), 1);
  EXPECT_EQ(launches_per_sample(30e-9), 334);  // ceil(10 us / 30 ns)
  EXPECT_GE(launches_per_sample(30e-9) * 30e-9, kMinSampleSpan);
  EXPECT_EQ(launches_per_sample(kMinSampleSpan / 2), 2);
  EXPECT_EQ(launches_per_sample(0), kMaxLaunchesPerSample);  // a launch under the clock's step
  EXPECT_EQ(launches_per_sample(1e-12), kMaxLaunchesPerSample);
  EXPECT_EQ(launches_per_sample(NAN), 1);
}

// The launches asked of a kernel of SECONDS per launch by a fresh sampler's warm-up of CALLS.
std::vector<int> warm_up_calls(double seconds, int calls) {
  std::vector<int> asked;
  LaunchSampler sample([&](int n) { return asked.push_back(n), seconds; });
  sample.warm_up(calls, kWarmupSpan);
  return asked;
}

// Regression: a 13 us dataset kernel's third launch (the first sample, after the verification and
// one warm-up) took up to 3.6 times its warm time, and as a loser's one sample it was stored.
TEST(LaunchSampler, AWarmUpSpansAMillisecondOfLaunchesAndAtLeastItsCalls) {
  // 13 us launches, one per call: 76 make 0.988 ms, 77 make 1.001 ms.
  EXPECT_EQ(warm_up_calls(13e-6, 1), std::vector<int>(77, 1));
  EXPECT_EQ(warm_up_calls(13e-6, 100).size(), 100u);  // the count, where it spans more
  // A launch of a millisecond or more is a warm-up of its own, as it was.
  EXPECT_EQ(warm_up_calls(kWarmupSpan, 1), std::vector<int>{1});
  EXPECT_EQ(warm_up_calls(0.2, 2), (std::vector<int>{1, 1}));
  // Short launches go back to back: one launch first, then calls of 334 (10.02 us) to 1 ms.
  std::vector<int> batched{1};
  batched.insert(batched.end(), 100, 334);
  EXPECT_EQ(warm_up_calls(30e-9, 1), batched);
  // A clock that reads 0 cannot hold it forever: kMaxWarmupCalls calls, of kMaxLaunchesPerSample
  // launches after the first.
  const std::vector<int> stuck = warm_up_calls(0, 1);
  ASSERT_EQ(stuck.size(), static_cast<size_t>(kMaxWarmupCalls));
  EXPECT_EQ(stuck.back(), kMaxLaunchesPerSample);
}

// Each call launches as often as the last one's seconds per launch ask for, the warm-up's last
// call included: a sample after a warm-up is already batched.
TEST(LaunchSampler, EachCallIsCalibratedByTheLast) {
  std::vector<int> asked;
  double per_launch = 30e-9;
  LaunchSampler sample([&](int n) { return asked.push_back(n), per_launch; });
  EXPECT_EQ(sample(), 30e-9);
  EXPECT_EQ(sample(), 30e-9);
  per_launch = 2e-3;  // a long launch goes back to one at a time
  sample();
  sample();
  EXPECT_EQ(asked, (std::vector<int>{1, 334, 334, 1}));
  per_launch = 1e-6;
  sample.warm_up(1, 0);
  EXPECT_EQ(asked.back(), 1);
  sample();
  EXPECT_EQ(asked.back(), launches_per_sample(1e-6));
}

}  // namespace
}  // namespace tunebed
