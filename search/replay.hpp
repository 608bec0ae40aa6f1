// Offline replay: a strategy run against the stored measurements of a finished run, with no
// compiling and no timing (Kernel Tuner's and KTT's simulation mode), so that strategies can be
// compared on many kernels in seconds.
//
// The space is the kernel's real action space (core/opt computes legality; it is not stored).
// The cost of a state is what the database measured for its opts on the device: an ok
// candidate's median, +inf for one that failed. A state the stored run never measured has no
// cost: the strategy sees +inf (it learns nothing from it) and the step counts as missing, so a
// replay is only as faithful as the data's coverage, which it reports. Data made by
// `tunebed tune --exhaustive` covers everything a strategy can reach within its budget and depth;
// `tunebed replay --fill` measures what a replay found missing and replays again.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "search/strategy.hpp"

namespace tunebed::search {

using StoredCosts = std::map<std::string, double>;  // opts string -> seconds; +inf: it failed

struct ReplayStep {
  std::string opts;
  std::optional<double> cost;  // none: not in the stored data (missing)
  double best_so_far = 0;      // +inf until a correct candidate is met
};

struct ReplayResult {
  std::vector<ReplayStep> steps;  // every candidate the strategy proposed, in order
  int64_t missing = 0;
  std::vector<std::string> missing_opts;  // each missing state's opts once, in the order proposed
  double best_stored = 0;  // the lowest stored cost: what the strategy is measured against
  // The opts of the first step that found the best correct time; none if no step did.
  std::optional<std::string> best_opts() const;
  // How many candidates the strategy needed to reach SECONDS; none if it never did.
  std::optional<int64_t> candidates_to(double seconds) const;
  // ... to come within FRACTION of best_stored (0.05: 5%).
  std::optional<int64_t> candidates_to_within(double fraction) const { return candidates_to((1 + fraction) * best_stored); }
};

// Throws std::invalid_argument when COSTS holds no correct candidate: there is nothing to reach.
ReplayResult replay(Strategy& strategy, SearchSpace& space, const StoredCosts& costs, int64_t budget);

}  // namespace tunebed::search
