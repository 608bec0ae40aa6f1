// UOp interning and lifetime.
//
// The intern table is sharded by hash, each shard a mutex and a multimap from structural hash to
// live nodes. A node is never resurrected: a lookup takes a reference only while the count is
// above zero (compare-and-swap), so once the last handle drops a node it is dead, and a later
// make() of the same structure builds a fresh node. The dying node removes itself from its shard
// by address. Destruction is iterative, so a long chain of UOps does not overflow the stack.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include "core/ir/hash.hpp"
#include "core/ir/range.hpp"
#include "core/ir/uop.hpp"

namespace tunebed {

struct UOpTable {
  static constexpr int kShards = 64;
  struct Shard {
    std::mutex mu;
    std::unordered_multimap<uint64_t, UOpNode*> nodes;
  };
  std::array<Shard, kShards> shards;
  std::atomic<size_t> live{0};

  static UOpTable& get() {
    static UOpTable* table = new UOpTable();  // never destroyed: UOps may outlive static destructors
    return *table;
  }
  Shard& shard(uint64_t h) { return shards[h % kShards]; }

  static bool same(const UOpNode* n, Ops op, const DType& dt, const std::vector<UOp>& src, const Arg& arg) {
    return n->op == op && n->dtype == dt && n->src == src && n->arg == arg;
  }

  UOp intern(Ops op, DType dtype, std::vector<UOp>&& src, const Arg& arg, uint64_t h) {
    Shard& s = shard(h);
    {
      std::lock_guard lock(s.mu);
      auto [lo, hi] = s.nodes.equal_range(h);
      for (auto it = lo; it != hi; ++it) {
        UOpNode* n = it->second;
        if (!same(n, op, dtype, src, arg)) continue;
        int32_t c = n->refs.load(std::memory_order_relaxed);
        while (c > 0 && !n->refs.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel)) {
        }
        if (c > 0) return UOp(n);
      }
    }
    // Build outside the lock: range analysis reads the sources only.
    auto* n = new UOpNode{{1}, op, dtype, std::move(src), arg, h, 0, 0, nullptr};
    try {
      auto [lo, hi] = compute_range(*n);
      n->vmin = lo;
      n->vmax = hi;
    } catch (...) {  // a malformed arg (a DEFINE_VAR without bounds): the node never existed
      delete n;
      throw;
    }
    live.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard lock(s.mu);
    // Another thread may have built the same node meanwhile; keep the first live one.
    auto [first, last] = s.nodes.equal_range(h);
    for (auto it = first; it != last; ++it) {
      UOpNode* o = it->second;
      if (!same(o, n->op, n->dtype, n->src, n->arg)) continue;
      int32_t c = o->refs.load(std::memory_order_relaxed);
      while (c > 0 && !o->refs.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel)) {
      }
      if (c > 0) {
        pending_delete(n);
        return UOp(o);
      }
    }
    s.nodes.emplace(h, n);
    return UOp(n);
  }

  // Called with a node's count at zero: unlink it, then free it and whatever it alone held.
  void release(UOpNode* n) {
    {
      Shard& s = shard(n->hash);
      std::lock_guard lock(s.mu);
      auto [lo, hi] = s.nodes.equal_range(n->hash);
      for (auto it = lo; it != hi; ++it)
        if (it->second == n) {
          s.nodes.erase(it);
          break;
        }
    }
    pending_delete(n);
  }

  // Freeing a node drops its sources' references, which may free them in turn: queue instead of
  // recursing. The queue is a list through the dying nodes themselves, so its thread_locals are
  // trivially destructible and a UOp held by a static can still die after thread_local
  // destructors have run at exit.
  void pending_delete(UOpNode* n) {
    thread_local UOpNode* queue = nullptr;
    thread_local bool draining = false;
    n->dead_next = queue;
    queue = n;
    if (draining) return;
    draining = true;
    while (queue) {
      UOpNode* d = queue;
      queue = d->dead_next;
      live.fetch_sub(1, std::memory_order_relaxed);
      delete d;
    }
    draining = false;
  }
};

UOp::UOp(const UOp& o) noexcept : n_(o.n_) {
  if (n_) n_->refs.fetch_add(1, std::memory_order_relaxed);
}

UOp& UOp::operator=(const UOp& o) noexcept {
  if (o.n_) o.n_->refs.fetch_add(1, std::memory_order_relaxed);
  UOpNode* old = std::exchange(n_, o.n_);
  if (old && old->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) UOpTable::get().release(old);
  return *this;
}

UOp& UOp::operator=(UOp&& o) noexcept {
  if (this == &o) return *this;
  UOpNode* old = std::exchange(n_, std::exchange(o.n_, nullptr));
  if (old && old->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) UOpTable::get().release(old);
  return *this;
}

UOp::~UOp() {
  if (n_ && n_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) UOpTable::get().release(n_);
}

size_t live_uop_count() { return UOpTable::get().live.load(); }

UOp UOp::make(Ops op, DType dtype, std::vector<UOp> src) { return make(op, dtype, std::move(src), Arg()); }

UOp UOp::make(Ops op, DType dtype, std::vector<UOp> src, const Arg& arg) {
  uint64_t h = hash_mix(static_cast<uint64_t>(op) + 1, hash_value(dtype));
  h = hash_mix(h, arg.hash());
  for (const UOp& s : src) {
    if (!s) throw std::invalid_argument(std::string("null source of ") + std::string(op_name(op)));
    h = hash_mix(h, s.hash());
  }
  return UOpTable::get().intern(op, dtype, std::move(src), arg, h);
}

