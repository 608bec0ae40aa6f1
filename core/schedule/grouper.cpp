// The grouper: which UOps of the tensor graph realize into buffers (tinygrad's
// schedule/grouper.py). Everything not realized fuses into the kernel of the realized node that
// consumes it: elementwise chains into their consumer, a reduce with its elementwise prologue and
// epilogue. A reduce realizes where its output is expanded, where two reduces read it, or where
// it cannot find one contiguous consumer to fuse with.
#include <algorithm>
#include <unordered_map>

#include "core/schedule/kernelize.hpp"
#include "core/schedule/uop_st.hpp"

namespace tunebed::sched {
namespace {

// tinygrad's UOp.toposort(gate): a node the gate rejects is left out, with its sources.
std::vector<UOp> toposort_gated(const UOp& root, const std::function<bool(const UOp&)>& gate) {
  std::vector<UOp> out;
  std::unordered_set<UOp, UOpHash> seen;
  std::vector<std::pair<UOp, bool>> stack{{root, false}};
  while (!stack.empty()) {
    auto [node, visited] = stack.back();
    stack.pop_back();
    if (seen.count(node)) continue;
    if (visited) {
      seen.insert(node);
      out.push_back(node);
    } else if (gate(node)) {
      stack.emplace_back(node, true);
      for (auto it = node.src().rbegin(); it != node.src().rend(); ++it) stack.emplace_back(*it, false);
    }
  }
  return out;
}

bool can_pad(const UOp& root, const Realizes& edges) {
  for (const UOp& u : toposort_gated(root, [&](const UOp& x) { return !edges.contains(x); }))
    if (GroupOp::UnsafePad.contains(u.op())) return false;
  return true;
}

UOp realize_before_view(const Match& m) {
  Realizes& ctx = m.ctx<Realizes>();
  const UOp& tr = m["tr"];
  const ShapeTracker& st = view_st(m["view"]);
  const bool masked =
      std::any_of(st.views().begin(), st.views().end(), [](const View& v) { return bool(v.mask()); });
  // A pad through an op with f(0) != 0 must read the realized values.
  if (masked && !can_pad(tr, ctx)) {
    ctx.add(tr);
    return {};
  }
  // A simple pad folds into the kernel.
  const sint tr_size = prod(uop_shape(tr));
  if (st.views().size() == 1 && st.views().back().mask() && all_int(uop_shape(tr))) {
    sint masked_size = 1;
    for (const auto& [b, e] : *st.views().back().mask()) masked_size = masked_size * (e - b);
    if (resolve(le(masked_size, tr_size))) return {};
  }
  // An expand recomputes its source per output element: realize the source first.
  if (resolve(lt(tr_size, prod(st.shape())))) ctx.add(tr);
  return {};
}

struct Grouping {
  const Realizes& realizes;
  const std::unordered_map<UOp, std::vector<UOp>, UOpHash>& children;
  const std::unordered_map<UOp, UOp, UOpHash>& reduce_for_op;
  std::vector<UOp> group;  // insertion-ordered, deduplicated
  std::unordered_map<UOp, std::vector<ShapeTracker>, UOpHash> cache;

  void add(const UOp& u) {
    if (std::find(group.begin(), group.end(), u) == group.end()) group.push_back(u);
  }
  const std::vector<UOp>& children_of(const UOp& u) const {
    static const std::vector<UOp> none;
    auto it = children.find(u);
    return it == children.end() ? none : it->second;
  }

