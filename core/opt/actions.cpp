// search_actions, kernel_actions and random_opts.
#include "core/opt/actions.hpp"

#include <algorithm>
#include <random>

namespace tunebed {

const std::vector<Opt>& search_actions() {
  static const std::vector<Opt> actions = [] {
    std::vector<Opt> a;
    for (int amt : {0, 2, 3, 4, 5, 7})
      for (int axis = 0; axis < 8; axis++) a.push_back({OptOps::UPCAST, axis, amt});
    for (int amt : {0, 4, 7})
      for (int axis = 0; axis < 5; axis++) a.push_back({OptOps::UNROLL, axis, amt});
    for (int amt : {2, 3, 4, 8, 13, 16, 29})
      for (int axis = 0; axis < 6; axis++) a.push_back({OptOps::LOCAL, axis, amt});
    for (int amt : {13, 16, 28, 29, 32, 49, 64, 256})
      for (int axis = 0; axis < 3; axis++) a.push_back({OptOps::GROUPTOP, axis, amt});
    for (int amt : {0, 4, 8, 16})
      for (int axis = 0; axis < 3; axis++) a.push_back({OptOps::GROUP, axis, amt});
    for (int axis = 0; axis < 7; axis++) a.push_back({OptOps::PADTO, axis, 32});
    a.push_back({OptOps::LOCAL, 0, 32});
    a.push_back({OptOps::LOCAL, 6, 2});
    a.push_back({OptOps::TC, 0, TCArg{-1, 0, 1}});
    for (int axis = 0; axis < 9; axis++) a.push_back({OptOps::TC, axis, TCArg{-1, 2, 1}});
    for (int a0 = 0; a0 < 5; a0++)
      for (int a1 = a0 + 1; a1 < 5; a1++) a.push_back({OptOps::SWAP, a0, a1});
    a.push_back({OptOps::NOLOCALS, std::nullopt, std::monostate{}});
    for (int amt : {0, 2, 3, 4, 6, 8, 12, 16, 24, 32})
      for (int axis = 0; axis < 3; axis++) a.push_back({OptOps::THREAD, axis, amt});
    return a;
  }();
  return actions;
}

std::vector<std::pair<Opt, Kernel>> kernel_actions(const Kernel& k) {
  constexpr int64_t max_up = 256, max_lcl = 1024;
  const std::vector<Opt>& actions = search_actions();
  std::vector<std::pair<Opt, Kernel>> legal;
  for (const Opt& a : actions) {
    if (k.why_illegal(a)) continue;
    if (a.op != OptOps::TC && a.amount()) {
      const int ax = std::get<int>(k.real_axis(a.op, a.axis));
      if (k.full_shape()[ax] == sint(*a.amount()) &&
          std::ranges::find(actions, Opt{a.op, a.axis, 0}) != actions.end())
        continue;
    }
    Kernel k2 = k;
    k2.apply_opt(a);
    if (const UpcastAndLocal n = upcast_and_local(k2); n.upcast <= max_up && n.local <= max_lcl)
      legal.emplace_back(a, std::move(k2));
  }
  return legal;
}

UpcastAndLocal upcast_and_local(const Kernel& k) {
  UpcastAndLocal n;
  for (size_t i = 0; i < k.axis_types().size(); i++) {
    const AxisType t = k.axis_types()[i];
    const sint& s = k.full_shape()[i];
    const int64_t size = s.is_int() ? s.to_int() : s.vmax();
    if (t == AxisType::UPCAST || t == AxisType::UNROLL) n.upcast *= size;
    if (t == AxisType::LOCAL || t == AxisType::GROUP_REDUCE) n.local *= size;
  }
  return n;
}

std::vector<Opt> random_opts(const Kernel& k, uint64_t seed, int max_opts) {
  // mt19937_64 is fully specified by the standard and drawing by modulo avoids the
  // implementation-defined distributions, so a seed gives the same opts everywhere.
  std::mt19937_64 rng(seed);
  Kernel cur = k;
  for (int step = 0; step < max_opts; step++) {
    std::vector<std::pair<Opt, Kernel>> legal = kernel_actions(cur);
    uint64_t pick = rng() % (legal.size() + 1);
    if (pick == legal.size()) break;
    cur = std::move(legal[pick].second);
  }
  return cur.applied_opts();
}

}  // namespace tunebed
