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

// Matching is a search with backtracking: a commutative node offers two orders of its sources,
// and a choice made deep inside one source can decide whether a later source matches (a name
// bound in both). The goals still to match, (pattern, UOp) pairs, form an immutable linked list
// in an arena, so a choice point is just (the other order's goal list, the captures' size) and
// nothing is undone but the captures. Iterative: a SINK of 100000 sources does not recurse.
struct Goal {
  const UPat* pat;
  const UOp* uop;
  int32_t next;  // the rest of the list, -1 at the end
};

struct Choice {
  int32_t goals;  // the list to resume with
  size_t caps;    // captures to keep
};

bool local_match(const UPatNode& n, const UOp& u) {
  if (!n.ops.empty() && !n.ops.contains(u.op())) return false;
  if (!n.dtypes.empty() && std::find(n.dtypes.begin(), n.dtypes.end(), u.dtype()) == n.dtypes.end()) return false;
  if (n.const_value && !(u.is_const() && u.arg().as_number() == *n.const_value)) return false;
  if (n.arg && !(u.arg() == *n.arg)) return false;
  if (n.pred && !n.pred(u)) return false;
  return true;
}

class Matcher {
 public:
  // A match may run inside a predicate of an outer match: it works above the outer's entries.
  Matcher() : arena_base_(arena().size()), choice_base_(choices().size()) {}
  ~Matcher() {
    arena().resize(arena_base_);
    choices().resize(choice_base_);
  }

  bool run(const UPat& p, const UOp& u, Captures& caps) {
    int32_t goals = push(&p, &u, -1);
    while (true) {
      if (goals < 0) return true;
      Goal g = arena()[goals];
      if (expand(g, goals, caps)) continue;
      if (choices().size() == choice_base_) return false;  // no other order left to try
      Choice c = choices().back();
      choices().pop_back();
      caps.truncate(c.caps);
      goals = c.goals;
    }
  }

 private:
  static std::vector<Goal>& arena() {
    thread_local std::vector<Goal> a;
    return a;
  }
  static std::vector<Choice>& choices() {
    thread_local std::vector<Choice> c;
    return c;
  }
  static int32_t push(const UPat* p, const UOp* u, int32_t next) {
    arena().push_back({p, u, next});
    return static_cast<int32_t>(arena().size() - 1);
  }
  // Goals for sources [0, count) of srcs, in order, in front of `rest`.
  static int32_t push_sources(const std::vector<UPat>& pats, const UOp* srcs, size_t count, bool swap,
                              int32_t rest) {
    for (size_t i = count; i-- > 0;) rest = push(&pats[pats.size() == 1 ? 0 : i], srcs + (swap ? 1 - i : i), rest);
    return rest;
  }

  // Check the goal at the head of `goals` and replace it by its sources' goals; false on a mismatch.
  bool expand(const Goal& g, int32_t& goals, Captures& caps) {
    const UPatNode& n = g.pat->node();
    const UOp& u = *g.uop;
    if (!local_match(n, u) || !(n.name.empty() || caps.bind(n.name, u))) return false;
    const auto& srcs = u.src();
    switch (n.src_mode) {
      case UPatNode::SrcMode::None: goals = g.next; return true;
      case UPatNode::SrcMode::All: goals = push_sources(n.src, srcs.data(), srcs.size(), false, g.next); return true;
      case UPatNode::SrcMode::Prefix:
        if (srcs.size() < n.src.size()) return false;
        goals = push_sources(n.src, srcs.data(), n.src.size(), false, g.next);
        return true;
      case UPatNode::SrcMode::Exact:
        if (srcs.size() != n.src.size()) return false;
        if (n.any_order) choices().push_back({push_sources(n.src, srcs.data(), 2, true, g.next), caps.size()});
        goals = push_sources(n.src, srcs.data(), srcs.size(), false, g.next);
        return true;
    }
    return false;
  }

  size_t arena_base_, choice_base_;
};

}  // namespace

bool match(const UPat& p, const UOp& u, Captures& caps) {
  size_t mark = caps.size();
  if (Matcher().run(p, u, caps)) return true;
  caps.truncate(mark);
  return false;
}

}  // namespace tunebed
