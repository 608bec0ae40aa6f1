// Launch dimensions of a GPU kernel, as tinygrad's codegen/gpudims.py: the GLOBAL axes become
// work-group ids (SPECIAL gidxN) and the LOCAL and GROUP_REDUCE axes work-item ids (lidxN), fitted
// to the target's three launch dimensions and their maximum sizes (the Renderer record). Under
// NOLOCALS the GLOBAL axes become global ids (idxN) and every group is one work-item.
//
// The GLOBAL axes are taken innermost first (gidx0 is the last GLOBAL axis), so that neighbouring
// work-groups touch neighbouring memory; the local axes keep their order. When there are more
// axes than dimensions, or an axis is larger than its dimension allows, adjacent axes merge into
// one id, and each axis is recovered from it by div and mod, the first axis of a merge fastest:
//
//   GLOBAL axes (2, 3, 4, 5) on a 3-dim target:  reversed (5, 4, 3, 2)  merged (20, 3, 2)
//   gidx0 (20) covers axes 3 and 2:  axis 3 = gidx0 % 5,  axis 2 = gidx0 / 5
//
// Unlike tinygrad, an axis too large for every dimension is not split: the kernel is refused.
#include <algorithm>

#include "core/codegen/passes.hpp"

namespace tunebed::codegen_detail {

namespace {

struct Grouped {
  std::vector<UOp> idxs;    // per input dim, its id expression
  std::vector<sint> sizes;  // per launch dimension used
};

// tinygrad's get_grouped_dims: ids named prefix0, prefix1, ... for `dims`.
Grouped grouped_dims(const std::string& prefix, std::vector<sint> dims,
                     const std::optional<std::array<int64_t, 3>>& max_sizes, bool reverse) {
  if (reverse) std::reverse(dims.begin(), dims.end());
  // Which input dims each launch dimension covers, first fastest.
  std::vector<std::vector<size_t>> groups;
  std::vector<sint> sizes = dims;
  for (size_t i = 0; i < dims.size(); i++) groups.push_back({i});
  const bool all_int = std::all_of(dims.begin(), dims.end(), [](const sint& s) { return s.is_int(); });
  auto too_big = [&] {
    if (sizes.size() > 3) return true;
    if (!max_sizes || !all_int) return false;
    for (size_t i = 0; i < sizes.size(); i++)
      if (sizes[i].to_int() > (*max_sizes)[i]) return true;
    return false;
  };
  while (too_big()) {
    bool merged = false;
    for (size_t i = 0; all_int && i + 1 < sizes.size() && i < 3; i++) {
      const int64_t product = sizes[i].to_int() * sizes[i + 1].to_int();
      if (max_sizes && product > (*max_sizes)[i]) continue;
      sizes[i] = product;
      sizes.erase(sizes.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      groups[i].insert(groups[i].end(), groups[i + 1].begin(), groups[i + 1].end());
      groups.erase(groups.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      merged = true;
      break;
    }
    if (!merged)
      throw CodegenError("launch dims " + to_string(dims) + " (" + prefix +
                         ") do not fit the target's three dimensions and their limits");
  }
  Grouped out;
  out.idxs.resize(dims.size());
  for (size_t g = 0; g < groups.size(); g++) {
    UOp id = UOp::make(Ops::SPECIAL, dtypes::index, {},
                       Arg::tuple({Arg(prefix + std::to_string(g)), to_arg(sizes[g])}));
    for (size_t k = 0; k + 1 < groups[g].size(); k++) {
      const UOp size = dims[groups[g][k]].to_uop();
      out.idxs[groups[g][k]] = id % size;
      id = id / size;
    }
    out.idxs[groups[g].back()] = id;
  }
  out.sizes = sizes;
  if (reverse) std::reverse(out.idxs.begin(), out.idxs.end());
  return out;
}

}  // namespace

LaunchPlan plan_launch(const KernelInfo& info, const SymShape& full_shape, const Renderer& renderer) {
  LaunchPlan plan;
  plan.axis_idx.resize(info.axis_types.size());
  if (!renderer.has_local) return plan;
  if (full_shape.size() != info.axis_types.size())
    throw CodegenError("kernel has " + std::to_string(full_shape.size()) + " axes but KernelInfo gives " +
                       std::to_string(info.axis_types.size()) + " axis types");
  std::vector<size_t> global_axes, local_axes;
  std::vector<sint> global_shape, local_shape;
  for (size_t i = 0; i < info.axis_types.size(); i++) {
    const AxisType t = info.axis_types[i];
    if (t == AxisType::GLOBAL) {
      global_axes.push_back(i);
      global_shape.push_back(full_shape[i]);
    } else if (t == AxisType::LOCAL || t == AxisType::GROUP_REDUCE) {
      local_axes.push_back(i);
      local_shape.push_back(full_shape[i]);
    }
  }
  if (info.dont_use_locals && !local_axes.empty())
    throw CodegenError("kernel has LOCAL or GROUP_REDUCE axes but NOLOCALS was applied");
  auto place = [&](const std::vector<size_t>& axes, const Grouped& g, std::array<sint, 3>& dims) {
    for (size_t k = 0; k < axes.size(); k++) plan.axis_idx[axes[k]] = g.idxs[k];
    for (size_t d = 0; d < g.sizes.size(); d++) dims[d] = g.sizes[d];
  };
  place(global_axes,
        grouped_dims(info.dont_use_locals ? "idx" : "gidx", global_shape, renderer.global_max, true),
        plan.global);
  place(local_axes, grouped_dims("lidx", local_shape, renderer.local_max, false), plan.local);
  return plan;
}

}  // namespace tunebed::codegen_detail
