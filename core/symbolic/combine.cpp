// Combining terms: the normal form of integer sums and products that the other rules read.
//
// A sum (a tree of ADDs) is flattened into coefficient * term pairs and a constant, like terms
// are merged (x*3 + y + x*-3 -> y), (x%c)*a + (x//c)*(a*c) is put back together as x*a, and the
// sum is rebuilt left to right in the canonical order of its terms with the constant last:
// ((i*6 + j) + k*-2) + 5. This replaces the pairwise rules of tinygrad's symbolic ((x*c0)+(x*c1),
// (y+x)+x, (x+c1)+y, ...), which only see terms that happen to sit next to each other. The same
// pass applies Hermite's identity to the sums an unrolled arange leaves (fold_unrolled_divs).
//
// Products by constants are distributed over sums ((x+y)*c -> x*c + y*c, tinygrad's
// symbolic_flat), so an integer sum is always a linear combination whose terms can cancel; this
// costs an op on a lone (a+b)*3 and is what lets index expressions fold. Constant chains of the
// associative ops fold ((x*c0)*c1, max(max(x, c0), c1)), and commutative ops get a canonical
// operand order, constants last.
//
// All of it but Hermite's identity is ring arithmetic (+, -, * wrap consistently), so it holds for
// every integer dtype whatever wraps. Float sums are left alone: reassociation changes rounding.
#include <algorithm>
#include <optional>

#include "core/symbolic/rules.hpp"

