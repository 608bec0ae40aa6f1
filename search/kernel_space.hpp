// KernelSpace: the search space of a real kernel. A state is the list of opts applied to the
// unoptimized Kernel; an action id is an index into core/opt's search_actions() (tinygrad's
// default action list, NOLOCALS, and tunebed's THREAD); the legal actions at a state are those
// core/opt's kernel_actions finds legal, narrowed by ActionSpaceOptions.
//
// The action-space version names exactly which actions and caps a winner was found with: the
// tuning database keys its cache by it, so changing the list or a cap never serves a winner
// from a different space. It is "actions-" and 16 hex digits of a hash of the action list's text
// and the caps.
//
// Kernel is only declared here: a caller that holds a KernelSpace need not parse core/opt's
// kernel.hpp.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/opt/opt.hpp"
#include "search/strategy.hpp"

namespace tunebed {
class Kernel;
}

namespace tunebed::search {

struct ActionSpaceOptions {
  // The OptOps the search may use; empty means all of them. THREAD applies only where the
  // kernel's Renderer has threads (the CPU), TC only where it has tensor cores.
  std::vector<OptOps> ops;
  // At most tinygrad's BEAM_UPCAST_MAX / BEAM_LOCAL_MAX (256 and 1024), which core/opt's
  // kernel_actions already enforces; lower values narrow the space further.
  int64_t max_upcast = 256;
  int64_t max_local = 1024;
};

// Throws std::invalid_argument naming a cap out of range.
std::string action_space_version(const ActionSpaceOptions& options);

class KernelSpace : public SearchSpace {
 public:
  KernelSpace(const Kernel& root, ActionSpaceOptions options = {});
  ~KernelSpace() override;

  std::vector<int> actions(const Path& state) override;
  std::string key(const Path& state) override;  // the opts string, "UPCAST:0:4,UNROLL:0:4"
  // The optimized AST less the opts that named it, and the axis types: what the renderer gets.
  std::string identity(const Path& state) override;
  std::vector<float> features(const Path& state) override;  // kernel_features (features.hpp)

  const std::string& version() const { return version_; }
  std::vector<Opt> opts(const Path& state) const;
  // The path of an opts string; nullopt if an opt is not among the space's actions or the
  // sequence is not legal on this kernel.
  std::optional<Path> parse(const std::string& opts) override;
  std::string kind(int action) override;  // the OptOp's name, "UPCAST"
  // The root kernel with STATE's opts applied (KernelOptError if they are not legal).
  const Kernel& kernel(const Path& state);

 private:
  ActionSpaceOptions options_;
  std::string version_;
  std::map<Path, std::unique_ptr<Kernel>> kernels_;  // every state met so far
  std::map<Path, std::vector<int>> actions_;
};

}  // namespace tunebed::search
