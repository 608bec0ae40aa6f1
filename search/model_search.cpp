// Model-guided search (strategy.hpp, ModelParams): measure only what a cost model ranks first.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "search/cost_model.hpp"
#include "search/strategy.hpp"

namespace tunebed::search {

namespace {

struct Timed {
  Path path;
  double cost;
};

std::vector<float> flatten(const std::vector<std::vector<float>>& rows) {  // row-major, as CostModel takes
  std::vector<float> flat;
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  return flat;
}

class ModelSearch : public Strategy {
 public:
  explicit ModelSearch(ModelParams p) : p_(std::move(p)) {}
  std::string name() const override { return "model"; }
  std::string params_json() const override {
    std::ostringstream s;
    s << "{\"model\":\"" << p_.model << "\",\"seed\":" << p_.seed << ",\"top_k\":" << p_.top_k
      << ",\"top_fraction\":" << p_.top_fraction << ",\"transplants\":" << p_.transplants
      << ",\"expand\":" << p_.expand << ",\"patience\":" << p_.patience << ",\"sweep\":" << p_.sweep
      << ",\"restarts\":" << p_.restarts << ",\"lookahead\":" << p_.lookahead
      << ",\"ahead_width\":" << p_.ahead_width << ",\"min_progress_s\":" << p_.min_progress_s
      << ",\"prior_kernels\":" << (p_.prior ? p_.prior->kernels() : 0)
      << ",\"prior_rows\":" << (p_.prior ? p_.prior->rows() : 0) << "}";
    return s.str();
  }

  void search(SearchContext& ctx) override {
    std::mt19937_64 rng(p_.seed);
    Ranker ranker(p_);
    std::vector<Timed> measured;  // finite costs
    std::set<std::string> known;  // the identity of every state evaluated
    const auto record = [&](const Candidate& c, std::optional<double> cost) {
      known.insert(c.identity);
      if (!cost || !std::isfinite(*cost)) return;
      measured.push_back({c.path, *cost});
      ranker.measured(c.features, *cost);
    };
    // Measures the model's top K of CANDIDATES; with ONE_PER_KIND, only the first of each kind.
    const auto measure_top = [&](const std::vector<Candidate>& candidates, size_t k, bool one_per_kind = false) {
      std::vector<std::vector<float>> x;
      for (const Candidate& c : candidates) x.push_back(c.features);
      std::vector<size_t> chosen;
      std::set<std::string> kinds;
      for (size_t i : ranker.rank(x, rng))
        if (chosen.size() < k && (!one_per_kind || kinds.insert(candidates[i].kind).second))
          chosen.push_back(i);
      std::vector<Path> batch;
      for (size_t i : chosen) batch.push_back(candidates[i].path);
      std::vector<std::optional<double>> costs = ctx.evaluate(batch);
      for (size_t i = 0; i < batch.size(); i++) record(candidates[chosen[i]], costs[i]);
    };
    const auto best = [&] { return measured.empty() ? INFINITY : std::ranges::min(measured, {}, &Timed::cost).cost; };
    const Candidate root = candidate(ctx, {});
    record(root, ctx.evaluate({root.path})[0]);
    const bool root_timed = !measured.empty();
    // Transfer: the winners of the kernels the prior learned from, where they parse here. A
    // kernel like one already tuned is likely won by the same opts.
    measure_top(transplants(ctx, known), static_cast<size_t>(p_.transplants));
    // Starts again in another basin, if restarts are left: under the model's favourite child of the
    // root whose action begins none of the bests the basins so far ended on, measured if it is not
    // yet. A first-improvement search settles where its first good state leads: for b8192771da79
    // a tensor core at the 256-element upcast cap, whose one child is a THREAD, where BEAM's best
    // grows from the other tensor core, slower alone.
    std::optional<Path> basin;  // after a restart, the state the search grows under
    std::set<int> first_opts;   // the first actions of the bests and starts of the basins so far
    int restarts = 0;
    const auto restart = [&] {
      if (restarts >= p_.restarts || ctx.exhausted()) return false;
      std::ranges::stable_sort(measured, {}, &Timed::cost);
      if (!measured.empty() && !measured.front().path.empty()) first_opts.insert(measured.front().path.front());
      if (basin) first_opts.insert(basin->front());
      std::vector<Candidate> starts;
      std::vector<std::vector<float>> x;
      for (Path& c : children(ctx.space(), {}))
        if (!first_opts.contains(c.front())) {
          starts.push_back(candidate(ctx, std::move(c)));
          x.push_back(starts.back().features);
        }
      if (starts.empty()) return false;
      const Candidate& start = starts[ranker.rank(x, rng).front()];
      restarts++;
      basin = start.path;
      if (!ctx.seen(start.path)) record(start, ctx.evaluate({start.path})[0]);
      return true;
    };
    int stale = 0;
    while (!ctx.exhausted()) {
      std::ranges::stable_sort(measured, {}, &Timed::cost);
      // Out of patience, a sweep: the favourite child of each kind of action of the SWEEP best,
      // and the favourite of the best less one of its opts. A restarted basin ends without one.
      const bool out_of_patience = stale >= p_.patience;
      const bool sweep = out_of_patience && !basin;
      std::vector<Candidate> pool;
      if (sweep) {
        pool = unseen_children(ctx, measured, static_cast<size_t>(p_.sweep), known);
        if (p_.sweep > 0 && !measured.empty())
          for (Candidate& c : simpler(ctx, measured.front().path, known)) pool.push_back(std::move(c));
      } else if (!out_of_patience) {
        // The parents: the measured states (of this basin), fastest first, then the root if it
        // has no time (a root stopped past the stop line, as unoptimized kernels are, still has
        // children to try). When the best have no unseen children left (transplants that unroll
        // every axis), the others'.
        std::vector<Timed> from;
        for (const Timed& t : measured)
          if (!basin || under(t.path, *basin)) from.push_back(t);
        if (!root_timed && !basin) from.push_back({root.path, INFINITY});
        pool = unseen_children(ctx, from, static_cast<size_t>(p_.expand), known);
        if (pool.empty()) pool = unseen_children(ctx, from, from.size(), known);
        look_ahead(ctx, ranker, rng, known, pool);
      }
      const double before = best();
      if (!pool.empty()) measure_top(pool, sweep ? pool.size() : step_size(pool.size()), sweep);
      const bool progress = before - best() >= p_.min_progress_s;  // inf - inf: none
      if (pool.empty() || (sweep && !progress)) {  // this basin has ended
        if (!restart()) break;
        stale = 0;
        continue;
      }
      stale = progress ? 0 : stale + 1;
    }
  }

