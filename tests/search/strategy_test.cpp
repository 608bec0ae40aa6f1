// The strategies on synthetic spaces: a separable cost whose optimum brute force can find.
#include "search/strategy.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "search/cost_model.hpp"

namespace tunebed::search {
namespace {

// D knobs of V settings each, all starting at setting 0; action d*V + v (v >= 1) sets knob d to
// v, and a knob can be set once: each knob is a kind of action. Cost: 1 + sum over knobs of
// weight[d][setting].
struct SeparableSpace : SearchSpace {
  int dims, values;
  std::vector<std::vector<int>> weight;
  double scale = 1;  // a bigger or smaller kernel of the same kind

  SeparableSpace(int d, int v, std::vector<std::vector<int>> w) : dims(d), values(v), weight(std::move(w)) {}

  std::vector<int> setting(const Path& state) const {
    std::vector<int> s(dims, 0);
    for (int a : state) s[a / values] = a % values;
    return s;
  }
  std::vector<int> actions(const Path& state) override {
    std::vector<int> s = setting(state), legal;
    for (int d = 0; d < dims; d++)
      if (s[d] == 0)
        for (int v = 1; v < values; v++) legal.push_back(d * values + v);
    return legal;
  }
  std::string key(const Path& state) override {
    std::string k;
    for (int v : setting(state)) k += std::to_string(v) + ",";
    return k;
  }
  std::vector<float> features(const Path& state) override {  // each knob's setting
    std::vector<float> f;
    for (int v : setting(state)) f.push_back(static_cast<float>(v));
    return f;
  }
  std::optional<Path> parse(const std::string& key) override {  // "v0,v1,...," as key() writes it
    Path p;
    size_t at = 0;
    for (int d = 0; d < dims; d++) {
      const size_t comma = key.find(',', at);
      if (comma == std::string::npos || comma == at) return std::nullopt;
      const int v = std::stoi(key.substr(at, comma - at));
      if (v < 0 || v >= values) return std::nullopt;
      if (v > 0) p.push_back(d * values + v);
      at = comma + 1;
    }
    return at == key.size() ? std::optional(p) : std::nullopt;
  }
  std::string kind(int action) override { return "knob " + std::to_string(action / values); }
  virtual ~SeparableSpace() = default;
  virtual double cost(const Path& state) const {
    double c = 1;
    std::vector<int> s = setting(state);
    for (int d = 0; d < dims; d++) c += weight[d][s[d]];
    return scale * c;
  }
  double optimum() const {
    double c = 1;
    for (const auto& w : weight) c += *std::ranges::min_element(w);
    return scale * c;
  }
};

// Evaluates through the space's cost, checking that no key is ever asked for twice.
struct CountingCost : CostFunction {
  SeparableSpace& space;
  std::set<std::string> asked;
  int64_t calls = 0, states = 0;
  std::vector<size_t> batches;  // each call's size
  bool repeated = false;
  double* clock = nullptr;  // a fake clock, moved on by PER_BATCH_S each batch
  double per_batch_s = 0;

