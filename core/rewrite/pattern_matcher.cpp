#include "core/rewrite/pattern_matcher.hpp"

#include <stdexcept>

namespace tunebed {

Rule::Rule(std::string n, UPat p, RewriteFn f, Guard guard) : name(std::move(n)), pattern(std::move(p)) {
  if (guard)
    fn = [f = std::move(f), guard = std::move(guard)](const Match& m) { return guard(m) ? f(m) : UOp(); };
  else
    fn = std::move(f);
}

Rule::Rule(std::string n, UPat p, const UPat& replacement, Guard guard)
    : Rule(std::move(n), std::move(p), [replacement](const Match& m) { return instantiate(replacement, m); },
           std::move(guard)) {}

PatternMatcher::PatternMatcher(std::initializer_list<Rule> rules) : PatternMatcher(std::vector<Rule>(rules)) {}

PatternMatcher::PatternMatcher(std::vector<Rule> rules) {
  for (Rule& r : rules) entries_.push_back(std::make_shared<const Entry>(std::move(r)));
  index();
}

PatternMatcher PatternMatcher::operator+(const PatternMatcher& o) const {
  PatternMatcher pm;
  pm.entries_ = entries_;
  pm.entries_.insert(pm.entries_.end(), o.entries_.begin(), o.entries_.end());
  pm.index();
  return pm;
}

void PatternMatcher::index() {
  for (auto& v : by_op_) v.clear();
  for (uint32_t i = 0; i < entries_.size(); i++) {
    const OpSet& ops = entries_[i]->rule.pattern.node().ops;
    for (int op = 0; op < kNumOps; op++)
      if (ops.empty() || ops.contains(static_cast<Ops>(op))) by_op_[op].push_back(i);
  }
}

UOp PatternMatcher::rewrite(const UOp& u, void* ctx, const std::type_info* ctx_type, RewriteTrace* trace) const {
  Applied a = apply(u, ctx, ctx_type);
  if (a.out && trace) trace->push_back({a.rule->name, u, a.out});
  return a.out;
}

PatternMatcher::Applied PatternMatcher::apply(const UOp& u, void* ctx, const std::type_info* ctx_type) const {
  Captures caps;
  for (uint32_t i : by_op_[static_cast<int>(u.op())]) {
    const Entry& e = *entries_[i];
    caps.truncate(0);
    if (!match(e.rule.pattern, u, caps)) continue;
    UOp out = e.rule.fn(Match{u, caps, ctx, ctx_type});
    if (!out || out == u) continue;
    e.hits.fetch_add(1, std::memory_order_relaxed);
    return {std::move(out), &e.rule};
  }
  return {};
}

std::string rule_stats(const PatternMatcher& pm) {
  std::string out;
  for (const auto& e : pm.entries()) {
    uint64_t h = e->hits.load();
    if (h) out += e->rule.name + ": " + std::to_string(h) + "\n";
  }
  return out;
}

UOp instantiate(const UPat& tpl, const Match& m) {
  const UPatNode& n = tpl.node();
  if (!n.name.empty() && n.src_mode == UPatNode::SrcMode::None && !n.const_value) return m[n.name];
  if (n.const_value) throw std::logic_error("a constant in a replacement needs a sibling to take its dtype from");
  Ops op = Ops::NOOP;
  int count = 0;
  for (int i = 0; i < kNumOps; i++)
    if (n.ops.contains(static_cast<Ops>(i))) {
      op = static_cast<Ops>(i);
      count++;
    }
  if (count != 1) throw std::logic_error("a replacement pattern needs exactly one op: " + tpl.to_string());
  // Build the non-constant sources first; constants then take the dtype of the value sources
  // (for WHERE, the branches, not the condition).
  std::vector<UOp> src(n.src.size());
  std::optional<DType> sibling;
  for (size_t i = 0; i < n.src.size(); i++) {
    if (n.src[i].node().const_value) continue;
    src[i] = instantiate(n.src[i], m);
    if (!sibling && !(op == Ops::WHERE && i == 0)) sibling = src[i].dtype();
  }
  for (size_t i = 0; i < n.src.size(); i++) {
    if (!n.src[i].node().const_value) continue;
    if (!sibling) throw std::logic_error("a constant in a replacement needs a sibling: " + tpl.to_string());
    src[i] = UOp::const_float(*sibling, *n.src[i].node().const_value);
  }
  DType dt = n.dtypes.size() == 1                   ? n.dtypes[0]
             : GroupOp::Comparison.contains(op)    ? dtypes::bool_.vec(src.at(0).dtype().count)
             : sibling                              ? *sibling
                                                    : m.root.dtype();
  return UOp::make(op, dt, std::move(src), n.arg ? *n.arg : Arg());
}

}  // namespace tunebed
