// linearize: the rendered-ready graph as an ordered list, tinygrad's codegen/linearize.py in
// intent (a different algorithm: a scheduler over an open-loop stack instead of blocks).
//
// Every node has a scope, the set of RANGEs it is computed inside: the union of its sources'
// scopes, where a RANGE source adds the range itself and a STORE source removes the ranges the
// store closes (its RANGE sources: the accumulator update of a reduce, a kernel output). A node
// that reads such a STORE must come after those loops end. The list is built with a stack of
// open loops:
//   1. emit the first ready node (all sources emitted; in graph order) whose scope is open and
//      that needs no open loop closed;
//   2. else close the innermost loop if no remaining node needs it;
//   3. else open the ready RANGE with the smallest arg (the store's axes in order, then the
//      reduce loops of each subblock), passing over one whose body waits for another ready
//      loop to end: that loop opens first, beside it and not inside it (the partial reduce of a
//      GROUP, which the final loop over the partials reads through local memory).
// Because a node is emitted as soon as its loops are open, loop-invariant work lands outside the
// loops it does not need. A node may also land deeper than its scope (a reduce whose input does
// not use an output axis still runs inside that axis's loop): pure values are then only
// recomputed, but an accumulator's initial store must run once per run of its reduce loop, so
// it is held back and emitted right before that loop opens, wherever that is.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "core/codegen/passes.hpp"

