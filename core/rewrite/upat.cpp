#include "core/rewrite/upat.hpp"

#include <algorithm>
#include <stdexcept>

namespace tunebed {

UPat::UPat() : p_(std::make_shared<UPatNode>()) {}

UPat::UPat(Ops op, std::vector<UPat> src) {
  auto n = std::make_shared<UPatNode>();
  n->ops.add(op);
  n->src = std::move(src);
  n->src_mode = UPatNode::SrcMode::Exact;
  n->any_order = GroupOp::Commutative.contains(op) && n->src.size() == 2;
  p_ = std::move(n);
}

UPat::UPat(Ops op) {
  auto n = std::make_shared<UPatNode>();
  n->ops.add(op);
  p_ = std::move(n);
}

UPat UPat::ops(OpSet ops, std::vector<UPat> src) {
  auto n = std::make_shared<UPatNode>();
  n->ops = ops;
  if (!src.empty()) {
    n->src = std::move(src);
    n->src_mode = UPatNode::SrcMode::Exact;
  }
  return UPat(std::move(n));
}

UPat UPat::var(const std::string& name, std::optional<DType> dtype) {
  auto n = std::make_shared<UPatNode>();
  n->name = name;
  if (dtype) n->dtypes.push_back(*dtype);
  return UPat(std::move(n));
}

UPat UPat::cvar(const std::string& name, std::optional<DType> dtype) {
  return UPat(Ops::CONST).named(name).dtypes(dtype ? std::vector<DType>{*dtype} : std::vector<DType>{});
}

UPat UPat::cnst(double v) {
  return UPat(Ops::CONST).modified([v](UPatNode& n) { n.const_value = v; });
}

UPat UPat::modified(const std::function<void(UPatNode&)>& f) const {
  auto n = std::make_shared<UPatNode>(*p_);
  f(*n);
  return UPat(std::move(n));
}

UPat UPat::named(const std::string& name) const {
  return modified([&](UPatNode& n) { n.name = name; });
}
UPat UPat::dtype(DType d) const {
  return modified([&](UPatNode& n) { n.dtypes = {d}; });
}
UPat UPat::dtypes(std::vector<DType> ds) const {
  return modified([&](UPatNode& n) { n.dtypes = std::move(ds); });
}
UPat UPat::arg(const Arg& a) const {
  return modified([&](UPatNode& n) { n.arg = a; });
}
UPat UPat::allow_any_len() const {
  return modified([](UPatNode& n) { n.src_mode = UPatNode::SrcMode::Prefix; });
}
UPat UPat::src_all(const UPat& each) const {
  return modified([&](UPatNode& n) {
    n.src = {each};
    n.src_mode = UPatNode::SrcMode::All;
  });
}
UPat UPat::ordered() const {
  return modified([](UPatNode& n) { n.any_order = false; });
}
UPat UPat::where(std::function<bool(const UOp&)> pred) const {
  return modified([&](UPatNode& n) {
    auto prev = std::move(n.pred);
    n.pred = prev ? [prev, pred](const UOp& u) { return prev(u) && pred(u); } : std::move(pred);
  });
}

UPat UPat::alu(Ops op, const UPat& b) const { return UPat(op, {*this, b}); }
UPat UPat::where(const UPat& a, const UPat& b) const { return UPat(Ops::WHERE, {*this, a, b}); }
UPat UPat::cast(std::optional<DType> d) const {
  UPat p(Ops::CAST, {*this});
  return d ? p.dtype(*d) : p;
}

UPat operator+(const UPat& a, const UPat& b) { return a.alu(Ops::ADD, b); }
UPat operator+(const UPat& a, int64_t b) { return a + UPat::cnst(static_cast<double>(b)); }
UPat operator*(const UPat& a, const UPat& b) { return a.alu(Ops::MUL, b); }
UPat operator*(const UPat& a, int64_t b) { return a * UPat::cnst(static_cast<double>(b)); }
UPat operator/(const UPat& a, const UPat& b) { return a.alu(Ops::IDIV, b); }
UPat operator/(const UPat& a, int64_t b) { return a / UPat::cnst(static_cast<double>(b)); }
UPat operator%(const UPat& a, const UPat& b) { return a.alu(Ops::MOD, b); }
UPat operator%(const UPat& a, int64_t b) { return a % UPat::cnst(static_cast<double>(b)); }
UPat operator-(const UPat& a) { return a * -1; }
UPat operator&(const UPat& a, const UPat& b) { return a.alu(Ops::AND, b); }
UPat operator|(const UPat& a, const UPat& b) { return a.alu(Ops::OR, b); }
UPat operator^(const UPat& a, const UPat& b) { return a.alu(Ops::XOR, b); }

std::string UPat::to_string() const {
  const UPatNode& n = *p_;
  std::string s;
  if (n.const_value) return "CONST(" + std::to_string(*n.const_value) + ")";
  if (n.ops.empty()) s = n.name.empty() ? "_" : n.name;
  else {
    bool first = true;
    for (int i = 0; i < kNumOps; i++)
      if (n.ops.contains(static_cast<Ops>(i))) {
        s += (first ? "" : "|") + std::string(op_name(static_cast<Ops>(i)));
        first = false;
      }
    if (!n.name.empty()) s += ":" + n.name;
  }
  if (n.src_mode != UPatNode::SrcMode::None) {
    s += "(";
    for (size_t i = 0; i < n.src.size(); i++) s += (i ? ", " : "") + n.src[i].to_string();
    if (n.src_mode == UPatNode::SrcMode::Prefix) s += ", ...";
    if (n.src_mode == UPatNode::SrcMode::All) s += "...";
    s += ")";
  }
  return s;
}

// ---- matching ------------------------------------------------------------------------------

const UOp* Captures::find(std::string_view name) const {
  for (const auto& [k, u] : items_)
    if (*k == name) return &u;
  return nullptr;
}

const UOp& Captures::operator[](std::string_view name) const {
  if (const UOp* u = find(name)) return *u;
  throw std::logic_error("pattern captured no '" + std::string(name) + "'");
}

bool Captures::bind(const std::string& name, const UOp& u) {
  if (const UOp* prev = find(name)) return *prev == u;
  items_.emplace_back(&name, u);
  return true;
}

namespace {

// Matching is a search with backtracking over a stack of goals (pattern, UOp): a commutative
// node offers two orders of its sources, and a choice made deep inside one source can decide
// whether a later source matches (a name bound in both). Each goal is popped, checked, and its
// source goals pushed; when the goals run out everything matched.
struct Goal {
  const UPat* pat;
  const UOp* uop;
};

// Goals below `base` belong to an outer match (one running a predicate that matches too).
bool solve(std::vector<Goal>& goals, size_t base, Captures& caps);

bool local_match(const UPatNode& n, const UOp& u) {
  if (!n.ops.empty() && !n.ops.contains(u.op())) return false;
  if (!n.dtypes.empty() && std::find(n.dtypes.begin(), n.dtypes.end(), u.dtype()) == n.dtypes.end()) return false;
  if (n.const_value && !(u.is_const() && u.arg().as_number() == *n.const_value)) return false;
  if (n.arg && !(u.arg() == *n.arg)) return false;
  if (n.pred && !n.pred(u)) return false;
  return true;
}

// Push the sources' goals (last first, so they are solved in order) and solve the rest.
bool solve_with(std::vector<Goal>& goals, size_t base, Captures& caps, const std::vector<UPat>& pats,
                const UOp* s0, size_t count, bool swap) {
  size_t depth = goals.size();
  size_t mark = caps.size();
  for (size_t i = count; i-- > 0;) {
    size_t j = swap ? 1 - i : i;
    goals.push_back({&pats[pats.size() == 1 ? 0 : i], s0 + j});
  }
  if (solve(goals, base, caps)) return true;
  goals.resize(depth);
  caps.truncate(mark);
  return false;
}

bool solve(std::vector<Goal>& goals, size_t base, Captures& caps) {
  if (goals.size() == base) return true;
  Goal g = goals.back();
  goals.pop_back();
  const UPatNode& n = g.pat->node();
  const UOp& u = *g.uop;
  size_t mark = caps.size();
  bool ok = local_match(n, u) && (n.name.empty() || caps.bind(n.name, u));
  if (ok) {
    const auto& srcs = u.src();
    const UOp* s0 = srcs.data();
    switch (n.src_mode) {
      case UPatNode::SrcMode::None: ok = solve(goals, base, caps); break;
      case UPatNode::SrcMode::All: ok = solve_with(goals, base, caps, n.src, s0, srcs.size(), false); break;
      case UPatNode::SrcMode::Prefix:
        ok = srcs.size() >= n.src.size() && solve_with(goals, base, caps, n.src, s0, n.src.size(), false);
        break;
      case UPatNode::SrcMode::Exact:
        ok = srcs.size() == n.src.size() &&
             (solve_with(goals, base, caps, n.src, s0, srcs.size(), false) ||
              (n.any_order && solve_with(goals, base, caps, n.src, s0, srcs.size(), true)));
        break;
    }
  }
  if (!ok) {
    caps.truncate(mark);
    goals.push_back(g);
  }
  return ok;
}

}  // namespace

bool match(const UPat& p, const UOp& u, Captures& caps) {
  thread_local std::vector<Goal> goals;
  size_t base = goals.size();
  goals.push_back({&p, &u});
  bool ok = solve(goals, base, caps);
  goals.resize(base);
  return ok;
}

}  // namespace tunebed
