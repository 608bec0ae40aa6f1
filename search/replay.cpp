#include "search/replay.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

namespace tunebed::search {

namespace {

// Answers from the stored costs; remembers which proposals had none.
class StoredCost : public CostFunction {
 public:
  StoredCost(SearchSpace& space, const StoredCosts& costs) : space_(space), costs_(costs) {}

  std::vector<double> evaluate(const std::vector<Path>& batch, std::optional<double>) override {
    std::vector<double> out;
    for (const Path& p : batch) {
      const std::string key = space_.key(p);
      auto it = costs_.find(key);
      out.push_back(it == costs_.end() ? INFINITY : it->second);
      if (it == costs_.end() && missing_.insert(key).second) missing_order_.push_back(key);
    }
    return out;
  }
  bool missing(const std::string& key) const { return missing_.contains(key); }
  const std::vector<std::string>& missing_opts() const { return missing_order_; }

 private:
  SearchSpace& space_;
  const StoredCosts& costs_;
  std::set<std::string> missing_;
  std::vector<std::string> missing_order_;
};

}  // namespace

std::optional<std::string> ReplayResult::best_opts() const {
  if (steps.empty() || !std::isfinite(steps.back().best_so_far)) return std::nullopt;
  auto it = std::ranges::find_if(steps, [&](const ReplayStep& s) { return s.cost == steps.back().best_so_far; });
  return it->opts;
}

std::optional<int64_t> ReplayResult::candidates_to(double seconds) const {
  for (size_t i = 0; i < steps.size(); i++)
    if (steps[i].best_so_far <= seconds) return static_cast<int64_t>(i + 1);
  return std::nullopt;
}

ReplayResult replay(Strategy& strategy, SearchSpace& space, const StoredCosts& costs, int64_t budget) {
  ReplayResult r;
  r.best_stored = INFINITY;
  for (const auto& [opts, cost] : costs) r.best_stored = std::min(r.best_stored, cost);
  if (!std::isfinite(r.best_stored)) throw std::invalid_argument("replay: no stored candidate ran correctly");
  StoredCost cost(space, costs);
  // No wall time passes in a replay: only the candidate budget can end it.
  const SearchResult s = run_search(strategy, space, cost, {.candidates = budget}, [] { return 0.0; });
  double best = INFINITY;
  for (const Evaluated& e : s.history) {
    const bool missing = cost.missing(e.key);
    r.missing += missing;
    best = std::min(best, e.cost);
    r.steps.push_back({e.key, missing ? std::nullopt : std::optional(e.cost), best});
  }
  r.missing_opts = cost.missing_opts();
  return r;
}

}  // namespace tunebed::search
