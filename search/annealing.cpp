// Simulated annealing (Kirkpatrick et al., 1983) over opt paths. Its moves can undo a step,
// which BEAM and hill climbing cannot: an early UPCAST that looked good can be dropped again
// once the temperature lets the search climb out of the valley it led into.
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "search/strategy.hpp"

namespace tunebed::search {

namespace {

class Annealing : public Strategy {
 public:
  explicit Annealing(AnnealingParams p) : p_(p) {}
  std::string name() const override { return "annealing"; }
  std::string params_json() const override {
    std::ostringstream s;
    s << "{\"seed\":" << p_.seed << ",\"batch\":" << p_.batch << ",\"t_start\":" << p_.t_start
      << ",\"t_end\":" << p_.t_end << ",\"steps\":" << p_.steps << "}";
    return s.str();
  }

  void search(SearchContext& ctx) override {
    std::mt19937_64 rng(p_.seed);
    Path cur;
    std::optional<double> cur_cost = ctx.evaluate({cur})[0];
    if (!cur_cost) return;
    for (int64_t step = 0; step < p_.steps && !ctx.exhausted();) {
      std::vector<Path> batch;
      for (int i = 0; i < p_.batch; i++)
        if (std::optional<Path> m = move(ctx.space(), rng, cur)) batch.push_back(std::move(*m));
      if (batch.empty()) return;  // the root has no legal action at all
      std::vector<std::optional<double>> costs = ctx.evaluate(batch);
      for (size_t i = 0; i < batch.size(); i++, step++) {
        double t = p_.t_start *
                   std::pow(p_.t_end / p_.t_start, static_cast<double>(step) / static_cast<double>(p_.steps));
        // Every proposal draws its acceptance number, so the sequence does not depend on
        // which earlier comparisons short-circuited.
        double u = uniform(rng);
        if (!costs[i] || !std::isfinite(*costs[i])) continue;
        bool accept = *costs[i] < *cur_cost ||
                      (std::isfinite(*cur_cost) && u < std::exp(-(*costs[i] - *cur_cost) / (t * *cur_cost)));
        if (accept) {
          cur = batch[i];
          cur_cost = costs[i];
          step += static_cast<int64_t>(batch.size() - i);
          break;
        }
      }
    }
  }

 private:
  // A random neighbour of CUR: append a legal action, drop the last action, or replace it with
  // another action legal at its parent. None when CUR has no neighbour at all.
  static std::optional<Path> move(SearchSpace& space, std::mt19937_64& rng, const Path& cur) {
    std::vector<int> next = space.actions(cur);
    std::vector<int> siblings;
    if (!cur.empty()) {
      siblings = space.actions(Path(cur.begin(), cur.end() - 1));
      std::erase(siblings, cur.back());
    }
    enum Kind { append, drop, replace };
    std::vector<Kind> kinds;
    if (!next.empty()) kinds.push_back(append);
    if (!cur.empty()) kinds.push_back(drop);
    if (!siblings.empty()) kinds.push_back(replace);
    if (kinds.empty()) return std::nullopt;
    Path p = cur;
    switch (kinds[pick(rng, kinds.size())]) {
      case append:
        p.push_back(next[pick(rng, next.size())]);
        break;
      case drop:
        p.pop_back();
        break;
      case replace:
        p.back() = siblings[pick(rng, siblings.size())];
        break;
    }
    return p;
  }

  AnnealingParams p_;
};

}  // namespace

std::unique_ptr<Strategy> make_annealing(AnnealingParams params) {
  if (params.batch < 1) throw std::invalid_argument("annealing batch must be at least 1");
  if (params.steps < 1) throw std::invalid_argument("annealing steps must be at least 1");
  if (!(params.t_start > 0 && params.t_end > 0))
    throw std::invalid_argument("annealing temperatures must be positive");
  return std::make_unique<Annealing>(params);
}

}  // namespace tunebed::search
