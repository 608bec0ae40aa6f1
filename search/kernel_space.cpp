#include "search/kernel_space.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "core/ir/hash.hpp"
#include "core/opt/actions.hpp"
#include "core/opt/kernel.hpp"
#include "search/features.hpp"

namespace tunebed::search {

namespace {

constexpr int64_t kTinygradUpcastMax = 256, kTinygradLocalMax = 1024;

bool allowed(const ActionSpaceOptions& options, OptOps op) {
  return options.ops.empty() || std::ranges::find(options.ops, op) != options.ops.end();
}

int action_id(const Opt& opt) {
  const std::vector<Opt>& all = search_actions();
  auto it = std::ranges::find(all, opt);
  return it == all.end() ? -1 : static_cast<int>(it - all.begin());
}

}  // namespace

std::string action_space_version(const ActionSpaceOptions& options) {
  if (options.max_upcast < 1 || options.max_upcast > kTinygradUpcastMax)
    throw std::invalid_argument("max upcast must be in [1, 256], not " + std::to_string(options.max_upcast));
  if (options.max_local < 1 || options.max_local > kTinygradLocalMax)
    throw std::invalid_argument("max local must be in [1, 1024], not " + std::to_string(options.max_local));
  std::string text;
  for (const Opt& a : search_actions())
    if (allowed(options, a.op)) text += to_string(a) + ",";
  text += ";upcast<=" + std::to_string(options.max_upcast) + ";local<=" + std::to_string(options.max_local);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(hash_bytes(text)));
  return std::string("actions-") + buf;
}

KernelSpace::KernelSpace(const Kernel& root, ActionSpaceOptions options)
    : options_(std::move(options)), version_(action_space_version(options_)) {
  kernels_.emplace(Path{}, std::make_unique<Kernel>(root));
}

KernelSpace::~KernelSpace() = default;

const Kernel& KernelSpace::kernel(const Path& state) {
  if (auto it = kernels_.find(state); it != kernels_.end()) return *it->second;
  Path parent(state.begin(), state.end() - 1);
  auto k = std::make_unique<Kernel>(kernel(parent));
  k->apply_opt(search_actions().at(static_cast<size_t>(state.back())));
  return *kernels_.emplace(state, std::move(k)).first->second;
}

std::vector<int> KernelSpace::actions(const Path& state) {
  if (auto it = actions_.find(state); it != actions_.end()) return it->second;
  std::vector<int> ids;
  for (auto& [opt, child] : kernel_actions(kernel(state))) {
    if (!allowed(options_, opt.op)) continue;
    if (const UpcastAndLocal n = upcast_and_local(child); n.upcast > options_.max_upcast || n.local > options_.max_local)
      continue;
    int id = action_id(opt);
    Path next = state;
    next.push_back(id);
    kernels_.emplace(next, std::make_unique<Kernel>(std::move(child)));  // already applied: keep it
    ids.push_back(id);
  }
  std::ranges::sort(ids);
  return actions_[state] = ids;
}

std::vector<Opt> KernelSpace::opts(const Path& state) const {
  std::vector<Opt> out;
  for (int id : state) out.push_back(search_actions().at(static_cast<size_t>(id)));
  return out;
}

std::string KernelSpace::key(const Path& state) { return to_string(opts(state)); }

std::vector<float> KernelSpace::features(const Path& state) { return kernel_features(kernel(state)); }

std::string KernelSpace::identity(const Path& state) {
  const Kernel& k = kernel(state);
  std::ostringstream s;
  s << std::hex;
  const UOp ast = k.get_optimized_ast("identity");
  for (const UOp& u : ast.src()) s << u.hash() << ',';  // not the SINK's arg, which lists the opts
  for (AxisType t : k.axis_types()) s << static_cast<int>(t);
  s << (k.dont_use_locals() ? "n" : "");
  return s.str();
}

std::string KernelSpace::kind(int action) {
  return std::string(optops_name(search_actions().at(static_cast<size_t>(action)).op));
}

std::optional<Path> KernelSpace::parse(const std::string& text) {
  std::vector<Opt> opts;
  try {
    opts = parse_opts(text);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
  Path path;
  for (const Opt& opt : opts) {
    const int id = action_id(opt);
    if (id < 0) return std::nullopt;
    path.push_back(id);
  }
  // One of the space's states, caps and all: legal on the kernel is not enough (UPCAST past 256).
  if (!reachable(*this, path)) return std::nullopt;
  return path;
}

}  // namespace tunebed::search
