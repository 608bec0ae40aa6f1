#include "search/decide.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <set>
#include <stdexcept>

#include "search/measure.hpp"
#include "search/strategy.hpp"

namespace tunebed::search {

double p_faster(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) return 1;
  // Ranks of the pooled samples, ties averaged; U counts the pairs where A is the faster.
  std::vector<std::pair<double, int>> pooled;
  for (double x : a) pooled.push_back({x, 0});
  for (double x : b) pooled.push_back({x, 1});
  std::ranges::sort(pooled);
  const double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size()), n = na + nb;
  double rank_sum_b = 0, tie_term = 0;
  for (size_t i = 0; i < pooled.size();) {
    size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) j++;
    const double t = static_cast<double>(j - i), mid_rank = (static_cast<double>(i + j) + 1) / 2;
    for (size_t k = i; k < j; k++)
      if (pooled[k].second == 1) rank_sum_b += mid_rank;
    tie_term += t * t * t - t;
    i = j;
  }
  const double u_a = rank_sum_b - nb * (nb + 1) / 2;  // pairs (a, b) with a < b, ties half
  const double mean = na * nb / 2;
  const double var = na * nb / 12 * ((n + 1) - tie_term / (n * (n - 1)));
  if (var <= 0) return 1;  // every sample equal: nothing tells them apart
  const double z = (u_a - mean - 0.5) / std::sqrt(var);
  return 0.5 * std::erfc(z / std::sqrt(2.0));
}

Speedup bootstrap_speedup(const std::vector<double>& a, const std::vector<double>& b, uint64_t seed, int reps) {
  if (a.empty() || b.empty()) throw std::invalid_argument("bootstrap_speedup of no samples");
  std::mt19937_64 rng(seed);
  auto resampled_median = [&](const std::vector<double>& x) {
    std::vector<double> r(x.size());
    for (double& v : r) v = x[pick(rng, x.size())];
    return median(std::move(r));
  };
  std::vector<double> ratios;
  for (int i = 0; i < reps; i++) ratios.push_back(resampled_median(b) / resampled_median(a));
  std::ranges::sort(ratios);
  auto at = [&](double q) { return ratios[static_cast<size_t>(q * static_cast<double>(ratios.size() - 1))]; };
  return {median(b) / median(a), at(0.025), at(0.975)};
}

namespace {

double steady_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int lowest_median(const std::vector<double>& medians, std::optional<int> excluded = std::nullopt) {
  int best = -1;
  for (int i = 0; i < static_cast<int>(medians.size()); i++)
    if (i != excluded && (best < 0 || medians[i] < medians[best])) best = i;
  return best;
}

}  // namespace

Decision decide(int n, std::optional<int> incumbent, const DecisionPolicy& policy,
                const std::function<double(int)>& time_once, const std::function<double()>& clock) {
  if (n < 1) throw std::invalid_argument("decide: no candidates");
  if (incumbent && (*incumbent < 0 || *incumbent >= n))
    throw std::invalid_argument("decide: incumbent " + std::to_string(*incumbent) + " is not a candidate");
  if (policy.min_rounds < 1 || policy.max_rounds < policy.min_rounds || policy.step < 1)
    throw std::invalid_argument("decide: rounds must satisfy 1 <= min_rounds <= max_rounds, step >= 1");
  const std::function<double()> now = clock ? clock : steady_now;
  Decision d;
  d.samples.assign(static_cast<size_t>(n), {});
  for (int i = 0; i < n; i++) time_once(i);  // warm-up, untimed
  std::set<int> active;
  for (int i = 0; i < n; i++) active.insert(i);
  const int looks = 1 + (policy.max_rounds - policy.min_rounds + policy.step - 1) / policy.step;
  d.level = policy.alpha / (looks * std::max(1, n - 1));
  const double start = now();
  for (int rounds = policy.min_rounds; !active.empty();) {
    while (d.rounds < rounds)
      for (int i : active) {
        d.samples[static_cast<size_t>(i)].push_back(time_once(i));
        d.rounds = std::max(d.rounds, static_cast<int>(d.samples[static_cast<size_t>(i)].size()));
      }
    d.medians.clear();
    for (const std::vector<double>& s : d.samples) d.medians.push_back(median(s));
    d.leader = lowest_median(d.medians);
    std::set<int> close;  // not yet told apart from the leader
    for (int i = 0; i < n; i++)
      if (i != d.leader && p_faster(d.samples[d.leader], d.samples[i]) >= d.level) close.insert(i);
    if (close.empty() || rounds >= policy.max_rounds || now() - start >= policy.max_seconds) break;
    close.insert(d.leader);
    active = std::move(close);
    rounds = std::min(policy.max_rounds, rounds + policy.step);
  }
  const auto& s = d.samples;
  if (incumbent && *incumbent != d.leader && p_faster(s[d.leader], s[*incumbent]) >= d.level) {
    d.winner = *incumbent;
    d.challenger = d.leader;
    d.kept_incumbent = true;
    d.p_value = p_faster(s[d.leader], s[*incumbent]);
    d.speedup = bootstrap_speedup(s[d.leader], s[*incumbent]);
    return d;
  }
  d.winner = d.leader;
  d.challenger = lowest_median(d.medians, d.winner);
  if (d.challenger >= 0) {
    d.p_value = p_faster(s[d.winner], s[d.challenger]);
    d.speedup = bootstrap_speedup(s[d.winner], s[d.challenger]);
  }
  return d;
}

}  // namespace tunebed::search
