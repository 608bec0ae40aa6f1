#include "search/measure.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "core/runtime/device.hpp"

namespace tunebed::search {

std::vector<double> measure_samples(SampleLauncher& launch, const TimingParams& params,
                                    std::optional<double> first) {
  // Past kColdFactor times the bar even a warm launch would be over it: the cold one says enough,
  // unless it is so short that its cold start could be most of it.
  if (first && params.early_stop_s && *first >= kColdSampleFloor && *first > kColdFactor * *params.early_stop_s)
    return {*first};
  const bool self_warming = first && *first >= kSelfWarmingLaunch;
  const int warmup = self_warming ? 0 : first ? params.warmup - 1 : params.warmup;
  if (warmup > 0) launch.warm_up(warmup);
  std::vector<double> samples;
  double fastest = INFINITY, total = 0;
  for (int i = 0; i < params.runs; i++) {
    samples.push_back(self_warming && i == 0 ? *first : launch());
    fastest = std::min(fastest, samples.back());
    total += samples.back();
    if (params.early_stop_s && fastest > *params.early_stop_s && (samples.size() > 1 || fastest >= kLoneStopSample))
      break;
    if (total >= params.max_seconds) break;
  }
  return samples;
}

std::optional<double> stop_line(std::optional<double> bar) {
  if (!bar) return std::nullopt;
  return std::max(kStopFloor, kStopFactor * *bar);
}

double median(std::vector<double> samples) {
  if (samples.empty()) throw std::invalid_argument("median of no samples");
  std::ranges::sort(samples);
  size_t n = samples.size();
  return n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

double SampleLauncher::operator()() { return launch_seconds(source_, sampler_()); }

namespace {
LaunchPrice& launch_price() {
  static LaunchPrice price;
  return price;
}
}  // namespace

void set_launch_price(LaunchPrice price) { launch_price() = std::move(price); }

double launch_seconds(const std::string& source, double seconds) {
  return launch_price() ? launch_price()(source) : seconds;
}

}  // namespace tunebed::search
