// BEAM search, as tinygrad's beam_search (opt/search.py at the seed). One difference: the root
// (the unoptimized kernel) is measured first, so "no opts" can win and the first level must
// beat it by min_progress, where tinygrad starts the beam at an infinite time.
#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <stdexcept>

#include "search/strategy.hpp"

namespace tunebed::search {

namespace {

class Beam : public Strategy {
 public:
  explicit Beam(BeamParams p) : p_(p) {}
  std::string name() const override { return "beam"; }
  std::string params_json() const override {
    std::ostringstream s;
    s << "{\"width\":" << p_.width << ",\"min_progress_s\":" << p_.min_progress_s << "}";
    return s.str();
  }

  void search(SearchContext& ctx) override {
    struct Timed {
      Path path;
      double cost;
    };
    std::optional<double> root = ctx.evaluate({Path{}})[0];
    if (!root) return;
    std::vector<Timed> beam = {{Path{}, *root}};
    while (!ctx.exhausted()) {
      // Every unseen child of the beam; a state reached twice (two orders of the same opts) is
      // measured once, as tinygrad's seen_libs.
      std::vector<Path> acted;
      std::set<std::string> keys;
      for (const Timed& t : beam)
        for (Path& child : children(ctx.space(), t.path))
          if (!ctx.seen(child) && keys.insert(ctx.space().key(child)).second)
            acted.push_back(std::move(child));
      std::vector<std::optional<double>> costs = ctx.evaluate(acted);
      std::vector<Timed> timed;
      for (size_t i = 0; i < acted.size(); i++)
        if (costs[i] && std::isfinite(*costs[i])) timed.push_back({acted[i], *costs[i]});
      std::ranges::stable_sort(timed, {}, &Timed::cost);

      // Done when nothing ran or the best child is no real progress; the best child, if it is
      // better at all, is already the context's best.
      if (timed.empty() || timed[0].cost < p_.min_progress_s ||
          beam[0].cost - timed[0].cost < p_.min_progress_s)
        break;
      timed.resize(std::min<size_t>(timed.size(), static_cast<size_t>(p_.width)));
      beam = std::move(timed);
    }
  }

 private:
  BeamParams p_;
};

}  // namespace

std::unique_ptr<Strategy> make_beam(BeamParams params) {
  if (params.width < 1)
    throw std::invalid_argument("beam width must be at least 1, not " + std::to_string(params.width));
  return std::make_unique<Beam>(params);
}

}  // namespace tunebed::search
