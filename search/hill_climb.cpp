// Greedy hill climbing with random restarts. Unlike BEAM (which measures every child of every
// beam state before moving), it moves as soon as one batch of children holds an improvement:
// fewer candidates per step, at the risk of a worse step.
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "search/strategy.hpp"

namespace tunebed::search {

namespace {

class HillClimb : public Strategy {
 public:
  explicit HillClimb(HillClimbParams p) : p_(p) {}
  std::string name() const override { return "hill"; }
  std::string params_json() const override {
    std::ostringstream s;
    s << "{\"seed\":" << p_.seed << ",\"batch\":" << p_.batch << ",\"min_progress_s\":" << p_.min_progress_s
      << ",\"restarts\":" << p_.restarts << ",\"max_depth\":" << p_.max_depth << "}";
    return s.str();
  }

  void search(SearchContext& ctx) override {
    std::mt19937_64 rng(p_.seed);
    Path start;
    for (int climb = 0; climb <= p_.restarts && !ctx.exhausted(); climb++) {
      if (climb > 0) start = random_walk(ctx.space(), rng, p_.max_depth);
      std::optional<double> cost = ctx.evaluate({start})[0];
      if (!cost) return;
      climb_from(ctx, rng, start, *cost);
    }
  }

 private:
  void climb_from(SearchContext& ctx, std::mt19937_64& rng, Path cur, double cur_cost) {
    while (!ctx.exhausted()) {
      std::vector<Path> next = children(ctx.space(), cur);
      std::erase_if(next, [&](const Path& p) { return ctx.seen(p); });
      // Fisher-Yates with our own pick, for the same order under every standard library.
      for (size_t i = next.size(); i > 1; i--) std::swap(next[i - 1], next[pick(rng, i)]);
      bool moved = false;
      for (size_t at = 0; at < next.size() && !moved && !ctx.exhausted(); at += p_.batch) {
        std::vector<Path> batch(next.begin() + static_cast<ptrdiff_t>(at),
                                next.begin() + static_cast<ptrdiff_t>(std::min(next.size(), at + p_.batch)));
        std::vector<std::optional<double>> costs = ctx.evaluate(batch);
        int best = -1;
        for (size_t i = 0; i < batch.size(); i++)
          if (costs[i] && std::isfinite(*costs[i]) && (best < 0 || *costs[i] < *costs[best]))
            best = static_cast<int>(i);
        if (best >= 0 && cur_cost - *costs[best] >= p_.min_progress_s) {
          cur = batch[best];
          cur_cost = *costs[best];
          moved = true;
        }
      }
      if (!moved) return;  // a local optimum (or the budget ran out)
    }
  }

  HillClimbParams p_;
};

}  // namespace

std::unique_ptr<Strategy> make_hill_climb(HillClimbParams params) {
  if (params.batch < 1) throw std::invalid_argument("hill climbing batch must be at least 1");
  if (params.restarts < 0) throw std::invalid_argument("hill climbing restarts must not be negative");
  return std::make_unique<HillClimb>(params);
}

}  // namespace tunebed::search