  // Follow the consumers of `tr` (seen through `st`) down to the realized nodes that would
  // hold the reduce r's result.
  void recursive_group(const UOp& tr, const ShapeTracker& st, const UOp& r) {
    auto& seen = cache[tr];
    if (std::find(seen.begin(), seen.end(), st) != seen.end()) return;
    seen.push_back(st);
    const int64_t rsize = st_of(r).size();
    if (realizes.contains(tr) && tr != r) {
      // only a contiguous consumer of the same size fuses, and one reduce per kernel
      if (!st.contiguous() || st.size() != rsize || reduce_for_op.count(tr)) add(r);
      add(tr);
      return;
    }
    for (const UOp& next : children_of(tr)) {
      if (next.op() == Ops::REDUCE_AXIS) return add(r);
      std::vector<ShapeTracker> sts;
      for (const UOp& x : next.src())
        if (uop_base(x) == tr && std::find(sts.begin(), sts.end(), st_of(x)) == sts.end())
          sts.push_back(st_of(x));
      if (sts.size() > 1) return add(r);
      recursive_group(next, st_add(st, sts[0]), r);
    }
  }
};

}  // namespace

const PatternMatcher& do_realize() {
  static const PatternMatcher pm({
      {"realize-sink-parents", UPat(Ops::SINK).named("s"),
       [](const Match& m) -> UOp {
         for (const UOp& x : m["s"].src())
           if (!ALWAYS_CONTIGUOUS.contains(uop_base(x).op())) m.ctx<Realizes>().add(uop_base(x));
         return {};
       }},
      {"realize-meta", UPat::ops(Meta | OpSet{Ops::ASSIGN, Ops::CONTIGUOUS}).named("tr"),
       [](const Match& m) -> UOp {
         m.ctx<Realizes>().add(m["tr"]);
         return {};
       }},
      {"realize-before-view",
       UPat(Ops::VIEW,
            {UPat::var("tr").where([](const UOp& u) { return !ALWAYS_CONTIGUOUS.contains(u.op()); })})
           .named("view"),
       realize_before_view},
      {"realize-copy-parents", UPat::ops({Ops::COPY, Ops::MSELECT, Ops::MSTACK}).named("rb"),
       [](const Match& m) -> UOp {
         for (const UOp& s : m["rb"].src())
           if (!ALWAYS_CONTIGUOUS.contains(s.op())) m.ctx<Realizes>().add(s);
         return {};
       }},
  });
  return pm;
}

Realizes group_realizes(const UOp& sink) {
  Realizes realizes;
  graph_rewrite(sink, do_realize(), realizes);

  // the consumers of each base, and the buffers some ASSIGN writes
  std::unordered_map<UOp, std::vector<UOp>, UOpHash> children;
  std::unordered_set<UOp, UOpHash> assigns;
  const std::vector<UOp> topo = sink.toposort();
  for (const UOp& u : topo) {
    if (u.op() == Ops::VIEW || u.op() == Ops::SINK) continue;
    if (u.op() == Ops::ASSIGN) assigns.insert(uop_base(u.src(0)));
    for (const UOp& s : u.src()) {
      auto& c = children[uop_base(s)];
      if (std::find(c.begin(), c.end(), u) == c.end()) c.push_back(u);
    }
  }

  // Pair each reduce with the one realized node its result flows into; where there is no such
  // node, realize the reduce itself (or a contiguous chain of its children).
  std::unordered_map<UOp, UOp, UOpHash> reduce_for_op;
  for (const UOp& r : topo) {
    if (r.op() != Ops::REDUCE_AXIS || realizes.contains(r)) continue;
    Grouping g{realizes, children, reduce_for_op, {}, {}};
    g.recursive_group(r, st_of(r), r);
    bool can_chase =
        std::none_of(g.group.begin(), g.group.end(), [&](const UOp& t) { return reduce_for_op.count(t); });
    for (const UOp& u : toposort_gated(r, [&](const UOp& x) { return !realizes.contains(x); }))
      if (u.op() == Ops::REDUCE_AXIS && uop_base(u.src(0)).op() == Ops::CONST) {
        can_chase = false;
        break;
      }
    bool forced = std::find(g.group.begin(), g.group.end(), r) != g.group.end() || g.group.size() > 1;
    // an assign fuses only if the kernel reads no other assign target
    if (!forced) {
      std::unordered_set<UOp, UOpHash> targets;
      for (const UOp& x : g.group)
        if (x.op() == Ops::ASSIGN) targets.insert(uop_base(x.src(0)));
      if (!targets.empty()) {
        std::vector<UOp> parents{r};
        parents.insert(parents.end(), g.group.begin(), g.group.end());
        while (!parents.empty() && !forced) {
          const UOp p = uop_base(parents.back());
          parents.pop_back();
          if (p.op() == Ops::BUFFER && assigns.count(p) && !targets.count(p))
            forced = true, can_chase = false;
          if (realizes.contains(p)) continue;
          parents.insert(parents.end(), p.src().begin(), p.src().end());
        }
      }
    }
    if (forced || g.group.empty()) {
      UOp tr = r;
      if (can_chase) {
        // walk down a chain of single contiguous consumers of the same size
        ShapeTracker st = st_of(tr);
        for (;;) {
          const auto& lst = g.children_of(tr);
          if (lst.size() != 1) break;
          const UOp next = lst[0];
          std::vector<ShapeTracker> sts;
          for (const UOp& s : next.src())
            if (uop_base(s) == tr && std::find(sts.begin(), sts.end(), st_of(s)) == sts.end())
              sts.push_back(st_of(s));
          if (sts.size() > 1 || st.size() != sts[0].size()) break;
          st = st_add(st, sts[0]);
          if (!st.contiguous() || next.op() == Ops::REDUCE_AXIS) break;
          tr = next;
        }
        // don't widen with a CAST right before the store
        if (tr.op() == Ops::CAST && tr.dtype().itemsize() > tr.src(0).dtype().itemsize())
          tr = uop_base(tr.src(0));
      }
      g.group = {tr};
      realizes.add(tr);
    }
    for (const UOp& t : g.group) reduce_for_op.insert_or_assign(t, r);
  }
  return realizes;
}

}  // namespace tunebed::sched