  explicit CountingCost(SeparableSpace& s) : space(s) {}
  std::vector<double> evaluate(const std::vector<Path>& batch, std::optional<double>) override {
    calls++;
    batches.push_back(batch.size());
    std::vector<double> out;
    for (const Path& p : batch) {
      states++;
      repeated |= !asked.insert(space.key(p)).second;
      out.push_back(space.cost(p));
    }
    if (clock) *clock += per_batch_s;
    return out;
  }
};

SeparableSpace random_space(int dims, int values) {
  std::vector<std::vector<int>> w(dims, std::vector<int>(values));
  for (auto& row : w)
    for (int& x : row) x = *rc::gen::inRange(0, 20);
  return SeparableSpace(dims, values, std::move(w));
}

SeparableSpace fixed_space() {
  return SeparableSpace(4, 4, {{9, 3, 7, 1}, {2, 8, 0, 5}, {6, 6, 4, 9}, {0, 3, 3, 1}});
}

std::vector<std::unique_ptr<Strategy>> every_strategy(uint64_t seed) {
  std::vector<std::unique_ptr<Strategy>> s;
  s.push_back(make_beam({.width = 2}));
  s.push_back(make_random({.seed = seed, .batch = 3}));
  s.push_back(make_hill_climb({.seed = seed, .batch = 3}));
  s.push_back(make_annealing({.seed = seed, .batch = 3, .steps = 300}));
  s.push_back(make_exhaustive({.batch = 3}));
  s.push_back(make_model_search({.seed = seed, .top_k = 3}));
  return s;
}

std::vector<std::string> keys_of(const SearchResult& r) {
  std::vector<std::string> k;
  for (const Evaluated& e : r.history) k.push_back(e.key);
  return k;
}

RC_GTEST_PROP(Beam, finds_the_optimum_of_any_separable_cost, ()) {
  SeparableSpace space = random_space(*rc::gen::inRange(1, 5), *rc::gen::inRange(2, 5));
  CountingCost cost(space);
  auto beam = make_beam({.width = *rc::gen::inRange(1, 5)});
  SearchResult r = run_search(*beam, space, cost, {});
  RC_ASSERT(r.best.has_value());
  RC_ASSERT(r.best->cost == space.optimum());
  RC_ASSERT(!cost.repeated);
}

RC_GTEST_PROP(Strategies, never_exceed_a_candidate_budget_nor_repeat_a_state, (uint64_t seed)) {
  SeparableSpace space = random_space(4, 4);
  int64_t budget = *rc::gen::inRange(1, 40);
  for (auto& strategy : every_strategy(seed)) {
    CountingCost cost(space);
    SearchResult r = run_search(*strategy, space, cost, {.candidates = budget});
    RC_ASSERT(cost.states <= budget);
    RC_ASSERT(static_cast<int64_t>(r.history.size()) == cost.states);
    RC_ASSERT(!cost.repeated);
  }
}

// On a fake clock that only the cost function moves, 40 ms a batch: a batch starts only while the
// clock is under the budget, so every strategy evaluates exactly three (at 0, 40 and 80 ms) and
// stops at 120 ms, whatever the machine's load.
TEST(Strategies, StopWithinOneBatchOfASecondsBudget) {
  SeparableSpace space = fixed_space();
  for (auto& strategy : every_strategy(1)) {
    double now = 0;
    CountingCost cost(space);
    cost.clock = &now;
    cost.per_batch_s = 0.04;  // unbudgeted, BEAM alone would take 6 batches
    run_search(*strategy, space, cost, {.seconds = 0.1}, [&] { return now; });
    EXPECT_EQ(cost.calls, 3) << strategy->name();
    EXPECT_LT(now, 0.1 + 0.04 + 1e-9) << strategy->name();
  }
}

TEST(Strategies, SameSeedAndCostsGiveTheSameProposals) {
  SeparableSpace space = fixed_space();
  for (uint64_t seed : {1u, 2u}) {
    auto a = every_strategy(seed), b = every_strategy(seed);
    for (size_t i = 0; i < a.size(); i++) {
      CountingCost ca(space), cb(space);
      EXPECT_EQ(keys_of(run_search(*a[i], space, ca, {.candidates = 30})),
                keys_of(run_search(*b[i], space, cb, {.candidates = 30})))
          << a[i]->name();
    }
  }
}

TEST(Strategies, ADifferentSeedGivesADifferentSequence) {
  SeparableSpace space = fixed_space();
  auto a = every_strategy(1), b = every_strategy(2);
  for (size_t i = 1; i < a.size(); i++) {  // all but BEAM and EXHAUSTIVE, which draw nothing
    if (a[i]->name() == "exhaustive") continue;
    CountingCost ca(space), cb(space);
    EXPECT_NE(keys_of(run_search(*a[i], space, ca, {.candidates = 30})),
              keys_of(run_search(*b[i], space, cb, {.candidates = 30})))
        << a[i]->name();
  }
}

TEST(Strategies, RandomSearchAndAnnealingReachTheOptimumOfASmallSpace) {
  SeparableSpace space = fixed_space();  // 4^4 = 256 states
  for (uint64_t seed : {1u, 2u, 3u}) {
    CountingCost c1(space), c2(space);
    auto random = make_random({.seed = seed, .batch = 8, .max_depth = 4});
    EXPECT_EQ(run_search(*random, space, c1, {.candidates = 256}).best->cost, space.optimum()) << seed;
    auto annealing = make_annealing({.seed = seed, .batch = 4, .steps = 2000});
    EXPECT_EQ(run_search(*annealing, space, c2, {.candidates = 200}).best->cost, space.optimum()) << seed;
  }
}

TEST(Strategies, HillClimbingImprovesOnTheRoot) {
  SeparableSpace space = fixed_space();
  CountingCost cost(space);
  auto hill = make_hill_climb({.seed = 5, .batch = 2, .restarts = 0});
  SearchResult r = run_search(*hill, space, cost, {});
  EXPECT_LT(r.best->cost, space.cost({}));
  // Each move takes the first improving batch of two, so it stops short of measuring all 12
  // children of the root that BEAM would.
  EXPECT_LT(cost.states, 1 + 12 + 9 + 6 + 3);
}

TEST(Exhaustive, VisitsEveryStateOnceBreadthFirstAndFindsTheOptimum) {
  SeparableSpace space = fixed_space();  // 4^4 = 256 distinct settings
  CountingCost cost(space);
  auto all = make_exhaustive({.batch = 8});
  const SearchResult r = run_search(*all, space, cost, {});
  EXPECT_EQ(r.history.size(), 256u);
  EXPECT_FALSE(cost.repeated);
  EXPECT_EQ(r.best->cost, space.optimum());
  // Breadth-first: no state is evaluated before every state with fewer knobs set.
  for (size_t i = 1; i < r.history.size(); i++)
    EXPECT_GE(r.history[i].path.size(), r.history[i - 1].path.size()) << i;
  CountingCost shallow_cost(space);
  auto shallow = make_exhaustive({.max_depth = 1});
  EXPECT_EQ(run_search(*shallow, space, shallow_cost, {}).history.size(), 1u + 12u);  // the root, its children
}

TEST(Strategies, BadParametersAreRefusedWithTheirName) {
  try {
    make_beam({.width = 0});
    ADD_FAILURE() << "width 0 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("beam width"), std::string::npos) << e.what();
  }
  EXPECT_THROW(make_random({.batch = 0}), std::invalid_argument);
  EXPECT_THROW(make_annealing({.t_start = 0}), std::invalid_argument);
  EXPECT_THROW(make_exhaustive({.batch = 0}), std::invalid_argument);
  EXPECT_THROW(make_exhaustive({.max_depth = -1}), std::invalid_argument);
}


// The candidates a search evaluated until it first met COST; -1 if never.
int64_t candidates_to(const SearchResult& r, double cost) {
  for (size_t i = 0; i < r.history.size(); i++)
    if (r.history[i].cost <= cost) return static_cast<int64_t>(i + 1);
  return -1;
}

// A prior: WALKS random walks of up to DEPTH actions through SEEN (seed 1), as one kernel's
// measurements.
std::shared_ptr<TrainingSet> walks_of(SeparableSpace& seen, int walks, int depth) {
  std::mt19937_64 rng(1);
  std::vector<std::vector<float>> x;
  std::vector<double> s;
  for (int i = 0; i < walks; i++) {
    const Path p = random_walk(seen, rng, depth);
    x.push_back(seen.features(p));
    s.push_back(seen.cost(p));
  }
  auto prior = std::make_shared<TrainingSet>();
  prior->add_kernel("seen", x, s);
  return prior;
}

// Transfer: a model trained on one kernel's measurements ranks another kernel of the same kind
// (the same law at 100x the time), so the search measures a fraction of what BEAM does.
TEST(ModelSearch, APriorFromAnotherKernelFindsTheOptimumWithAQuarterOfBeamsCandidates) {
  std::vector<std::vector<int>> w = {{9, 3, 7, 1, 6, 4}, {2, 8, 0, 5, 9, 7}, {6, 6, 4, 9, 2, 8},
                                     {0, 3, 3, 1, 8, 5}, {7, 2, 9, 9, 4, 6}, {5, 1, 8, 0, 3, 9}};
  SeparableSpace seen(6, 6, w), unseen(6, 6, w);
  unseen.scale = 100;
  const auto prior = walks_of(seen, 400, 6);

  CountingCost beam_cost(unseen), model_cost(unseen);
  const SearchResult beam = run_search(*make_beam({.width = 2}), unseen, beam_cost, {});
  const SearchResult model = run_search(*make_model_search({.prior = prior}), unseen, model_cost, {});
  ASSERT_EQ(beam.best->cost, unseen.optimum());
  ASSERT_EQ(model.best->cost, unseen.optimum());
  EXPECT_FALSE(model_cost.repeated);
  const int64_t b = candidates_to(beam, unseen.optimum()), m = candidates_to(model, unseen.optimum());
  EXPECT_LE(4 * m, b) << "model " << m << " candidates, beam " << b;
}

// A prior wrong about this kernel: on the kernel it learned from, knob 0's best setting is what
// costs most here. The kernel's own measurements, refitted with the prior, turn the ranking round,
// so the search still reaches the optimum, in a quarter of BEAM's candidates.
TEST(ModelSearch, ItsOwnMeasurementsOverruleAPriorThatIsWrongAboutIt) {
  const std::vector<std::vector<int>> w = {{9, 3, 7, 1, 6, 4}, {2, 8, 0, 5, 9, 7}, {6, 6, 4, 9, 2, 8},
                                           {0, 3, 3, 1, 8, 5}};
  std::vector<std::vector<int>> flipped = w;
  std::ranges::reverse(flipped[0].begin() + 1, flipped[0].end());  // settings 1-5: 4 6 1 7 3
  SeparableSpace seen(4, 6, w), unseen(4, 6, flipped);
  const auto prior = walks_of(seen, 300, 4);
  CountingCost beam_cost(unseen), model_cost(unseen);
  const SearchResult beam = run_search(*make_beam({.width = 2}), unseen, beam_cost, {});
  const SearchResult model = run_search(*make_model_search({.prior = prior}), unseen, model_cost, {});
  ASSERT_EQ(beam.best->cost, unseen.optimum());
  ASSERT_EQ(model.best->cost, unseen.optimum()) << model.history.size() << " candidates";
  const int64_t b = candidates_to(beam, unseen.optimum()), m = candidates_to(model, unseen.optimum());
  EXPECT_LE(4 * m, b) << "model " << m << " candidates, beam " << b;  // with the prior frozen: 17 and 53
}

// A prior wrong about a whole kind of action: on the kernel it learned from, setting knob 7 at
// all costs more, as THREAD does on a small kernel; here its setting 2 is the optimum's. The
// model's top few never hold a knob-7 child, so before it stops it sweeps: it measures its
// favourite unseen child of each kind on the best state, and that one pays. Without the sweep
// the search stops having never set knob 7.
TEST(ModelSearch, BeforeItStopsItTriesEveryKindOfActionOnTheBestState) {
  std::vector<std::vector<int>> w = {{9, 3, 7, 1, 6, 4}, {2, 8, 0, 5, 9, 7}, {6, 6, 4, 9, 2, 8},
                                     {0, 3, 3, 1, 8, 5}, {7, 2, 9, 9, 4, 6}, {5, 1, 8, 0, 3, 9},
                                     {3, 5, 2, 8, 1, 6}, {0, 16, 15, 17, 16, 17}};
  SeparableSpace seen(8, 6, w);
  w[7] = {9, 14, 0, 15, 14, 15};
  SeparableSpace unseen(8, 6, w);
  const auto prior = walks_of(seen, 400, 8);
  CountingCost beam_cost(unseen), sweep_cost(unseen), none_cost(unseen);
  const SearchResult beam = run_search(*make_beam({.width = 2}), unseen, beam_cost, {});
  const SearchResult sweep = run_search(*make_model_search({.sweep = 1, .prior = prior}), unseen, sweep_cost, {});
  const SearchResult none = run_search(*make_model_search({.sweep = 0, .prior = prior}), unseen, none_cost, {});
  ASSERT_EQ(beam.best->cost, unseen.optimum());
  ASSERT_EQ(sweep.best->cost, unseen.optimum()) << sweep.history.size() << " candidates";
  const int64_t b = candidates_to(beam, unseen.optimum()), m = candidates_to(sweep, unseen.optimum());
  EXPECT_LE(4 * m, b) << "model " << m << " candidates, beam " << b;
  EXPECT_FALSE(sweep_cost.repeated);
  ASSERT_TRUE(none.best);
  EXPECT_GT(none.best->cost, unseen.optimum());
  EXPECT_TRUE(std::ranges::none_of(none.history, [&](const Evaluated& e) { return unseen.setting(e.path)[7] != 0; }))
      << "without the sweep, knob 7 was set";
}

// Two knobs that pay only together, as an UPCAST can pay only once the UNROLL after it exists:
// each alone is slower than the root, both are the optimum (at 1 of the root's 10), and the
// other knobs are slower still.
struct PairedSpace : SeparableSpace {
  PairedSpace() : SeparableSpace(3, 4, {{0, 3, 3, 1}, {0, 3, 3, 1}, {0, 2, 2, 2}}) {}
  double cost(const Path& state) const override {
    const std::vector<int> s = setting(state);
    return scale * (s[0] == 3 && s[1] == 3 ? 1 : 10 + SeparableSpace::cost(state));
  }
};

// The look-ahead ranks the children of the model's favourite children unmeasured, so a step can
// measure a pair whose first half alone is slow; without it the pair waits for its slow parent
// to be measured. The prior knows the law from another kernel of the kind, at 100x the time.
TEST(ModelSearch, TheLookAheadMeasuresAPairBeforeItsSlowHalf) {
  PairedSpace seen, unseen;
  seen.scale = 100;
  const auto prior = walks_of(seen, 400, 3);
  const Path pair = *unseen.parse("3,3,0,");
  ASSERT_EQ(unseen.cost(pair), 1);
  ASSERT_GT(unseen.cost(*unseen.parse("3,0,0,")), unseen.cost({}));

  CountingCost ahead_cost(unseen), greedy_cost(unseen);
  const SearchResult ahead = run_search(*make_model_search({.lookahead = 1, .prior = prior}), unseen, ahead_cost, {});
  const SearchResult greedy = run_search(*make_model_search({.lookahead = 0, .prior = prior}), unseen, greedy_cost, {});
  ASSERT_TRUE(ahead.best && greedy.best);
  EXPECT_EQ(ahead.best->cost, 1);
  EXPECT_EQ(ahead_cost.batches.at(1), 4u);  // root, then one step of top_k
  const int64_t a = candidates_to(ahead, 1), g = candidates_to(greedy, 1);
  EXPECT_TRUE(a > 0 && a <= 1 + 4) << a << ": the pair is measured in the first step";
  EXPECT_TRUE(g < 0 || a < g) << "with the look-ahead " << a << " candidates, without " << g;
  EXPECT_FALSE(ahead_cost.repeated);
}

// Transfer of winners: the opts that won the prior's kernels are measured right after the root,
// where they parse here (one does not), so a kernel won by the same opts is solved at once.
TEST(ModelSearch, TriesThePriorsWinnersRightAfterTheRoot) {
  std::vector<std::vector<int>> w = {{9, 3, 7, 1}, {2, 8, 0, 5}, {6, 6, 4, 9}};
  SeparableSpace space(3, 4, w);
  std::vector<std::vector<float>> x = {space.features({}), space.features({1})};
  auto prior = std::make_shared<TrainingSet>();
  prior->add_kernel("won like this one", x, {2.0, 1.0}, 1, "3,2,2,");
  prior->add_kernel("won by opts illegal here", x, {2.0, 1.0}, 1, "7,7,");
  ASSERT_EQ(space.cost(*space.parse("3,2,2,")), space.optimum());
  CountingCost cost(space);
  const SearchResult r = run_search(*make_model_search({.prior = prior}), space, cost, {});
  EXPECT_EQ(candidates_to(r, space.optimum()), 2);
  EXPECT_FALSE(cost.repeated);
}

// A step measures its share of the pool of children, rounded up, and never more than top_k.
TEST(ModelSearch, AStepMeasuresItsShareOfThePoolAtMostTopK) {
  SeparableSpace space = fixed_space();  // the root has 12 children
  CountingCost quarter(space), all(space);
  run_search(*make_model_search({.seed = 1, .top_k = 4, .top_fraction = 0.25}), space, quarter, {});
  run_search(*make_model_search({.seed = 1, .top_k = 4, .top_fraction = 1}), space, all, {});
  ASSERT_GE(quarter.batches.size(), 3u);
  EXPECT_EQ(quarter.batches[0], 1u);  // the root; no prior, so no transplants
  EXPECT_EQ(quarter.batches[1], 3u);  // a quarter of 12
  EXPECT_EQ(all.batches[1], 4u);      // all 12, but at most top_k
  for (size_t b : quarter.batches) EXPECT_LE(b, 4u);
}

// States of one identity are measured once, and states of equal features are not: here knob 0
// only renames a state (its settings cost alike and share an identity, as opts in another order
// that build one kernel do), and knob 1 is invisible to the features (as which of two alike axes
// an UPCAST takes is), yet its best setting decides the optimum.
TEST(ModelSearch, MeasuresEachIdentityOnceAndStatesOfEqualFeaturesApart) {
  struct TwinsAndBlindSpot : SeparableSpace {
    using SeparableSpace::SeparableSpace;
    std::string identity(const Path& state) override {
      std::vector<int> s = setting(state);
      s[0] = 0;
      std::string id;
      for (int v : s) id += std::to_string(v) + ",";
      return id;
    }
    std::vector<float> features(const Path& state) override {
      std::vector<float> f = SeparableSpace::features(state);
      f[0] = f[1] = 0;
      return f;
    }
  };
  TwinsAndBlindSpot space(3, 4, {{0, 0, 0, 0}, {9, 6, 0, 8}, {6, 6, 4, 9}});
  struct Recording : CostFunction {
    TwinsAndBlindSpot& space;
    std::set<std::string> identities;
    std::set<std::vector<float>> features;
    bool twins = false;
    explicit Recording(TwinsAndBlindSpot& s) : space(s) {}
    std::vector<double> evaluate(const std::vector<Path>& batch, std::optional<double>) override {
      std::vector<double> out;
      for (const Path& p : batch) {
        twins |= !identities.insert(space.identity(p)).second;
        features.insert(space.features(p));
        out.push_back(space.cost(p));
      }
      return out;
    }
  } cost(space);
  const SearchResult r =
      run_search(*make_model_search({.seed = 2, .top_k = 4, .top_fraction = 1, .patience = 20}), space, cost, {});
  EXPECT_FALSE(cost.twins);
  EXPECT_LT(cost.features.size(), r.history.size());  // some states it measured look alike
  ASSERT_TRUE(r.best.has_value());
  EXPECT_EQ(r.best->cost, space.optimum());  // knob 1 at 2, which the features cannot see
}

TEST(Strategies, OneLessLeavesOutEachActionWhoseRestStaysReachable) {
  SeparableSpace space = fixed_space();  // a knob can be set once
  EXPECT_TRUE(one_less(space, {}).empty());
  const Path three = *space.parse("1,0,2,3,");
  std::vector<std::string> keys;
  for (const Path& p : one_less(space, three)) keys.push_back(space.key(p));
  EXPECT_EQ(keys, (std::vector<std::string>{"0,0,2,3,", "1,0,0,3,", "1,0,2,0,"}));
  // An action legal only after another: leaving out the first leaves the second illegal.
  struct Ordered : SeparableSpace {
    using SeparableSpace::SeparableSpace;
    std::vector<int> actions(const Path& state) override {  // knob 1 only once knob 0 is set
      std::vector<int> legal;
      for (int a : SeparableSpace::actions(state))
        if (a / values != 1 || setting(state)[0] != 0) legal.push_back(a);
      return legal;
    }
  } ordered(2, 4, {{0, 1, 2, 3}, {0, 1, 2, 3}});
  const Path both = *ordered.parse("2,3,");
  ASSERT_EQ(both.size(), 2u);
  EXPECT_TRUE(reachable(ordered, both));
  EXPECT_FALSE(reachable(ordered, {both[1]}));
  const std::vector<Path> less = one_less(ordered, both);
  ASSERT_EQ(less.size(), 1u);
  EXPECT_EQ(ordered.key(less[0]), "2,0,");
}

// A transplanted winner one opt too deep: knobs 0 and 1 at 3 pay only together (each alone is
// slower than the root), and its knob 2 costs more than knob 2 unset. It has no children (a knob
// is set once), and no child of the root is the optimum, so after one step without progress
// (patience 1) the sweep finds it, as the transplant less one opt; without that the sweep has
// nothing to try and the search ends at the transplant. The prior knows the law from another
// kernel of the kind, and a winner of a third.
TEST(ModelSearch, TheSweepTriesTheBestLessOneOfItsOpts) {
  struct PairThenMore : SeparableSpace {
    PairThenMore() : SeparableSpace(3, 4, {{0, 3, 3, 1}, {0, 3, 3, 1}, {0, 2, 2, 2}}) {}
    double cost(const Path& state) const override {
      const std::vector<int> s = setting(state);
      return s[0] == 3 && s[1] == 3 ? 1 + s[2] : 10 + SeparableSpace::cost(state);
    }
  } space, seen;
  seen.scale = 100;
  const Path transplant = *space.parse("3,3,1,");
  ASSERT_TRUE(space.actions(transplant).empty());
  ASSERT_EQ(space.cost(*space.parse("3,3,0,")), 1);
  const auto prior = walks_of(seen, 400, 3);  // another kernel of the kind, at 100x the time
  prior->add_kernel("won by 3,3,1,", {space.features({}), space.features(transplant)}, {20.0, 2.0}, 1, "3,3,1,");
  CountingCost cost(space);
  const SearchResult r =
      run_search(*make_model_search({.seed = 1, .top_k = 1, .patience = 1, .prior = prior}), space, cost, {});
  ASSERT_TRUE(r.best.has_value());
  EXPECT_EQ(r.best->key, "3,3,0,");
  EXPECT_EQ(candidates_to(r, 1), 4);  // the root, the transplant, one step, the sweep
  ASSERT_GE(cost.batches.size(), 4u);
  EXPECT_EQ(cost.batches[3], 1u);  // the sweep: no children of any kind, one state of one opt less
  EXPECT_FALSE(cost.repeated);
}

// CountingCost, but the root is stopped past the stop line (tune's measure.hpp), as an unoptimized
// kernel often is: its cost is +inf.
struct StoppedRoot : CountingCost {
  using CountingCost::CountingCost;
  std::vector<double> evaluate(const std::vector<Path>& batch, std::optional<double> bar) override {
    std::vector<double> out = CountingCost::evaluate(batch, bar);
    for (size_t i = 0; i < batch.size(); i++)
      if (batch[i].empty()) out[i] = INFINITY;
    return out;
  }
};

// BEAM and the model search still grow from a stopped root; the model search ended at the root.
TEST(ModelSearch, ARootStoppedPastTheLineIsStillSearchedFrom) {
  SeparableSpace space = fixed_space();
  StoppedRoot beam_cost(space), model_cost(space);
  const SearchResult beam = run_search(*make_beam({.width = 2}), space, beam_cost, {});
  const SearchResult model = run_search(*make_model_search({.seed = 1}), space, model_cost, {});
  ASSERT_TRUE(beam.best && model.best);
  EXPECT_LT(model.best->cost, space.cost({}));
  EXPECT_GT(model.history.size(), 1u + 3u);  // the root, then more than one step of its children
  EXPECT_EQ(beam.best->cost, space.optimum());
}

// A root stopped past the line, then transplanted winners that set every knob (no children):
// the search went on from none of them and ended at the transplant (on a dataset kernel, 3
// candidates, 6x BEAM's best). The root stays a parent while it has no time.
TEST(ModelSearch, GoesOnFromAStoppedRootWhenTheTransplantsAreDeadEnds) {
  SeparableSpace space(3, 4, {{9, 3, 7, 1}, {2, 8, 0, 5}, {6, 6, 4, 9}});
  const Path dead_end = *space.parse("1,1,1,");
  ASSERT_TRUE(space.actions(dead_end).empty());
  auto prior = std::make_shared<TrainingSet>();
  prior->add_kernel("won by every knob", {space.features({}), space.features(dead_end)}, {2.0, 1.0}, 1, "1,1,1,");
  StoppedRoot cost(space);
  const SearchResult r = run_search(*make_model_search({.seed = 1, .prior = prior}), space, cost, {});
  ASSERT_TRUE(r.best);
  EXPECT_GT(r.history.size(), 2u);  // the root and the transplant, then the root's children
  EXPECT_LT(r.best->cost, space.cost(dead_end));
  EXPECT_FALSE(cost.repeated);
}

// Four transplanted winners, each setting every knob (no children), all faster than the root:
// the four best parents have nothing unseen, so a step grows from the slower root instead of
// ending the search there.
TEST(ModelSearch, GrowsFromSlowerParentsWhenTheBestHaveNoUnseenChildren) {
  SeparableSpace space(3, 4, {{9, 3, 7, 1}, {9, 8, 0, 5}, {9, 6, 4, 2}});
  auto prior = std::make_shared<TrainingSet>();
  for (const std::string winner : {"1,1,1,", "2,2,2,", "3,3,3,", "1,2,3,"}) {
    const Path p = *space.parse(winner);
    ASSERT_TRUE(space.actions(p).empty());
    ASSERT_LT(space.cost(p), space.cost({}));
    prior->add_kernel("won by " + winner, {space.features({}), space.features(p)}, {2.0, 1.0}, 1, winner);
  }
  CountingCost cost(space);
  const SearchResult r = run_search(*make_model_search({.seed = 1, .transplants = 4, .prior = prior}), space, cost, {});
  EXPECT_GT(r.history.size(), 5u);  // the root and the four transplants, then the root's children
  EXPECT_FALSE(cost.repeated);
}

// Two basins behind the first knob, as the two tensor cores of b8192771da79: its setting 1 leads
// to states of 4-5 (of the root's 10), its setting 2 costs 12 alone but 1 with knob 1 at 1, the
// optimum. Every other knob waits for knob 0. The search settles under setting 1, and once the
// root is no longer among its four best parents nothing leads to setting 2; a restart starts again
// under it, the one child of the root the first basin's best does not begin with.
struct TwoBasinSpace : SeparableSpace {
  TwoBasinSpace() : SeparableSpace(3, 3, {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}) {}
  std::vector<int> actions(const Path& state) override {
    if (setting(state)[0] == 0) return state.empty() ? std::vector<int>{1, 2} : std::vector<int>{};
    return SeparableSpace::actions(state);
  }
  double cost(const Path& state) const override {
    const std::vector<int> s = setting(state);
    if (s[0] == 1) return scale * (5 - 0.5 * (s[1] > 0) - 0.5 * (s[2] > 0));
    if (s[0] == 2) return scale * (s[1] == 1 ? 1 : s[1] == 0 ? 12 : 11);
    return scale * 10;
  }
};

TEST(ModelSearch, ARestartSearchesTheBasinTheFirstOneLeftBehind) {
  TwoBasinSpace seen, unseen;
  seen.scale = 100;
  const auto prior = walks_of(seen, 400, 3);
  const Path gateway = {2}, optimum = *unseen.parse("2,1,0,");
  ASSERT_EQ(unseen.cost(optimum), 1);
  CountingCost once_cost(unseen), again_cost(unseen);
  const SearchResult once = run_search(*make_model_search({.restarts = 0, .prior = prior}), unseen, once_cost, {});
  const SearchResult again = run_search(*make_model_search({.restarts = 1, .prior = prior}), unseen, again_cost, {});
  ASSERT_TRUE(once.best && again.best);
  EXPECT_EQ(once.best->cost, 4) << "without a restart, the first basin's best";
  EXPECT_TRUE(std::ranges::none_of(once.history, [&](const Evaluated& e) { return e.path == gateway; }))
      << "the slow gateway was measured without a restart";
  EXPECT_EQ(again.best->cost, 1);
  // The restart comes after the first basin ended, so everything before it is the same search.
  ASSERT_GT(again.history.size(), once.history.size());
  EXPECT_EQ(keys_of(again).at(once.history.size()), unseen.key(gateway));
  EXPECT_FALSE(again_cost.repeated);
}

// A time of zero (a kernel under the timer's resolution) has no log time, so the model leaves it
// out as TrainingSet does. It once threw at the second measurement: with no prior there was
// nothing to fit ("nothing to train on"), with one the prior's predictions outnumbered the rows.
struct ZeroRootSpace : SeparableSpace {
  ZeroRootSpace() : SeparableSpace(fixed_space()) {}
  double cost(const Path& state) const override { return state.empty() ? 0 : SeparableSpace::cost(state); }
};

TEST(ModelSearch, TimesOfZeroAreLeftOutOfItsFits) {
  SeparableSpace zeros = fixed_space();
  zeros.scale = 0;
  CountingCost zero_cost(zeros);
  const SearchResult r = run_search(*make_model_search({}), zeros, zero_cost, {});
  EXPECT_GT(r.history.size(), 2u);  // a seeded random order: nothing to learn from
  EXPECT_FALSE(zero_cost.repeated);

  SeparableSpace seen = fixed_space();
  const auto prior = walks_of(seen, 100, 4);
  ZeroRootSpace zero_root;
  CountingCost cost(zero_root);
  const SearchResult z = run_search(*make_model_search({.prior = prior}), zero_root, cost, {});
  EXPECT_GT(z.history.size(), 2u);
  EXPECT_EQ(z.best->cost, 0);
}

TEST(ModelSearch, BadParametersAreRefused) {
  EXPECT_THROW(make_model_search({.top_k = 0}), std::invalid_argument);
  EXPECT_THROW(make_model_search({.top_fraction = 0}), std::invalid_argument);
  EXPECT_THROW(make_model_search({.transplants = -1}), std::invalid_argument);
  EXPECT_THROW(make_model_search({.lookahead = -1}), std::invalid_argument);
  EXPECT_THROW(make_model_search({.restarts = -1}), std::invalid_argument);
  EXPECT_THROW(make_model_search({.sweep = -1}), std::invalid_argument);
  EXPECT_THROW(make_model_search({.ahead_width = 0}), std::invalid_argument);
  EXPECT_THROW(make_model_search({.model = "forest"}), std::invalid_argument);
}

}  // namespace
}  // namespace tunebed::search