 private:
  class Ranker;
  struct Candidate {
    Path path;
    std::vector<float> features;
    std::string identity;  // SearchSpace::identity
    std::string kind;      // for the sweep: its last action's, or kSimpler
  };
  static constexpr const char* kSimpler = "one opt less";
  static Candidate candidate(SearchContext& ctx, Path path, std::string kind = "") {
    std::vector<float> x = ctx.space().features(path);
    std::string id = ctx.space().identity(path);
    if (kind.empty() && !path.empty()) kind = ctx.space().kind(path.back());
    return {std::move(path), std::move(x), std::move(id), std::move(kind)};
  }

  // Whether STATE is BASE or one of its descendants.
  static bool under(const Path& state, const Path& base) {
    return state.size() >= base.size() && std::equal(base.begin(), base.end(), state.begin());
  }

  // TOP_FRACTION of a pool of N, rounded up, from 1 to TOP_K: a small space is not measured at
  // the pace of a large one.
  size_t step_size(size_t n) const {
    const auto share = static_cast<size_t>(std::ceil(p_.top_fraction * static_cast<double>(n)));
    return std::clamp<size_t>(share, 1, static_cast<size_t>(p_.top_k));
  }

  // The prior's winners that parse in this space and make a kernel not measured yet, each once.
  std::vector<Candidate> transplants(SearchContext& ctx, std::set<std::string> known) const {
    std::vector<Candidate> out;
    if (!p_.prior) return out;
    for (const std::string& w : p_.prior->winners())
      if (std::optional<Path> p = ctx.space().parse(w); p && !ctx.seen(*p))
        if (Candidate c = candidate(ctx, *p); known.insert(c.identity).second) out.push_back(std::move(c));
    return out;
  }

  // STATE less one of its actions (one_less), unseen and of an identity not KNOWN, all of one kind
  // for the sweep. The steps only add actions, so a state reached in one jump (a transplant, or a
  // step to a slow parent's child) had no way back to a simpler kernel inside it: a transplanted
  // UPCAST:2:0,UPCAST:0:0,UPCAST:0:2 at 1.6x BEAM's best, UPCAST:2:0,UPCAST:0:2.
  std::vector<Candidate> simpler(SearchContext& ctx, const Path& state, std::set<std::string> known) const {
    std::vector<Candidate> out;
    for (Path& p : one_less(ctx.space(), state))
      if (!ctx.seen(p))
        if (Candidate c = candidate(ctx, std::move(p), kSimpler); known.insert(c.identity).second)
          out.push_back(std::move(c));
    return out;
  }

