// How well a cost model ranks a kernel's stored candidates, with no search: every correct
// candidate the database holds for the kernel, ordered by the model, against their stored times.
//
// A replay (replay.hpp) judges a model through the path its strategy took, so one early ranking
// changes everything after it, and counts of kernels reached move by several between databases
// made the same way. This judges every stored candidate at once: the stored time of the model's
// favourite and of the best of its first five, and where the best stands in its order. It is the
// figure to compare two models, or two settings of one, on; a replay says what a search with the
// model then costs. The model must not have been trained on the kernel (TrainingSet::without).
#pragma once

#include <cstdint>

#include "search/cost_model.hpp"
#include "search/replay.hpp"

namespace tunebed::search {

struct Ranking {
  int64_t ranked = 0;     // the stored correct candidates legal in the space
  double best = 0;        // the lowest stored time among them (seconds)
  double first = 0;       // the stored time of the model's favourite
  double top5 = 0;        // the lowest stored time among its first five
  int64_t best_rank = 0;  // where the best stands in the model's order, from 1
  // Spearman's rank correlation of the model's scores with the stored times (ties averaged): 1
  // when it orders them as the machine did. NaN with fewer than two candidates, or with every
  // score or every time equal.
  double spearman = 0;
};

// Throws std::invalid_argument when no stored candidate of COSTS is correct and legal in SPACE.
Ranking rank_stored(const CostModel& model, SearchSpace& space, const StoredCosts& costs);

}  // namespace tunebed::search
