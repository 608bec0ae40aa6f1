#include "search/ranking.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace tunebed::search {

namespace {

// The rank of each value from 1, ties given the mean of the ranks they span.
std::vector<double> ranks(const std::vector<double>& values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::ranges::stable_sort(order, {}, [&](size_t i) { return values[i]; });
  std::vector<double> rank(values.size());
  for (size_t begin = 0; begin < order.size();) {
    size_t end = begin;
    while (end < order.size() && values[order[end]] == values[order[begin]]) end++;
    const double mean = (static_cast<double>(begin + end - 1) / 2) + 1;
    for (size_t i = begin; i < end; i++) rank[order[i]] = mean;
    begin = end;
  }
  return rank;
}

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  const double n = static_cast<double>(a.size());
  const double ma = std::accumulate(a.begin(), a.end(), 0.0) / n, mb = std::accumulate(b.begin(), b.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < a.size(); i++) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return sab / std::sqrt(saa * sbb);  // 0/0 where either is constant: NaN
}

}  // namespace

Ranking rank_stored(const CostModel& model, SearchSpace& space, const StoredCosts& costs) {
  std::vector<float> x;
  std::vector<double> seconds;
  for (const auto& [opts, cost] : costs) {
    if (!std::isfinite(cost)) continue;
    const std::optional<Path> path = space.parse(opts);
    if (!path) continue;
    const std::vector<float> features = space.features(*path);
    x.insert(x.end(), features.begin(), features.end());
    seconds.push_back(cost);
  }
  if (seconds.empty()) throw std::invalid_argument("ranking: no stored candidate ran correctly in this action space");
  const std::vector<float> score = model.predict(x);
  std::vector<size_t> order(seconds.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::ranges::stable_sort(order, {}, [&](size_t i) { return score[i]; });

  Ranking r;
  r.ranked = static_cast<int64_t>(seconds.size());
  r.best = std::ranges::min(seconds);
  r.first = seconds[order[0]];
  r.top5 = INFINITY;
  for (size_t i = 0; i < order.size() && i < 5; i++) r.top5 = std::min(r.top5, seconds[order[i]]);
  r.best_rank = std::ranges::find_if(order, [&](size_t i) { return seconds[i] == r.best; }) - order.begin() + 1;
  r.spearman = seconds.size() < 2 ? NAN : pearson(ranks(std::vector<double>(score.begin(), score.end())), ranks(seconds));
  return r;
}

}  // namespace tunebed::search
