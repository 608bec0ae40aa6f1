// Measurement policy: how a candidate's time is decided (its correctness: core/engine/check.hpp).
//
// Timing (measure_samples). A kernel's first launches pay for cold caches, page faults and lazy
// driver work, so `warmup` launches, and at least a millisecond of them (kWarmupSpan, where the
// figures are), are thrown away; the figure is the median of `runs` launches,
// which a single preempted launch cannot move. Like tinygrad's _time_program, timing stops early
// once the fastest sample so far is slower than `early_stop_s` (the search passes
// kEarlyStopFactor times its best; a short kernel needs two such samples, kLoneStopSample): a
// candidate that cannot win does not get to spend the whole budget proving it. The worker's
// verification run counts as one warm-up; a second is needed: the launch right after it measured
// up to twice the later ones (the check had streamed the expected
// values through the caches). So a verification launch slower than kColdFactor times the bar
// cannot come under it warm, and it is the candidate's one sample: the figure stored for such a
// loser is a cold launch's, high by at most its cold cost (below), and the kernel is not launched
// again (on a BEAM run of matmul 512, a tenth of the wall time went to re-launching 12-60 ms
// candidates that were 6-30 times slower than the best). That holds only where the cold cost is
// small beside the launch: a launch shorter than kColdSampleFloor is warmed up and timed however
// slow its verification was, and the early stop (after its first two warm samples) spares it
// the rest. A long launch needs no warm-up at all: what a cold start costs does not grow with the
// launch (on the candidates of a BEAM run on matmul 512, 3 MB of buffers, the first launch took
// at most 1.3 ms more than the later ones, at 6 ms and at 600 ms alike; bench_runtime's
// BM_CpuColdLaunch, 6 MB: 0.05-0.9 ms more at 6 ms, 0.3-4 ms at 43 ms, -3 to +3 ms at 340 ms,
// with the load average at 1-2), so a verification launch of at least kSelfWarmingLaunch is
// within the launch-to-launch spread of a warm one and is the first sample.
// A launch far past the bar is not even finished (stop_line): the pool kills the worker once its
// verification launch passes kStopFactor times the bar, and the candidate is `stopped`, its time
// known only to be more than that. A BEAM run on matmul 512 spent a quarter of its wall time on
// the one launch each of its root and of fourteen candidates 8-170 times slower than the best
// (10-215 ms, with the other core idle: timing is exclusive); the search ranks a stopped
// candidate as it ranks a failed one, last, and BEAM expands none of them. A kernel that never
// ends is stopped too where there is a bar (a timeout only without one): at the stop line it
// cannot be told from a slow one, and running it again costs no more than one stop line.
// A slow kernel gets fewer samples: they stop once they add up to `max_seconds` (a launch
// of 400 ms is not moved by a scheduler tick, and the winner is re-timed anyway, below).
//
// Re-timing (decide.hpp). Timings drift: clocks boost and throttle, another process wakes up.
// Timing the top-k one after another gives the drift to whoever ran during the quiet moment, so
// before a winner is declared the top-k are re-timed round-robin (A B C A B C ...): every
// candidate sees the same drift, and a test on those samples, not a comparison of two medians,
// decides which is faster.
//
// Pricing (set_launch_price). A launch's seconds are the device's (Program::run). A test of the
// search logic, whose verdict must not depend on the machine's load, installs a price per kernel
// source instead: the kernel still runs and is verified, only the figure it is ranked by is
// replaced. The price is process-wide; installed before the worker pool forks (or replaces a
// worker), every worker has it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/engine/check.hpp"
#include "core/runtime/sampler.hpp"