  // Grows POOL by LOOKAHEAD levels the model foresees without measuring: the unseen children of
  // the AHEAD_WIDTH favourites of the pool's children, then of theirs. A step then measures the
  // favourites of every depth, so it can measure a state whose parent is slow (an UPCAST that
  // pays only once the UNROLL after it exists) without measuring the parent first: Ansor's
  // search, too, ranks whole programs rather than one step from the measured ones.
  void look_ahead(SearchContext& ctx, const Ranker& ranker, std::mt19937_64& rng, std::set<std::string> known,
                  std::vector<Candidate>& pool) const {
    for (const Candidate& c : pool) known.insert(c.identity);
    size_t level_begin = 0;
    for (int level = 0; level < p_.lookahead; level++) {
      std::vector<std::vector<float>> x;
      for (size_t i = level_begin; i < pool.size(); i++) x.push_back(pool[i].features);
      const std::vector<size_t> order = ranker.rank(x, rng);
      std::vector<Timed> favourites;
      for (size_t i = 0; i < order.size() && favourites.size() < static_cast<size_t>(p_.ahead_width); i++)
        favourites.push_back({pool[level_begin + order[i]].path, INFINITY});
      level_begin = pool.size();
      for (Candidate& c : unseen_children(ctx, favourites, favourites.size(), known)) {
        known.insert(c.identity);
        pool.push_back(std::move(c));
      }
      if (pool.size() == level_begin) break;
    }
  }

  // The unseen children of the first N of PARENTS, in order, leaving out those whose identity
  // is KNOWN or already in the pool. Opts in another order often make the same kernel
  // (UPCAST:1:4,UPCAST:0:4 followed by UPCAST:1:4,UPCAST:0:4 or by UPCAST:0:4,UPCAST:1:4 render
  // one source), and measuring it twice teaches nothing. Equal features are not enough: they
  // leave out which axis an opt takes where two axes are alike (UPCAST:1:2 against UPCAST:0:2),
  // and one of those is often much faster.
  std::vector<Candidate> unseen_children(SearchContext& ctx, const std::vector<Timed>& parents, size_t n,
                                         std::set<std::string> known) const {
    std::vector<Candidate> pool;
    for (size_t i = 0; i < parents.size() && i < n; i++)
      for (Path& child : children(ctx.space(), parents[i].path))
        if (!ctx.seen(child))
          if (Candidate c = candidate(ctx, std::move(child)); known.insert(c.identity).second)
            pool.push_back(std::move(c));
    return pool;
  }

  // The prior's model, fitted once, plus a model of its errors on this kernel, refitted as
  // measurements come in.
  class Ranker {
   public:
    explicit Ranker(const ModelParams& p) : p_(p) {
      if (!p.prior || p.prior->rows() == 0) return;
      prior_ = make_cost_model(p.model, p.seed);
      prior_->fit(*p.prior);
    }

    void measured(std::vector<float> features, double seconds) {
      if (!TrainingSet::learnable(seconds)) return;  // as TrainingSet drops it
      x_.push_back(std::move(features));
      s_.push_back(seconds);
      residual_.reset();
    }

    // X's indices, the favourites first; a seeded shuffle while there is nothing to learn from.
    std::vector<size_t> rank(const std::vector<std::vector<float>>& x, std::mt19937_64& rng) const {
      std::vector<size_t> order(x.size());
      std::iota(order.begin(), order.end(), size_t{0});
      if (!prior_ && s_.size() < 2) {
        for (size_t i = order.size(); i > 1; i--) std::swap(order[i - 1], order[pick(rng, i)]);
        return order;
      }
      const std::vector<float> score = predict(x);
      std::ranges::stable_sort(order, {}, [&](size_t i) { return score[i]; });
      return order;
    }

   private:
    std::vector<float> predict(const std::vector<std::vector<float>>& rows) const {
      const std::vector<float> flat = flatten(rows);
      std::vector<float> score = prior_ ? prior_->predict(flat) : std::vector<float>(rows.size(), 0);
      if (s_.size() < 2) return score;  // one measurement says nothing about a ranking
      if (!residual_) {  // fitted once per measurement, however often the look-ahead ranks
        TrainingSet own;
        own.add_kernel("this kernel", x_, s_);
        if (prior_) own.subtract(prior_->predict(flatten(x_)));
        residual_ = make_cost_model(p_.model, p_.seed);
        residual_->fit(own);
      }
      const std::vector<float> correction = residual_->predict(flat);
      for (size_t i = 0; i < score.size(); i++) score[i] += correction[i];
      return score;
    }

    const ModelParams& p_;
    std::unique_ptr<CostModel> prior_;
    mutable std::unique_ptr<CostModel> residual_;  // of x_ and s_, fitted when first asked
    std::vector<std::vector<float>> x_;
    std::vector<double> s_;
  };

  ModelParams p_;
};

}  // namespace

std::unique_ptr<Strategy> make_model_search(ModelParams params) {
  if (params.top_k < 1 || params.expand < 1 || params.patience < 1 || params.ahead_width < 1 ||
      params.transplants < 0 || params.lookahead < 0 || params.sweep < 0 || params.restarts < 0 ||
      !(params.top_fraction > 0 && params.top_fraction <= 1))
    throw std::invalid_argument(
        "model search: top_k, expand, patience and ahead_width must be at least 1, transplants, lookahead, "
        "sweep and restarts at least 0, top_fraction in (0, 1]");
  make_cost_model(params.model, params.seed);  // a bad model name fails here, not mid-search
  return std::make_unique<ModelSearch>(std::move(params));
}

}  // namespace tunebed::search
