// Random search: the baseline every smarter strategy has to beat (Bergstra and Bengio, 2012).
#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "search/strategy.hpp"

namespace tunebed::search {

namespace {

class RandomSearch : public Strategy {
 public:
  explicit RandomSearch(RandomParams p) : p_(p) {}
  std::string name() const override { return "random"; }
  std::string params_json() const override {
    std::ostringstream s;
    s << "{\"seed\":" << p_.seed << ",\"batch\":" << p_.batch << ",\"max_depth\":" << p_.max_depth
      << ",\"max_stale_draws\":" << p_.max_stale_draws << "}";
    return s.str();
  }

  void search(SearchContext& ctx) override {
    std::mt19937_64 rng(p_.seed);
    int stale = 0;
    while (!ctx.exhausted() && stale < p_.max_stale_draws) {
      // Draw until the batch holds BATCH unseen states (or the draws go stale: a small space is
      // exhausted before its budget).
      std::vector<Path> batch;
      std::vector<std::string> keys;
      while (static_cast<int>(batch.size()) < p_.batch && stale < p_.max_stale_draws) {
        Path p = random_walk(ctx.space(), rng, p_.max_depth);
        std::string k = ctx.space().key(p);
        if (ctx.seen(p) || std::ranges::find(keys, k) != keys.end()) {
          stale++;
          continue;
        }
        stale = 0;
        batch.push_back(std::move(p));
        keys.push_back(std::move(k));
      }
      if (batch.empty()) break;
      ctx.evaluate(batch);
    }
  }

 private:
  RandomParams p_;
};

}  // namespace

std::unique_ptr<Strategy> make_random(RandomParams params) {
  if (params.batch < 1) throw std::invalid_argument("random search batch must be at least 1");
  return std::make_unique<RandomSearch>(params);
}

}  // namespace tunebed::search