namespace tunebed::search {

// The early-stop bar is this many times the best time so far.
inline constexpr double kEarlyStopFactor = 3;
// A cold launch (the first after the verification run's check) measured up to this many times a
// warm one.
inline constexpr double kColdFactor = 2;
// A verification launch at least this long (seconds) is its own warm-up and the first sample.
inline constexpr double kSelfWarmingLaunch = 0.1;
// A verification launch shorter than this (seconds) is never the one sample. What its cold start
// costs (faulting in the program's code and the buffers' pages) is absolute, not a factor: of
// 25 losers of a BEAM run on 53 dataset kernels (README's replay table), drawn from those stored
// with one cold sample under 1 ms and run again, the stored time was a median of 10.7 and up to
// 831 times the warm one (a candidate of 0.09 us was stored at 75 us).
// Two more launches of a kernel this short cost little; the stop line has the same floor.
inline constexpr double kColdSampleFloor = 0.02;
// A sample over the early-stop bar stops the timing on its own only if it took at least this long
// (seconds); a shorter one needs a second over the bar. A short sample's outliers are often
// factors, not percents: on the BEAM data of README's replay table, 7.5% of the samples of
// THREAD candidates under 20 ms were over twice their median (a core descheduled on this
// 2-core VM), 2.2% of the others'. One such sample put a near-best candidate past the bar for
// good (8a9f0437f924's UPCAST:1:4,THREAD:0:2, 1.3 times the kernel's best, stored at 5.7 times
// it), and BEAM never expands such a state. Two in a row are rarer: 2.5% of THREAD pairs of
// consecutive samples (the slow spells last), 0.12% of the others' (19 times fewer than one).
// On a BEAM batch of 53 kernels the second samples took 1.7 s of 332.
inline constexpr double kLoneStopSample = 0.02;
// A verification launch past this many times the bar is stopped, twice the one-sample line
// (kColdFactor) ...
inline constexpr double kStopFactor = 2 * kColdFactor;
// ... and never before this many seconds: replacing the killed worker costs milliseconds (a fork,
// the new worker's first staging of the data), so stopping a launch of a few is no saving.
inline constexpr double kStopFloor = 0.02;

struct TimingParams {
  int warmup = 2;  // the verification run and one more
  int runs = 7;
  std::optional<double> early_stop_s;  // stop once min(samples) exceeds this
  double max_seconds = 0.25;           // stop once the samples add up to this (after one)
  // Past these the worker is killed and the candidate is a timeout. Compiling gets its own,
  // generous limit: its time depends on the machine's load, a run's on the candidate.
  double timeout_s = 10;
  double compile_timeout_s = 120;
  // The pool kills a worker whose verification launch passes this (the staging before it and the
  // check after it are not counted: a fresh worker's first staging faults its pages in), and the
  // candidate is `stopped`. A stop line past timeout_s is the timeout's.
  std::optional<double> stop_s;
};

// Where a run of a candidate whose early-stop bar is BAR is stopped: nullopt without a bar.
std::optional<double> stop_line(std::optional<double> bar);

double median(std::vector<double> samples);  // of a non-empty list; the mean of the middle two if even

// A kernel's launches as the search times them: a LaunchSampler (core/runtime/sampler.hpp: short
// kernels launched back to back, calibrated by each call for the next; the first call is one
// launch), its seconds per launch replaced by the launch price where one is installed (below).
class SampleLauncher {
 public:
  // RUN(n): n launches' device seconds per launch. SOURCE: the kernel's, for the price.
  SampleLauncher(std::function<double(int launches)> run, std::string source)
      : sampler_(std::move(run)), source_(std::move(source)) {}
  double operator()();
  // Untimed: at least CALLS calls, spanning kWarmupSpan of the device's seconds.
  void warm_up(int calls) { sampler_.warm_up(calls, kWarmupSpan); }

 private:
  LaunchSampler sampler_;
  std::string source_;
};

// Seconds per launch, after a warm-up of `warmup` untimed calls spanning kWarmupSpan, stopping
// early as above (each call makes launches_per_sample launches: SampleLauncher). FIRST: the
// seconds of a launch already made (the verification run), which counts as a warm-up, or as the
// first sample when it took kSelfWarmingLaunch or more, or as the only one when it took
// kColdSampleFloor or more and past kColdFactor times the bar. Never empty when runs >= 1.
std::vector<double> measure_samples(SampleLauncher& launch, const TimingParams& params,
                                    std::optional<double> first = std::nullopt);

using LaunchPrice = std::function<double(const std::string& source)>;
void set_launch_price(LaunchPrice price);  // an empty one restores the device's seconds
// What a launch of SOURCE that the device timed at SECONDS counts as: SECONDS, or the price.
double launch_seconds(const std::string& source, double seconds);

}  // namespace tunebed::search
