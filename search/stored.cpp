#include "search/stored.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/ir/text.hpp"
#include "core/opt/kernel.hpp"
#include "search/measure.hpp"

namespace tunebed::search {

std::vector<StoredKernel> stored_kernels(results::TuningDb& db, const results::Filter& filter,
                                         const ActionSpaceOptions& options) {
  const std::string version = action_space_version(options);
  std::vector<StoredKernel> out;
  for (const results::BestRow& w : db.best(filter)) {
    if (w.action_space_version != version) continue;
    const int64_t id = db.resolve_kernel(w.kernel_hash);
    StoredKernel k{w.kernel_hash,
                   w.device,
                   {w.device_id, w.device, w.arch, w.driver, w.compiler, w.compiler_version},
                   parse_uop(db.kernel(id).ast),
                   {},
                   {},
                   w.opts};
    // The kernel each opts makes: its source, or the opts themselves where it never rendered. A
    // source measured under several opts (the same kernel by another order) pools their runs.
    std::map<std::string, std::string> kernel_of;
    std::map<std::string, std::vector<double>> medians;  // per kernel, of its correct runs
    for (const results::CandidateRow& c : db.history(id)) {
      if (c.device_id != w.device_id) continue;
      const std::string& made = kernel_of.try_emplace(c.opts, c.source_hash.empty() ? "opts:" + c.opts : c.source_hash)
                                    .first->second;
      std::vector<double>& m = medians[made];
      if (c.status == results::CandidateStatus::ok && c.median_us) m.push_back(*c.median_us * 1e-6);
      const double wall = c.compile_ms.value_or(0) * 1e-3 +
                          std::accumulate(c.samples_us.begin(), c.samples_us.end(), 0.0) * 1e-6;
      k.wall_s.try_emplace(c.opts, wall);
    }
    for (const auto& [opts, made] : kernel_of) {
      const std::vector<double>& m = medians[made];
      k.costs[opts] = m.empty() ? INFINITY : median(m);
    }
    out.push_back(std::move(k));
  }
  return out;
}

TrainingSet training_set(const std::vector<StoredKernel>& kernels, const results::Device& device,
                         const ActionSpaceOptions& options) {
  TrainingSet data;
  for (const StoredKernel& k : kernels) {
    if (!results::same_fingerprint(k.fingerprint, device)) continue;
    KernelSpace space(Kernel(k.ast, Renderer::for_device(k.device)), options);
    std::vector<std::vector<float>> x;
    std::vector<double> s;
    for (const auto& [opts, cost] : k.costs) {
      if (!std::isfinite(cost)) continue;
      const std::optional<Path> path = space.parse(opts);
      if (!path) continue;
      x.push_back(space.features(*path));
      s.push_back(cost);
    }
    data.add_kernel(k.hash, x, s, 1, k.winner);
  }
  return data;
}

}  // namespace tunebed::search
