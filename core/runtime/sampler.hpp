// How a kernel's launches become timed samples, for every timing loop (Program::time here,
// search's measure_samples): short kernels are launched back to back, and a fresh program is
// warmed up for a span of time, not only a count of launches.
#pragma once

#include <functional>
#include <utility>

namespace tunebed {

// A timed sample spans at least this long (seconds): a kernel shorter than that is launched back
// to back, enough times to span it, and the sample is the seconds per launch. The host clock
// moves in steps of 10-20 ns on this project's VM (kvm-clock) and a pair of readings costs about
// 26 ns, so one launch of a 30 ns kernel measured mostly the clock; over 10 us its steps are 0.2%.
inline constexpr double kMinSampleSpan = 10e-6;
inline constexpr int kMaxLaunchesPerSample = 4096;
// The launches per sample for a kernel of SECONDS per launch: 1 from kMinSampleSpan up.
int launches_per_sample(double seconds);

// A warm-up lasts at least this long (seconds), however many launches that takes. A fresh
// program's launches get faster over the first 100-300 us of them, not over a count: a dataset
// kernel of 13 us warm (8a9f0437f924, 1 MB written) took 40-60 us for its first launch and
// 1.3-3.6 times its warm time for its third, settling after 6-20 launches. Two launches of
// warm-up left its stored time, a single sample after an early stop, at up to 3 times the warm
// one. A millisecond is 3 times the longest settling seen and under 1% of what a search spends on
// a candidate (0.13 s, compile included).
inline constexpr double kWarmupSpan = 1e-3;
// A warm-up makes at most this many calls: a kernel too short for 4096 launches to span
// kMinSampleSpan (under 2.5 ns) needs at most 400, and a clock that reads 0 gets no further.
inline constexpr int kMaxWarmupCalls = 1000;

// A kernel's launches as the timing loops take them. Each call makes as many launches back to
// back as the last call's seconds per launch ask for (launches_per_sample) and returns the
// seconds per launch; the first call is one launch (a verification run must be one).
class LaunchSampler {
 public:
  // RUN(n): n launches back to back, their seconds per launch.
  explicit LaunchSampler(std::function<double(int launches)> run) : run_(std::move(run)) {}
  double operator()();
  // Untimed calls: at least CALLS, and on until their launches span SPAN seconds (at most
  // kMaxWarmupCalls). The last one calibrates the next sample.
  void warm_up(int calls, double span);

 private:
  double call(int launches);  // seconds per launch, calibrating the next call

  std::function<double(int)> run_;
  int launches_ = 1;
};

}  // namespace tunebed
