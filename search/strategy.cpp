#include "search/strategy.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <utility>

#include "search/measure.hpp"

namespace tunebed::search {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

SearchContext::SearchContext(SearchSpace& space, CostFunction& cost, Budget budget, Clock clock)
    : space_(space), cost_(cost), budget_(budget), clock_(std::move(clock)), start_(clock_()) {}

bool SearchContext::exhausted() const {
  if (budget_.candidates && evaluated() >= *budget_.candidates) return true;
  return budget_.seconds && clock_() - start_ >= *budget_.seconds;
}

std::vector<std::optional<double>> SearchContext::evaluate(const std::vector<Path>& batch) {
  std::vector<std::string> keys;
  std::vector<Path> fresh;
  std::set<std::string> fresh_keys;
  int64_t room = budget_.candidates ? *budget_.candidates - evaluated() : INT64_MAX;
  bool out_of_time = exhausted();
  for (const Path& p : batch) {
    keys.push_back(space_.key(p));
    const std::string& k = keys.back();
    if (out_of_time || costs_.contains(k) || fresh_keys.contains(k)) continue;
    if (static_cast<int64_t>(fresh.size()) >= room) continue;
    fresh.push_back(p);
    fresh_keys.insert(k);
  }
  if (!fresh.empty()) {
    std::optional<double> early_stop;
    if (best()) early_stop = kEarlyStopFactor * best()->cost;
    std::vector<double> costs = cost_.evaluate(fresh, early_stop);
    for (size_t i = 0; i < fresh.size(); i++) {
      std::string k = space_.key(fresh[i]);
      costs_[k] = costs[i];
      history_.push_back({fresh[i], k, costs[i]});
      if (std::isfinite(costs[i]) && (best_ < 0 || costs[i] < history_[best_].cost))
        best_ = static_cast<int>(history_.size()) - 1;
    }
  }
  std::vector<std::optional<double>> out;
  for (const std::string& k : keys) {
    auto it = costs_.find(k);
    out.push_back(it == costs_.end() ? std::nullopt : std::optional<double>(it->second));
  }
  return out;
}

SearchResult run_search(Strategy& strategy, SearchSpace& space, CostFunction& cost, Budget budget,
                        Clock clock) {
  SearchContext ctx(space, cost, budget, std::move(clock));
  strategy.search(ctx);
  SearchResult r;
  if (ctx.best()) r.best = *ctx.best();
  r.history = ctx.history();
  return r;
}

std::string SearchSpace::identity(const Path& state) { return key(state); }

std::vector<float> SearchSpace::features(const Path&) {
  throw std::logic_error("this search space has no features for a cost model");
}

std::optional<Path> SearchSpace::parse(const std::string&) { return std::nullopt; }

std::string SearchSpace::kind(int) { return ""; }

size_t pick(std::mt19937_64& rng, size_t n) { return static_cast<size_t>(rng() % n); }

double uniform(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

Path random_walk(SearchSpace& space, std::mt19937_64& rng, int max_depth) {
  Path path;
  for (int depth = 0; depth < max_depth; depth++) {
    std::vector<int> legal = space.actions(path);
    size_t choice = pick(rng, legal.size() + 1);
    if (choice == legal.size()) break;
    path.push_back(legal[choice]);
  }
  return path;
}

std::vector<Path> children(SearchSpace& space, const Path& state) {
  std::vector<Path> out;
  for (int a : space.actions(state)) {
    Path child = state;
    child.push_back(a);
    out.push_back(std::move(child));
  }
  return out;
}

bool reachable(SearchSpace& space, const Path& state) {
  Path prefix;
  for (int a : state) {  // in order, so that actions() is only asked of states of the space
    if (!std::ranges::binary_search(space.actions(prefix), a)) return false;
    prefix.push_back(a);
  }
  return true;
}

std::vector<Path> one_less(SearchSpace& space, const Path& state) {
  std::vector<Path> out;
  for (size_t i = 0; i < state.size(); i++) {
    Path rest = state;
    rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(i));
    // An action's meaning can depend on those before it (an opt's axis counts the axes left).
    if (reachable(space, rest)) out.push_back(std::move(rest));
  }
  return out;
}

}  // namespace tunebed::search