namespace tunebed::symbolic_detail {

namespace {

// Sums wider than this are left as they are: flattening a DAG that reuses a sum in both operands
// of an ADD doubles the terms at every level.
constexpr size_t kMaxTerms = 256;

struct Term {
  UOp v;
  int64_t f;  // wrapped to the dtype
};

UOp wrap_const(const DType& d, i128 v) { return UOp::const_int(d, static_cast<int64_t>(static_cast<uint64_t>(v))); }
int64_t wrapped(const DType& d, i128 v) { return wrap_const(d, v).const_int(); }

// Adds x's summands to terms; false if there are too many.
bool flatten(const UOp& x, std::vector<Term>& terms, i128& k) {
  std::vector<UOp> parts = split_uop(x, Ops::ADD);
  if (parts.size() > kMaxTerms) return false;
  for (const UOp& u : parts) {
    if (u.is_const()) k += u.const_int();
    else if (u.op() == Ops::MUL && u.src(1).is_const()) terms.push_back({u.src(0), u.src(1).const_int()});
    else if (u.op() == Ops::MUL && u.src(0).is_const()) terms.push_back({u.src(1), u.src(0).const_int()});
    else terms.push_back({u, 1});
  }
  return true;
}

// Sorts by term and merges equal terms, dropping those whose coefficient wraps to zero.
void merge_like_terms(std::vector<Term>& terms, const DType& d) {
  std::stable_sort(terms.begin(), terms.end(), [](const Term& a, const Term& b) { return compare_uops(a.v, b.v) < 0; });
  std::vector<Term> out;
  for (Term& t : terms) {
    if (!out.empty() && out.back().v == t.v) out.back().f = wrapped(d, i128{out.back().f} + t.f);
    else out.push_back(std::move(t));
  }
  std::erase_if(out, [](const Term& t) { return t.f == 0; });
  terms = std::move(out);
}

// x%c == y%c: the same node, or (both non-negative, so % is the math remainder) two exact sums
// whose difference is a multiple of c. Rules may have reduced the coefficients inside one MOD
// ((i*6+j)%4 -> (i*2+j)%4) while the matching IDIV kept them.
bool same_remainder(const UOp& x, const UOp& y, int64_t c) {
  if (x == y) return true;
  if (c == 0) return false;
  Linear lx = Linear::of(x), ly = Linear::of(y);
  if (!lx.exact() || !ly.exact() || lx.lo() < 0 || ly.lo() < 0) return false;
  if ((lx.k - ly.k) % c != 0) return false;
  // difference of coefficients, term by term (terms are few: quadratic is fine)
  std::vector<Linear::Term> diff = lx.terms;
  for (const Linear::Term& t : ly.terms) diff.push_back({t.v, -t.f});
  for (size_t i = 0; i < diff.size(); i++) {
    i128 f = diff[i].f;
    for (size_t j = i + 1; j < diff.size(); j++)
      if (diff[j].v == diff[i].v) f += std::exchange(diff[j].f, 0);
    if (f % c != 0) return false;
  }
  return true;
}

// (y%c)*a + (x//c)*(a*c) -> x*a when y%c == x%c: the C identity x == (x//c)*c + x%c, which holds
// for every x and c (also c == 0 under exec_alu's x//0 == 0, x%0 == x). Returns whether a pair
// was found.
bool recombine_divmod(std::vector<Term>& terms, const DType& d) {
  for (size_t i = 0; i < terms.size(); i++) {
    const UOp& m = terms[i].v;
    if (m.op() != Ops::MOD || !m.src(1).is_const()) continue;
    int64_t c = m.src(1).const_int();
    int64_t want = wrapped(d, i128{terms[i].f} * c);
    for (size_t j = 0; j < terms.size(); j++) {
      const UOp& q = terms[j].v;
      if (q.op() == Ops::IDIV && q.src(1) == m.src(1) && terms[j].f == want && same_remainder(q.src(0), m.src(0), c)) {
        terms[i].v = q.src(0);
        terms.erase(terms.begin() + static_cast<std::ptrdiff_t>(j));
        return true;
      }
    }
  }
  return false;
}

// (ans + offset)//d as its parts, for fold_unrolled_divs.
struct UnrolledDiv {
  UOp ans;
  int64_t offset, d;
};

std::optional<UnrolledDiv> unrolled_div(const UOp& u) {
  if (u.op() != Ops::IDIV || !u.src(1).is_const()) return std::nullopt;
  const UOp& n = u.src(0);
  if (n.op() == Ops::ADD && n.src(1).is_const()) return UnrolledDiv{n.src(0), n.src(1).const_int(), u.src(1).const_int()};
  return UnrolledDiv{n, 0, u.src(1).const_int()};
}

// Hermite's identity, sum over i < d of (x+i)//d == x for x >= 0: the sum an unrolled arange
// leaves (tinygrad's fold_unrolled_divs). An offset missing from the sum counts when its term is
// 0 for every x (x + i < d), as range folding may have removed it. Returns whether it folded.
bool fold_unrolled_divs(std::vector<Term>& terms) {
  constexpr int64_t kMaxUnroll = 256;
  for (size_t i = 0; i < terms.size(); i++) {
    std::optional<UnrolledDiv> first = unrolled_div(terms[i].v);
    if (!first || first->d <= 1 || first->d > kMaxUnroll) continue;
    const UOp& ans = first->ans;
    int64_t d = first->d;
    if (!range_trusted(ans.dtype()) || ans.vmin() < 0 || !fits(i128{ans.vmax()} + d - 1, ans.dtype())) continue;
    std::vector<bool> seen(static_cast<size_t>(d), false);
    std::vector<size_t> members;
    bool ok = true;
    for (size_t j = i; j < terms.size() && ok; j++) {
      std::optional<UnrolledDiv> u = unrolled_div(terms[j].v);
      if (!u || u->d != d || !(u->ans == ans) || terms[j].f != terms[i].f) continue;
      ok = u->offset >= 0 && u->offset < d && !seen[static_cast<size_t>(u->offset)];
      if (ok) seen[static_cast<size_t>(u->offset)] = true, members.push_back(j);
    }
    for (int64_t off = 0; off < d && ok; off++) ok = seen[static_cast<size_t>(off)] || i128{ans.vmax()} + off < d;
    if (!ok) continue;
    Term folded{ans, terms[i].f};
    for (auto it = members.rbegin(); it != members.rend(); ++it) terms.erase(terms.begin() + static_cast<std::ptrdiff_t>(*it));
    terms.push_back(std::move(folded));
    return true;
  }
  return false;
}

UOp build(const std::vector<Term>& terms, int64_t k, const DType& d) {
  UOp out;
  for (const Term& t : terms) {
    UOp term = t.f == 1 ? t.v : t.v * UOp::const_int(d, t.f);
    out = out ? out + term : term;
  }
  if (!out) return UOp::const_int(d, k);
  return k == 0 ? out : out + UOp::const_int(d, k);
}

// Whether root already is what build(terms, k) would make, checked without building it: most
// sums graph_rewrite visits are already normal, and interning a copy of each is the cost.
bool is_built_form(const UOp& root, const std::vector<Term>& terms, int64_t k) {
  std::vector<const UOp*> parts;  // the left spine's summands, last first
  const UOp* node = &root;
  for (; node->op() == Ops::ADD; node = &node->src(0)) {
    if (node->src(1).op() == Ops::ADD) return false;
    parts.push_back(&node->src(1));
  }
  parts.push_back(node);
  if (parts.size() != terms.size() + (k != 0)) return false;
  if (k != 0 && !(parts.front()->is_const() && parts.front()->const_int() == k)) return false;
  for (size_t i = 0; i < terms.size(); i++) {
    const UOp& p = *parts[parts.size() - 1 - i];
    const Term& t = terms[i];
    bool same = t.f == 1 ? p == t.v
                         : p.op() == Ops::MUL && p.src(0) == t.v && p.src(1).is_const() && p.src(1).const_int() == t.f;
    if (!same) return false;
  }
  return true;
}

// The base of a summand: x for x*c, the summand itself otherwise.
const UOp& base_of(const UOp& u) {
  return u.op() == Ops::MUL && u.src(1).is_const() ? u.src(0) : u;
}

// The common case, decided without flattening: graph_rewrite normalizes sources first, so a sum
// (a + b) whose left side is a normal sum is normal when b is a new largest term (or a non-zero
// constant after the terms) that no div/mod rule pairs with.
bool appends_in_order(const UOp& root) {
  const UOp &a = root.src(0), &b = root.src(1);
  if (b.op() == Ops::ADD || a.is_const()) return false;
  const UOp& last = a.op() == Ops::ADD ? a.src(1) : a;
  if (last.is_const()) return false;
  if (b.is_const()) return b.const_int() != 0;
  const UOp& bb = base_of(b);
  if (bb.op() == Ops::IDIV || bb.op() == Ops::MOD) return false;
  return compare_uops(base_of(last), bb) < 0;
}

UOp normalize_sum(const Match& m) {
  const UOp& root = m.root;
  if (appends_in_order(root)) return {};
  const DType& d = root.dtype();
  std::vector<Term> terms;
  i128 k = 0;
  if (!flatten(root, terms, k)) return {};
  merge_like_terms(terms, d);
  while (recombine_divmod(terms, d) || fold_unrolled_divs(terms)) merge_like_terms(terms, d);
  int64_t kw = wrapped(d, k);
  return is_built_form(root, terms, kw) ? UOp() : build(terms, kw, d);
}

// (x op c0) op c1 -> x op (c0 op c1) for the associative ops (ADD is normalize_sum's).
UOp assoc_consts(const Match& m) {
  Ops op = m.root.op();
  return UOp::make(op, m.root.dtype(), {m["x"], fold_const(op, m["c0"], m["c1"])});
}

// Canonical operand order of the commutative ops other than ADD (whose order normalize_sum
// owns), so that x*y and y*x are one node.
UOp commute(const Match& m) {
  const UOp& u = m.root;
  if (compare_uops(u.src(1), u.src(0)) >= 0) return {};
  return u.with_src({u.src(1), u.src(0)});
}

bool int_operands(const UOp& u) {
  const DType& d = u.src(0).dtype();
  return d.count == 1 && (d.is_int() || d.is_bool());
}

}  // namespace

PatternMatcher combine_rules() {
  UPat x = ivar("x"), y = ivar("y"), c0 = icvar("c0"), c1 = UPat::cvar("c1");
  OpSet commutative{Ops::MUL, Ops::MAX, Ops::AND, Ops::OR, Ops::XOR, Ops::CMPNE, Ops::CMPEQ};
  OpSet associative{Ops::MUL, Ops::MAX, Ops::AND, Ops::OR, Ops::XOR};
  return PatternMatcher({
      // SUB and NEG are ADD and MUL by -1, as tinygrad builds them, so that sums see them
      {"sub-as-add", UPat(Ops::SUB, {x, y}), [](const Match& m) { return m["x"] + m["y"] * -1; }},
      {"neg-as-mul", UPat(Ops::NEG, {x}), [](const Match& m) { return m["x"] * -1; }},
      {"normalize-sum", UPat(Ops::ADD).where(is_int), normalize_sum},
      // -(x+y) -> -x + -y, so that a difference of sums cancels term by term
      // (x+y)*c -> x*c + y*c: sums stay linear, so their terms meet normalize_sum (tinygrad's
      // symbolic_flat, for ints only: float inf*0 is NaN)
      {"distribute-const", (UPat(Ops::ADD).named("s").where(is_int)) * c0,
       [](const Match& m) { return m["s"].src(0) * m["c0"] + m["s"].src(1) * m["c0"]; }},
      // operands are in canonical order here, so the constants are the right-hand sources
      {"assoc-consts", UPat::ops(associative, {UPat::ops(associative, {UPat::var("x"), c0}).named("inner"), c1}),
       assoc_consts, [](const Match& m) { return m["inner"].op() == m.root.op() && int_operands(m.root); }},
      {"mul-const-out", (x * c0) * y.where([](const UOp& u) { return !u.is_const(); }),
       [](const Match& m) { return (m["x"] * m["y"]) * m["c0"]; }},
      {"commute", UPat::ops(commutative).where(int_operands), commute},
  });
}

}  // namespace tunebed::symbolic_detail
