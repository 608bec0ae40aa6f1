// Exhaustive search: every state, breadth-first from the root in action order, until the budget
// is spent. It learns nothing; it is there to make complete data that replay (replay.hpp) can run
// other strategies against, and to say what the best within a depth really is.
#include <deque>
#include <set>
#include <sstream>
#include <stdexcept>

#include "search/strategy.hpp"

namespace tunebed::search {

namespace {

class Exhaustive : public Strategy {
 public:
  explicit Exhaustive(ExhaustiveParams p) : p_(p) {}
  std::string name() const override { return "exhaustive"; }
  std::string params_json() const override {
    std::ostringstream s;
    s << "{\"batch\":" << p_.batch << ",\"max_depth\":" << p_.max_depth << "}";
    return s.str();
  }

  void search(SearchContext& ctx) override {
    std::deque<Path> frontier = {Path{}};
    std::set<std::string> met;  // keys already batched: a state reached again is not expanded again
    std::vector<Path> batch;
    auto flush = [&] {
      ctx.evaluate(batch);
      batch.clear();
    };
    while (!frontier.empty() && !ctx.exhausted()) {
      Path state = std::move(frontier.front());
      frontier.pop_front();
      if (!met.insert(ctx.space().key(state)).second) continue;
      batch.push_back(state);
      if (static_cast<int>(state.size()) < p_.max_depth)
        for (Path& child : children(ctx.space(), state)) frontier.push_back(std::move(child));
      if (static_cast<int>(batch.size()) == p_.batch) flush();
    }
    if (!batch.empty() && !ctx.exhausted()) flush();
  }

 private:
  ExhaustiveParams p_;
};

}  // namespace

std::unique_ptr<Strategy> make_exhaustive(ExhaustiveParams params) {
  if (params.batch < 1) throw std::invalid_argument("exhaustive search batch must be at least 1");
  if (params.max_depth < 0) throw std::invalid_argument("exhaustive search depth must be at least 0");
  return std::make_unique<Exhaustive>(params);
}

}  // namespace tunebed::search
