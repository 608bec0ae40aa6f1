// Tuned results in use: the opts each kernel runs with when a tuning database has a winner for it
// (tinygrad's BEAM cache, which every later realize reads).
//
// A kernel is looked up by exactly the keys tune() stores its winner under (tune.hpp, step 2):
// the hash of its AST (KernelInfo stripped), the device's fingerprint, and the version of the
// action space `tunebed tune` searches (search/kernel_space.hpp). What is found is applied, with
// core/opt's legality checks; anything else runs the optimizer's default opts and says why:
//
//   tuned     the stored winner's opts
//   default   the kernel has no winner on this device; or only under another action space
//             (stale: this tunebed searches a different space, so the winner is not served, as
//             tune()'s cache would not serve it); or the stored opts are not legal here (a
//             renderer with other limits than the tuner's)
//
// The winner is not re-verified here: tune() verified it against the AST interpreter when it
// was found and re-verifies it on every cache hit; `tunebed run --check` checks the run itself.
#pragma once

#include <memory>
#include <string>

#include "core/engine/compiled_backend.hpp"
#include "core/engine/compiled_kernel.hpp"
#include "results/tuning_db.hpp"
#include "search/kernel_space.hpp"

namespace tunebed::search {

struct TunedChoice {
  KernelOpts opts;
  bool tuned = false;
  // tuned: "run 3f2a9c01, 12.3 us when tuned"; default: why not, "not tuned on this device", ...
  std::string why;
};

class TunedOpts {
 public:
  // Opens DB_PATH read-only (results::DbError if it is not a tuning database at the current
  // schema); DEVICE and RENDERER are what the kernels will run on and be rendered for.
  TunedOpts(const std::string& db_path, const Device& device, Renderer renderer, ActionSpaceOptions space = {});

  TunedChoice choose(const UOp& ast);
  const std::string& action_space_version() const { return version_; }

 private:
  results::TuningDb db_;
  results::Device fingerprint_;
  Renderer renderer_;
  std::string version_;
};

// The variable that points Tensor::realize at a tuning database (docs/ENVIRONMENT.md).
inline constexpr const char* kTunedDbVariable = "TUNEBED_TUNED_DB";

// The compiled backend as a program installs it: the optimizer's default opts for every kernel,
// or, with TUNEBED_TUNED_DB naming a tuning database, each kernel's stored winner (TunedOpts;
// a database that cannot be opened throws results::DbError naming the variable). CHOICES, when
// given, receives each kernel's choice as it is made.
std::shared_ptr<CompiledBackend> make_compiled_backend(
    std::shared_ptr<Device> device, std::function<void(const TunedChoice&)> choices = {});

}  // namespace tunebed::search
