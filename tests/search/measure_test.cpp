// Measurement policy without processes: interleaved re-timing under drift and noise,
// verification rules, seeded inputs, and the wire format's round trip.
#include "search/measure.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "search/decide.hpp"
#include "search/job.hpp"
#include "search/strategy.hpp"

namespace tunebed::search {
namespace {

// A machine that slows down steadily (0.1% per launch, as a CPU heating towards its thermal
// limit), with +-0.5% jitter and an occasional 50% spike (a preemption).
struct DriftingClock {
  std::mt19937_64 rng;
  int launches = 0;
  explicit DriftingClock(uint64_t seed) : rng(seed) {}
  double time(double true_time) {
    double drift = 1 + 0.001 * launches++;
    double jitter = 1 + (uniform(rng) - 0.5) * 0.01;
    double spike = uniform(rng) < 0.1 ? 1.5 : 1.0;
    return true_time * drift * jitter * spike;
  }
};

TEST(Retime, InterleavingPicksTheTrulyFasterOfTwoNearTies) {
  const double truth[2] = {1.00, 0.99};  // candidate 1 is 1% faster
  int wins = 0, sequential_wins = 0;
  for (uint64_t seed = 1; seed <= 20; seed++) {
    DriftingClock clock(seed);
    const Decision r =
        decide(2, std::nullopt, {.min_rounds = 15, .max_rounds = 15}, [&](int i) { return clock.time(truth[i]); });
    ASSERT_EQ(r.samples[0].size(), 15u);
    wins += r.winner == 1;

    // The same clock, each candidate timed in one block: the drift lands on the second one.
    DriftingClock seq(seed);
    std::vector<double> a, b;
    for (int k = 0; k < 16; k++) a.push_back(seq.time(truth[0]));
    for (int k = 0; k < 16; k++) b.push_back(seq.time(truth[1]));
    sequential_wins += median(b) < median(a);
  }
  EXPECT_EQ(wins, 20);
  EXPECT_EQ(sequential_wins, 0);  // why the final top-k are re-timed interleaved
}

// A kernel that takes SECONDS per launch, counting its launches.
struct FakeKernel {
  double seconds;
  int launches = 0;
  SampleLauncher launcher() {
    return SampleLauncher([this](int n) { return launches += n, seconds; }, "k");
  }
};

TEST(Measure, SamplesStopEarlyOnceClearlySlower) {
  FakeKernel kernel{5.0};
  SampleLauncher launch = kernel.launcher();
  EXPECT_EQ(measure_samples(launch, {.warmup = 2, .runs = 10, .early_stop_s = 4.5}).size(), 1u);
  EXPECT_EQ(kernel.launches, 3);  // two warm-ups, then one launch was enough to know
  EXPECT_EQ(measure_samples(launch, {.warmup = 0, .runs = 10, .early_stop_s = 6, .max_seconds = 1e9}).size(), 10u);
  EXPECT_EQ(median({5, 1, 3, 2}), 2.5);
}

TEST(Measure, TheVerificationLaunchCountsAsAWarmUp) {
  // Milliseconds: shorter than kSelfWarmingLaunch, so a cold start could still move them.
  FakeKernel kernel{1e-3};
  SampleLauncher launch = kernel.launcher();
  const TimingParams p{.warmup = 2, .runs = 3, .early_stop_s = 4e-3, .max_seconds = 1e9};
  EXPECT_EQ(measure_samples(launch, p, 1e-3).size(), 3u);
  EXPECT_EQ(kernel.launches, 1 + 3);  // one more warm-up (it spans kWarmupSpan), then the runs
  kernel.launches = 0;
  // Under twice the bar it may still be a cold launch of a kernel that is fast enough warm.
  EXPECT_EQ(measure_samples(launch, {.warmup = 2, .runs = 3, .early_stop_s = 1.5e-3, .max_seconds = 1e9}, 2.9e-3).size(),
            3u);
  EXPECT_EQ(kernel.launches, 1 + 3);
}

TEST(Measure, ALongFirstLaunchPastTwiceTheBarIsTheOneSample) {
  FakeKernel kernel{0.04};
  SampleLauncher launch = kernel.launcher();
  // Warm it would still be over the bar: it is the one sample, and the kernel is not launched again.
  EXPECT_EQ(measure_samples(launch, {.warmup = 2, .runs = 3, .early_stop_s = 0.02, .max_seconds = 1e9}, 0.05),
            std::vector<double>{0.05});
  EXPECT_EQ(kernel.launches, 0);
}

// The launches a warm-up of CALLS calls makes of a kernel of SECONDS per launch, from a fresh
// launcher (its first call one launch).
int warm_up_launches(double seconds, int calls) {
  FakeKernel kernel{seconds};
  kernel.launcher().warm_up(calls);
  return kernel.launches;
}

// Regression: a 0.11 us kernel's verification launch took 24.9 us, cold (code and pages faulted
// in), and was stored as its time, 226 times the truth; a candidate 0.49 us warm, 6% from its
// kernel's best, was stored at 33 us.
TEST(Measure, AShortColdFirstLaunchIsNeverTheTime) {
  const TimingParams p{.warmup = 2, .runs = 3, .early_stop_s = 0.3e-6, .max_seconds = 1e9};
  FakeKernel warm{0.1e-6};
  SampleLauncher launch = warm.launcher();
  EXPECT_EQ(measure_samples(launch, p, 25e-6), (std::vector<double>{0.1e-6, 0.1e-6, 0.1e-6}));
  // Warmed up and timed like any other: a warm-up, then 3 samples spanning kMinSampleSpan each.
  EXPECT_EQ(warm.launches, warm_up_launches(0.1e-6, 1) + 3 * launches_per_sample(0.1e-6));
  // A loser this short is still spared the runs: the early stop follows its first two warm
  // samples. Just under the floor the same; at the floor the cold launch is the one sample again.
  for (const double cold : {25e-6, std::nextafter(kColdSampleFloor, 0.0)}) {
    FakeKernel slow{5e-6};
    SampleLauncher slow_launch = slow.launcher();
    EXPECT_EQ(measure_samples(slow_launch, p, cold), (std::vector<double>{5e-6, 5e-6}));
    EXPECT_EQ(slow.launches, warm_up_launches(5e-6, 1) + 2 * launches_per_sample(5e-6));
  }
  FakeKernel slow{5e-6};
  SampleLauncher slow_launch = slow.launcher();
  EXPECT_EQ(measure_samples(slow_launch, p, kColdSampleFloor), std::vector<double>{kColdSampleFloor});
  EXPECT_EQ(slow.launches, 0);
}

// A warm-up spans kWarmupSpan (core/runtime/sampler.hpp): a 13 us kernel after its verification
// launch is launched 77 times before its first sample, not once.
TEST(Measure, AShortKernelIsWarmedUpForAMillisecond) {
  FakeKernel kernel{13e-6};
  SampleLauncher launch = kernel.launcher();
  EXPECT_EQ(measure_samples(launch, {.warmup = 2, .runs = 3, .max_seconds = 1e9}, 60e-6).size(), 3u);
  EXPECT_EQ(kernel.launches, 77 + 3);
}

// A short sample over the bar may be a descheduled core: the timing stops only on a second, and a
// near-best candidate whose first sample was one gets all its runs. From kLoneStopSample up, one
// sample over the bar is enough, as before.
TEST(Measure, AShortKernelIsStoppedEarlyOnlyAfterTwoSamplesOverTheBar) {
  std::vector<double> times;  // what the kernel takes, launch after launch; then 1 ms
  size_t next = 0;
  SampleLauncher launch([&](int) { return next < times.size() ? times[next++] : 1e-3; }, "k");
  const TimingParams p{.warmup = 0, .runs = 5, .early_stop_s = 3e-3, .max_seconds = 1e9};
  times = {8e-3, 1e-3};  // a spike, then its real time
  EXPECT_EQ(measure_samples(launch, p), (std::vector<double>{8e-3, 1e-3, 1e-3, 1e-3, 1e-3}));
  times = {8e-3, 9e-3}, next = 0;  // a loser
  EXPECT_EQ(measure_samples(launch, p), (std::vector<double>{8e-3, 9e-3}));
  times = {kLoneStopSample, 1e-3}, next = 0;  // long enough to say it alone
  EXPECT_EQ(measure_samples(launch, p), std::vector<double>{kLoneStopSample});
}

// Each call launches as often as the last one's seconds per launch ask for: the first once (the
// verification run must be one launch), then enough back to back to span kMinSampleSpan.
TEST(Measure, ASampleLauncherBatchesShortLaunches) {
  std::vector<int> asked;
  double per_launch = 30e-9;
  SampleLauncher launch([&](int n) { return asked.push_back(n), per_launch; }, "k");
  EXPECT_EQ(launch(), 30e-9);
  EXPECT_EQ(launch(), 30e-9);
  EXPECT_EQ(launch(), 30e-9);
  per_launch = 2e-3;  // a long launch goes back to one at a time
  launch();
  launch();
  EXPECT_EQ(asked, (std::vector<int>{1, 334, 334, 334, 1}));
  // Through measure_samples: the verification launch's seconds say how to warm up.
  asked.clear();
  per_launch = 30e-9;
  SampleLauncher fresh([&](int n) { return asked.push_back(n), per_launch; }, "k");
  const double verified = fresh();
  const std::vector<double> samples = measure_samples(fresh, {.warmup = 2, .runs = 3}, verified);
  EXPECT_EQ(samples, (std::vector<double>{30e-9, 30e-9, 30e-9}));
  // The verification, 100 warm-up calls (1 ms), 3 samples.
  std::vector<int> expected{1};
  expected.insert(expected.end(), 100 + 3, 334);
  EXPECT_EQ(asked, expected);
  // A launch price replaces the seconds, not the batching.
  set_launch_price([](const std::string&) { return 1.0; });
  EXPECT_EQ(fresh(), 1.0);
  fresh();
  set_launch_price({});
  EXPECT_EQ(asked.back(), 334);
}

TEST(Measure, ALongVerificationLaunchIsTheFirstSample) {
  FakeKernel kernel{0.2};
  SampleLauncher launch = kernel.launcher();
  const TimingParams p{.warmup = 2, .runs = 3, .max_seconds = 1e9};
  EXPECT_EQ(measure_samples(launch, p, kSelfWarmingLaunch), (std::vector<double>{kSelfWarmingLaunch, 0.2, 0.2}));
  EXPECT_EQ(kernel.launches, 2);  // no warm-up: a cold start adds milliseconds, under 2% of such a launch
  kernel.launches = 0;
  // Past the early-stop bar it is the only sample: the kernel is not launched again.
  EXPECT_EQ(measure_samples(launch, {.warmup = 2, .runs = 3, .early_stop_s = 0.1}, 0.3), std::vector<double>{0.3});
  EXPECT_EQ(kernel.launches, 0);
  // Just under the line it is a warm-up, as before.
  EXPECT_EQ(measure_samples(launch, p, 0.099).size(), 3u);
  EXPECT_EQ(kernel.launches, 1 + 3);
}

TEST(Measure, ASlowKernelGetsFewerSamples) {
  FakeKernel kernel{0.2};
  SampleLauncher launch = kernel.launcher();
  EXPECT_EQ(measure_samples(launch, {.warmup = 0, .runs = 7, .max_seconds = 0.5}).size(), 3u);
  EXPECT_EQ(measure_samples(launch, {.warmup = 0, .runs = 7, .max_seconds = 10}).size(), 7u);
  // One sample always, however slow.
  EXPECT_EQ(measure_samples(launch, {.warmup = 0, .runs = 7, .max_seconds = 0.01}).size(), 1u);
}

// A launch is stopped at kStopFactor times the bar, twice where it would have been the one
// sample, and never sooner than kStopFloor; without a bar, never.
TEST(Measure, TheStopLineIsTwiceTheOneSampleLineAndNeverUnderTheFloor) {
  EXPECT_EQ(stop_line(std::nullopt), std::nullopt);
  EXPECT_DOUBLE_EQ(*stop_line(0.1), 2 * kColdFactor * 0.1);
  EXPECT_DOUBLE_EQ(*stop_line(1e-3), kStopFloor);
  EXPECT_DOUBLE_EQ(*stop_line(0), kStopFloor);
  // A candidate between the one-sample line and the stop line is measured, once.
  const TimingParams p{.warmup = 2, .runs = 7, .early_stop_s = 0.1};
  FakeKernel kernel{0.3};
  SampleLauncher launch = kernel.launcher();
  EXPECT_EQ(measure_samples(launch, p, 0.3).size(), 1u);
  EXPECT_LT(0.3, *stop_line(p.early_stop_s));
}

TEST(Verify, SeededInputsAreReproducibleAndInRange) {
  HostBuffer a(dtypes::float32, 64), b(dtypes::float32, 64), c(dtypes::float32, 64);
  fill_random(a, 3);
  fill_random(b, 3);
  fill_random(c, 4);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  for (int64_t i = 0; i < a.numel(); i++) {
    EXPECT_GE(a.get_float(i), -1);
    EXPECT_LT(a.get_float(i), 1);
  }
}

RC_GTEST_PROP(Wire, a_job_and_its_result_survive_the_round_trip,
              (std::string source, std::vector<int32_t> vars)) {
  JobData data;
  data.vars = vars;
  data.buffers = {HostBuffer(dtypes::float16, *rc::gen::inRange(0, 5)), HostBuffer(dtypes::int64, 2)};
  data.output = 1;
  data.expected = Expected{dtypes::float16, HostBuffer(dtypes::float64, 2), {0.5, INFINITY}};
  Job job;
  job.kernel = {source, "k", {{*rc::gen::inRange(1, 9), 1, 1}, {1, 2, 3}}};
  job.data = share(std::move(data));
  job.timing.early_stop_s = 0.25;
  job.timing.max_seconds = 0.125;
  job.timing.stop_s = stop_line(job.timing.early_stop_s);
  WireReader d(encode(*job.data));
  RC_ASSERT(d.kind<MessageKind>() == MessageKind::data);
  const auto held = std::make_shared<const JobData>(decode_data(d));
  RC_ASSERT(held->id == job.data->id);
  RC_ASSERT(held->vars == vars);
  RC_ASSERT(held->buffers == job.data->buffers);
  RC_ASSERT(held->output == 1);
  RC_ASSERT(held->expected->dtype == job.data->expected->dtype);
  RC_ASSERT(held->expected->value == job.data->expected->value);
  RC_ASSERT(held->expected->bound == job.data->expected->bound);
  WireReader r(encode(job));
  RC_ASSERT(r.kind<MessageKind>() == MessageKind::job);
  WireReader stale(encode(job));
  stale.kind<MessageKind>();
  RC_ASSERT_THROWS_AS(decode_job(stale, nullptr), std::runtime_error);  // data it was never sent
  Job back = decode_job(r, held);
  RC_ASSERT(back.data == held);
  RC_ASSERT(back.kernel.source == source);
  RC_ASSERT(back.kernel.dims.global == job.kernel.dims.global);
  RC_ASSERT(back.kernel.dims.local == job.kernel.dims.local);
  RC_ASSERT(back.timing.early_stop_s == job.timing.early_stop_s);
  RC_ASSERT(back.timing.max_seconds == job.timing.max_seconds);
  RC_ASSERT(back.timing.stop_s == job.timing.stop_s);

  JobResult res;
  res.status = *rc::gen::element(CandidateStatus::wrong, CandidateStatus::stopped);
  res.message = source;
  res.samples = {1e-6, 2e-6};
  res.max_error = INFINITY;
  WireReader rr(encode(res));
  RC_ASSERT(rr.kind<MessageKind>() == MessageKind::result);
  JobResult res_back = decode_result(rr);
  RC_ASSERT(res_back.status == res.status);
  RC_ASSERT(res_back.message == source);
  RC_ASSERT(res_back.samples == res.samples);
  RC_ASSERT(res_back.max_error == res.max_error);
  RC_ASSERT(!res_back.median.has_value());
}

TEST(Wire, ATornMessageIsAnErrorNamingTheField) {
  std::vector<std::byte> bytes = encode(JobResult{});
  bytes.resize(bytes.size() - 3);
  WireReader r(bytes);
  r.kind<MessageKind>();
  try {
    decode_result(r);
    FAIL() << "a torn message decoded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cut short"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tunebed::search
