// A tuning database's measurements as the search uses them offline: per kernel and device, what
// each opts string cost (for replay, replay.hpp) and the cost model's training set
// (cost_model.hpp). Only kernels with a winner under this tunebed's action space count: their
// opts mean the same actions here.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/ir/uop.hpp"
#include "results/tuning_db.hpp"
#include "search/cost_model.hpp"
#include "search/kernel_space.hpp"
#include "search/replay.hpp"

namespace tunebed::search {

struct StoredKernel {
  std::string hash, device;  // device: its --device name, "cpu"
  results::Device fingerprint;  // the device's, with its id: only its measurements count
  UOp ast;
  // Per opts, the median of the correct runs' medians of the kernel it makes, else +inf. Not
  // their lowest: that would favour the states measured most often (BEAM's path, which other runs
  // revisit) with their luckiest draw, and bias a replay's target against a strategy that goes
  // elsewhere. The kernel is its source: opts applied in another order that render the same
  // source are one kernel, and pool their runs.
  StoredCosts costs;
  // Per opts, the wall seconds its measurement took: compile time plus the timed samples.
  std::map<std::string, double> wall_s;
  std::string winner;  // the opts the database serves for it (TuningDb::best)
};

// Every kernel of DB with a winner under OPTIONS' action space, on every device, or only those
// that FILTER keeps (a kernel hash prefix, a device id).
std::vector<StoredKernel> stored_kernels(results::TuningDb& db, const results::Filter& filter = {},
                                         const ActionSpaceOptions& options = {});

// The cost model's rows of KERNELS measured on DEVICE (by its fingerprint: another machine's
// "cpu", merged into the same database, times other hardware): each candidate's kernel_features
// and time. Opts that are not legal in the action space any more are skipped.
TrainingSet training_set(const std::vector<StoredKernel>& kernels, const results::Device& device,
                         const ActionSpaceOptions& options = {});

}  // namespace tunebed::search
