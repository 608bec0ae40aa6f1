#include "core/runtime/sampler.hpp"

#include <cmath>

namespace tunebed {

int launches_per_sample(double seconds) {
  if (!(seconds < kMinSampleSpan)) return 1;  // NaN too
  if (seconds * kMaxLaunchesPerSample <= kMinSampleSpan) return kMaxLaunchesPerSample;
  return static_cast<int>(std::ceil(kMinSampleSpan / seconds));
}

double LaunchSampler::call(int launches) {
  const double seconds = run_(launches);
  launches_ = launches_per_sample(seconds);
  return seconds;
}

double LaunchSampler::operator()() { return call(launches_); }

void LaunchSampler::warm_up(int calls, double span) {
  double spanned = 0;
  for (int i = 0; i < kMaxWarmupCalls && (i < calls || spanned < span); i++) {
    const int launches = launches_;
    spanned += launches * call(launches);
  }
}

}  // namespace tunebed
