// How well a cost model ranks stored candidates (search/ranking.hpp), with models whose order is
// known: the machine's own, its reverse, and one that ties.
#include "search/ranking.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <stdexcept>

#include "search/strategy.hpp"

namespace tunebed::search {
namespace {

// States named by one letter each; a state's one feature is its letter's code.
struct Letters : SearchSpace {
  std::vector<int> actions(const Path& p) override { return p.empty() ? std::vector<int>{'a', 'b', 'c'} : std::vector<int>{}; }
  std::string key(const Path& p) override { return p.empty() ? "" : std::string(1, static_cast<char>(p[0])); }
  std::vector<float> features(const Path& p) override { return {p.empty() ? 0.0f : static_cast<float>(p[0])}; }
  std::optional<Path> parse(const std::string& key) override {
    if (key.size() != 1 || key[0] == 'z') return std::nullopt;  // z: not legal here
    return Path{key[0]};
  }
};

// Scores each state by a table of its letter.
struct TableModel : CostModel {
  std::map<char, float> score;
  std::string name() const override { return "table"; }
  void fit(const TrainingSet&) override {}
  std::vector<float> predict(const std::vector<float>& x) const override {
    std::vector<float> out;
    for (float f : x) out.push_back(score.at(static_cast<char>(f)));
    return out;
  }
};

const StoredCosts kCosts = {{"a", 3e-6}, {"b", 1e-6}, {"c", 2e-6}, {"d", 4e-6}, {"e", 5e-6}, {"f", 6e-6}};

TEST(Ranking, AModelInTheMachinesOrderPicksTheBestFirst) {
  Letters space;
  TableModel model;
  for (const auto& [key, seconds] : kCosts) model.score[key[0]] = static_cast<float>(seconds * 1e6);
  const Ranking r = rank_stored(model, space, kCosts);
  EXPECT_EQ(r.ranked, 6);
  EXPECT_EQ(r.best, 1e-6);
  EXPECT_EQ(r.first, 1e-6);
  EXPECT_EQ(r.top5, 1e-6);
  EXPECT_EQ(r.best_rank, 1);
  EXPECT_DOUBLE_EQ(r.spearman, 1);
}

TEST(Ranking, AReversedModelPicksTheWorstAndFindsTheBestLast) {
  Letters space;
  TableModel model;
  for (const auto& [key, seconds] : kCosts) model.score[key[0]] = static_cast<float>(-seconds * 1e6);
  const Ranking r = rank_stored(model, space, kCosts);
  EXPECT_EQ(r.first, 6e-6);
  EXPECT_EQ(r.top5, 2e-6);  // its first five leave out only the best
  EXPECT_EQ(r.best_rank, 6);
  EXPECT_DOUBLE_EQ(r.spearman, -1);
}

// A failed candidate has no time to rank, and one illegal in the space no features.
TEST(Ranking, OnlyCorrectLegalCandidatesAreRankedAndTiesAreAveraged) {
  Letters space;
  TableModel model;
  model.score = {{'a', 0}, {'b', 1}, {'c', 1}};
  const StoredCosts costs = {{"a", 1e-6}, {"b", 2e-6}, {"c", 3e-6}, {"y", INFINITY}, {"z", 0.5e-6}};
  const Ranking r = rank_stored(model, space, costs);
  EXPECT_EQ(r.ranked, 3);
  EXPECT_EQ(r.best, 1e-6);  // not z's: z is not a state of this space
  EXPECT_EQ(r.first, 1e-6);
  // Score ranks 1, 2.5, 2.5 against time ranks 1, 2, 3: covariance 1.5 over sqrt(1.5 * 2).
  EXPECT_DOUBLE_EQ(r.spearman, 1.5 / std::sqrt(1.5 * 2));
  // One candidate, or a model that scores all alike, has no correlation.
  EXPECT_TRUE(std::isnan(rank_stored(model, space, {{"a", 1e-6}}).spearman));
  model.score = {{'a', 7}, {'b', 7}, {'c', 7}};
  const Ranking flat = rank_stored(model, space, costs);
  EXPECT_TRUE(std::isnan(flat.spearman));
  EXPECT_EQ(flat.first, 1e-6);  // ties keep the opts' order
}

TEST(Ranking, NothingCorrectToRankIsAnError) {
  Letters space;
  TableModel model;
  EXPECT_THROW(rank_stored(model, space, {{"a", INFINITY}, {"z", 1e-6}}), std::invalid_argument);
}

}  // namespace
}  // namespace tunebed::search
