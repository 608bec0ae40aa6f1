// Offline replay (search/replay.hpp): a strategy against stored costs proposes what it would have
// proposed against the machine, missing data is counted, and the 5% mark is found.
#include "search/replay.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "search/strategy.hpp"

namespace tunebed::search {
namespace {

// Three knobs of three settings; action 3d + v sets knob d to v (once). Cost: 10 - 3 * (knobs set
// to 2) - (knobs set to 1), so the optimum, 1, sets every knob to 2.
struct Knobs : SearchSpace {
  std::vector<int> setting(const Path& p) const {
    std::vector<int> s(3, 0);
    for (int a : p) s[static_cast<size_t>(a / 3)] = a % 3;
    return s;
  }
  std::vector<int> actions(const Path& p) override {
    std::vector<int> s = setting(p), out;
    for (int d = 0; d < 3; d++)
      if (s[static_cast<size_t>(d)] == 0) out.insert(out.end(), {3 * d + 1, 3 * d + 2});
    return out;
  }
  std::string key(const Path& p) override {
    std::string k;
    for (int v : setting(p)) k += std::to_string(v);
    return k;
  }
  static double cost_of(const std::string& key) {
    double c = 10;
    for (char v : key) c -= v == '2' ? 3 : v == '1' ? 1 : 0;
    return c;
  }
};

// Every one of the 27 settings, as an exhaustive run would store them.
StoredCosts all_costs() {
  StoredCosts costs;
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++)
      for (int c = 0; c < 3; c++) {
        const std::string key = std::to_string(a) + std::to_string(b) + std::to_string(c);
        costs[key] = Knobs::cost_of(key);
      }
  return costs;
}

TEST(Replay, ProposesWhatTheStrategyWouldAgainstTheRealCosts) {
  Knobs space;
  auto beam = make_beam({.width = 2});
  const ReplayResult r = replay(*beam, space, all_costs(), 100);
  EXPECT_EQ(r.missing, 0);
  EXPECT_EQ(r.best_stored, 1);
  ASSERT_FALSE(r.steps.empty());
  EXPECT_EQ(r.steps.back().best_so_far, 1);
  // The same strategy against a live cost function makes the same proposals.
  struct Live : CostFunction {
    Knobs& space;
    explicit Live(Knobs& s) : space(s) {}
    std::vector<double> evaluate(const std::vector<Path>& batch, std::optional<double>) override {
      std::vector<double> out;
      for (const Path& p : batch) out.push_back(Knobs::cost_of(space.key(p)));
      return out;
    }
  } live(space);
  auto again = make_beam({.width = 2});
  const SearchResult s = run_search(*again, space, live, {.candidates = 100});
  ASSERT_EQ(s.history.size(), r.steps.size());
  for (size_t i = 0; i < r.steps.size(); i++) EXPECT_EQ(s.history[i].key, r.steps[i].opts) << i;
  // The root (10), then its six children: 011-style settings cost 7; the first within 5% of 1 is
  // the optimum itself.
  const std::optional<int64_t> to5 = r.candidates_to_within(0.05);
  ASSERT_TRUE(to5);
  EXPECT_EQ(r.steps[static_cast<size_t>(*to5 - 1)].best_so_far, 1);
  EXPECT_GT(r.steps[static_cast<size_t>(*to5 - 2)].best_so_far, 1.05);
  EXPECT_EQ(r.best_opts(), "222");  // what --confirm re-times: the state that found the best
}

TEST(Replay, StatesNotStoredAreMissingAndNeverBest) {
  Knobs space;
  StoredCosts partial = all_costs();
  partial.erase("222");  // the optimum was never measured
  partial["000"] = INFINITY;  // and the root failed
  auto beam = make_beam({.width = 9});
  const ReplayResult r = replay(*beam, space, partial, 100);
  EXPECT_GT(r.missing, 0);
  EXPECT_EQ(r.best_stored, 3);  // 221 and its kind: 10 - 3 - 3 - 1
  for (const ReplayStep& s : r.steps)
    if (s.opts == "222") EXPECT_FALSE(s.cost.has_value());
  EXPECT_EQ(r.steps.front().best_so_far, INFINITY);
  EXPECT_TRUE(r.candidates_to_within(0.05));
  // The first state that found the best: a missing one is never it, and nor is a later twin.
  const std::optional<std::string> best = r.best_opts();
  ASSERT_TRUE(best);
  EXPECT_EQ(partial.at(*best), 3);
  for (const ReplayStep& s : r.steps) {
    if (s.opts == *best) break;
    EXPECT_NE(s.cost, std::optional<double>(3)) << s.opts;
  }
  EXPECT_FALSE(ReplayResult{}.best_opts());  // nothing proposed: no best
}

TEST(Replay, NoCorrectStoredCandidateIsRefused) {
  Knobs space;
  auto beam = make_beam({});
  EXPECT_THROW(replay(*beam, space, {{"000", INFINITY}}, 10), std::invalid_argument);
  EXPECT_THROW(replay(*beam, space, {}, 10), std::invalid_argument);
}

}  // namespace
}  // namespace tunebed::search