namespace tunebed {

using namespace codegen_detail;

namespace {

using RangeSet = uint64_t;  // a set of ranges, by their number

struct Node {
  UOp u;
  RangeSet scope = 0;        // ranges it is inside
  RangeSet must_close = 0;   // ranges that must have ended before it
  RangeSet needs_ended = 0;  // ranges that must have ended before it or any of its sources
  std::vector<size_t> users;
  size_t waiting = 0;  // sources not yet emitted
};

}  // namespace

std::vector<UOp> linearize(const UOp& sink) {
  std::vector<UOp> topo = sink.toposort();
  topo.pop_back();  // the SINK itself goes last
  std::map<const UOpNode*, size_t> pos;
  std::vector<UOp> ranges;
  for (size_t i = 0; i < topo.size(); i++) {
    pos[topo[i].get()] = i;
    if (topo[i].op() == Ops::RANGE) ranges.push_back(topo[i]);
  }
  if (ranges.size() > 64) throw CodegenError("linearize: more than 64 loops in one kernel");
  auto bit = [&](const UOp& r) {
    return RangeSet{1} << (std::find(ranges.begin(), ranges.end(), r) - ranges.begin());
  };

  std::vector<Node> nodes(topo.size());
  for (size_t i = 0; i < topo.size(); i++) {
    Node& n = nodes[i];
    n.u = topo[i];
    for (const UOp& s : topo[i].src()) {
      const Node& sn = nodes[pos.at(s.get())];
      RangeSet contributes = sn.scope;
      if (s.op() == Ops::RANGE) contributes |= bit(s);
      if (s.op() == Ops::STORE)
        for (const UOp& r : ended_ranges(s)) {
          contributes &= ~bit(r);
          n.must_close |= bit(r);
        }
      n.scope |= contributes;
      n.needs_ended |= sn.needs_ended;
      nodes[pos.at(s.get())].users.push_back(i);
      n.waiting++;
    }
    n.needs_ended |= n.must_close;
  }
  // Per range, the ranges its body waits for.
  std::vector<RangeSet> body_waits_for(ranges.size(), 0);
  for (const Node& n : nodes)
    for (size_t r = 0; r < ranges.size(); r++)
      if (n.scope >> r & 1) body_waits_for[r] |= n.needs_ended & ~(RangeSet{1} << r);

  std::vector<size_t> needs(ranges.size(), 0);  // remaining nodes inside each range
  for (const Node& n : nodes)
    for (size_t r = 0; r < ranges.size(); r++) needs[r] += n.scope >> r & 1;

  // Among ready nodes: the kernel's buffers (by arg) and variables first, a C function's
  // preamble; then graph order.
  auto rank = [&](size_t i) {
    const UOp& u = nodes[i].u;
    if (u.op() == Ops::DEFINE_GLOBAL) return std::tuple{0, u.arg().as_int(), i};
    return std::tuple{u.op() == Ops::DEFINE_VAR ? 1 : 2, int64_t{0}, i};
  };
  auto by_rank = [&](size_t a, size_t b) { return rank(a) < rank(b); };
  std::set<size_t, decltype(by_rank)> ready(by_rank);
  for (size_t i = 0; i < nodes.size(); i++)
    if (nodes[i].waiting == 0) ready.insert(i);
  // The accumulator resets (a STORE into a DEFINE_REG that closes no loop), by the reduce loops
  // that read them (the RANGE sources of the LOAD that reads the reset value).
  std::vector<bool> held(nodes.size(), false);
  std::map<size_t, std::vector<size_t>> resets_of;  // range node -> reset store nodes
  for (size_t i = 0; i < nodes.size(); i++) {
    const UOp& u = nodes[i].u;
    held[i] = u.op() == Ops::STORE && u.src(0).src(0).op() == Ops::DEFINE_REG && ended_ranges(u).empty();
    if (!held[i]) continue;
    for (size_t user : nodes[i].users)
      for (const UOp& s : nodes[user].u.src())
        if (s.op() == Ops::RANGE) resets_of[pos.at(s.get())].push_back(i);
  }
  std::vector<UOp> out;
  std::vector<size_t> open;  // range numbers, innermost last
  RangeSet open_mask = 0;
  std::vector<bool> emitted(nodes.size(), false);
  auto emit = [&](size_t i) {
    ready.erase(i);
    emitted[i] = true;
    out.push_back(nodes[i].u);
    for (size_t r = 0; r < ranges.size(); r++) needs[r] -= nodes[i].scope >> r & 1;
    for (size_t user : nodes[i].users)
      if (--nodes[user].waiting == 0) ready.insert(user);
  };

  while (!ready.empty()) {
    auto next = std::find_if(ready.begin(), ready.end(), [&](size_t i) {
      const Node& n = nodes[i];
      return n.u.op() != Ops::RANGE && !held[i] && (n.scope & ~open_mask) == 0 &&
             (n.must_close & open_mask) == 0;
    });
    if (next != ready.end()) {
      emit(*next);
      continue;
    }
    if (!open.empty() && needs[open.back()] == 0) {
      out.push_back(UOp::make(Ops::ENDRANGE, dtypes::void_, {ranges[open.back()]}));
      open_mask &= ~(RangeSet{1} << open.back());
      open.pop_back();
      continue;
    }
    // A loop can open once its resets can go right before it.
    auto can_open = [&](size_t i) {
      const Node& n = nodes[i];
      if (n.u.op() != Ops::RANGE || (n.scope & ~open_mask) != 0) return false;
      for (size_t reset : resets_of[i])
        if (!emitted[reset] && (nodes[reset].waiting != 0 || (nodes[reset].scope & ~open_mask) != 0))
          return false;
      return true;
    };
    auto range_of = [&](size_t i) {
      return static_cast<size_t>(std::find(ranges.begin(), ranges.end(), nodes[i].u) - ranges.begin());
    };
    RangeSet openable = 0;
    for (size_t i : ready)
      if (can_open(i)) openable |= RangeSet{1} << range_of(i);
    std::optional<size_t> best, best_unblocked;
    for (size_t i : ready) {
      if (!can_open(i)) continue;
      auto smaller = [&](const std::optional<size_t>& b) {
        return !b || nodes[i].u.arg().as_int() < nodes[*b].u.arg().as_int();
      };
      if (smaller(best)) best = i;
      if ((body_waits_for[range_of(i)] & openable) == 0 && smaller(best_unblocked)) best_unblocked = i;
    }
    if (best_unblocked) best = best_unblocked;
    if (!best) throw CodegenError("linearize: no order closes every loop after its last use");
    const size_t r = range_of(*best);
    for (size_t reset : resets_of[*best])
      if (!emitted[reset]) emit(reset);
    emit(*best);
    open.push_back(r);
    open_mask |= RangeSet{1} << r;
  }
  for (auto it = open.rbegin(); it != open.rend(); ++it)
    out.push_back(UOp::make(Ops::ENDRANGE, dtypes::void_, {ranges[*it]}));
  if (out.size() != topo.size() + ranges.size())
    throw CodegenError("linearize: a node waits on a source that is never ready");
  out.push_back(sink);
  return out;
}

}  // namespace tunebed