UOp UOp::const_int(DType dtype, int64_t v) {
  if (dtype.is_float()) return const_float(dtype, static_cast<double>(v));
  if (dtype.scalar_type().is_bool()) return make(Ops::CONST, dtype, {}, Arg(v != 0));
  return make(Ops::CONST, dtype, {}, Arg(wrap_int(v, dtype.scalar_type())));
}

UOp UOp::const_float(DType dtype, double v) {
  if (!dtype.is_float()) return const_int(dtype, float_to_int(v));
  if (std::isnan(v)) v = std::numeric_limits<double>::quiet_NaN();  // one NaN, so NaN consts intern
  return make(Ops::CONST, dtype, {}, Arg(round_float(v, dtype.scalar_type())));
}

UOp UOp::const_bool(bool v) { return make(Ops::CONST, dtypes::bool_, {}, Arg(v)); }
UOp UOp::index(int64_t v) { return const_int(dtypes::index, v); }

UOp UOp::variable(const std::string& name, int64_t min, int64_t max, DType dtype) {
  if (min > max) throw std::invalid_argument("variable " + name + " has min > max");
  return make(Ops::DEFINE_VAR, dtype, {}, Arg::tuple({Arg(name), Arg(min), Arg(max)}));
}

bool UOp::is_const(int64_t v) const { return is_const() && const_value() == static_cast<double>(v); }

double UOp::const_value() const {
  if (!is_const()) throw std::invalid_argument("const_value of " + std::string(op_name(op())));
  return arg().as_number();
}

int64_t UOp::const_int() const {
  if (!is_const() || arg().is<double>()) throw std::invalid_argument("const_int of a non-integer UOp");
  return arg().is<bool>() ? arg().as_bool() : arg().as_int();
}

std::vector<UOp> UOp::toposort() const {
  std::vector<UOp> out;
  std::unordered_map<const UOpNode*, bool> seen;
  // Iterative DFS: (node, next source to visit).
  std::vector<std::pair<const UOp*, size_t>> stack{{this, 0}};
  seen[n_] = true;
  while (!stack.empty()) {
    auto& [u, i] = stack.back();
    if (i < u->src().size()) {
      const UOp& s = u->src()[i++];
      if (seen.emplace(s.get(), true).second) stack.emplace_back(&s, 0);
      continue;
    }
    out.push_back(*u);
    stack.pop_back();
  }
  return out;
}

UOp UOp::with_src(std::vector<UOp> s) const { return make(op(), dtype(), std::move(s), arg()); }
UOp UOp::with_arg(const Arg& a) const { return make(op(), dtype(), src(), a); }
UOp UOp::with_dtype(DType d) const { return make(op(), d, src(), arg()); }

// ---- building expressions ------------------------------------------------------------------

UOp UOp::const_like(int64_t v) const { return const_int(dtype(), v); }
UOp UOp::const_like_float(double v) const { return const_float(dtype(), v); }

UOp UOp::alu(Ops op, const UOp& b) const {
  DType out = GroupOp::Comparison.contains(op) ? dtypes::bool_.vec(dtype().count) : dtype();
  return make(op, out, {*this, b});
}

UOp UOp::alu(Ops op) const { return make(op, dtype(), {*this}); }

UOp UOp::lt(const UOp& b) const { return alu(Ops::CMPLT, b); }
UOp UOp::lt(int64_t b) const { return lt(const_like(b)); }
UOp UOp::ne(const UOp& b) const { return alu(Ops::CMPNE, b); }
UOp UOp::ne(int64_t b) const { return ne(const_like(b)); }
UOp UOp::eq(const UOp& b) const { return alu(Ops::CMPEQ, b); }
UOp UOp::eq(int64_t b) const { return eq(const_like(b)); }
UOp UOp::max(const UOp& b) const { return alu(Ops::MAX, b); }
UOp UOp::min(const UOp& b) const { return -((-*this).max(-b)); }
UOp UOp::where(const UOp& a, const UOp& b) const { return make(Ops::WHERE, a.dtype(), {*this, a, b}); }
UOp UOp::cast(DType d) const { return d == dtype() ? *this : make(Ops::CAST, d, {*this}); }
UOp UOp::logical_not() const { return ne(const_bool(true)); }

UOp operator+(const UOp& a, const UOp& b) { return a.alu(Ops::ADD, b); }
UOp operator+(const UOp& a, int64_t b) { return a + a.const_like(b); }
UOp operator+(int64_t a, const UOp& b) { return b.const_like(a) + b; }
UOp operator-(const UOp& a, const UOp& b) { return a + (-b); }
UOp operator-(const UOp& a, int64_t b) { return a + a.const_like(-b); }
UOp operator-(int64_t a, const UOp& b) { return b.const_like(a) + (-b); }
UOp operator-(const UOp& a) { return a.dtype().is_bool() ? a.logical_not() : a * a.const_like(-1); }
UOp operator*(const UOp& a, const UOp& b) { return a.alu(Ops::MUL, b); }
UOp operator*(const UOp& a, int64_t b) { return a * a.const_like(b); }
UOp operator*(int64_t a, const UOp& b) { return b.const_like(a) * b; }
UOp operator/(const UOp& a, const UOp& b) { return a.alu(a.dtype().is_float() ? Ops::FDIV : Ops::IDIV, b); }
UOp operator/(const UOp& a, int64_t b) { return a / a.const_like(b); }
UOp operator%(const UOp& a, const UOp& b) { return a.alu(Ops::MOD, b); }
UOp operator%(const UOp& a, int64_t b) { return a % a.const_like(b); }
UOp operator&(const UOp& a, const UOp& b) { return a.alu(Ops::AND, b); }
UOp operator|(const UOp& a, const UOp& b) { return a.alu(Ops::OR, b); }
UOp operator^(const UOp& a, const UOp& b) { return a.alu(Ops::XOR, b); }

}  // namespace tunebed
