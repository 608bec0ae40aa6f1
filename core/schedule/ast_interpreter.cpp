// The AST interpreter (see ast_interpreter.hpp): a direct, index-by-index evaluation of a kernel.
#include "core/schedule/ast_interpreter.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <future>
#include <memory>
#include <optional>
#include <unordered_map>

#include "core/ir/error_bound.hpp"
#include "core/ir/exec_alu.hpp"
#include "core/schedule/uop_st.hpp"

namespace tunebed {
namespace {

using sched::view_st;

[[noreturn]] void fail(const UOp& u, const std::string& what) {
  throw AstInterpreterError(std::string(op_name(u.op())) + ": " + what);
}

// An index expression (over RANGE leaves, arg = axis) flattened into evaluation order, with the
// DEFINE_VARs already bound. Index arithmetic is integer and runs once per element and view, so
// the integer ops are computed here directly, each result wrapped to its dtype as exec_alu does
// (C's truncating division, x//0 == 0, x%0 == x); anything else goes through exec_alu.
class IndexProgram {
 public:
  IndexProgram(const UOp& root, const VarVals& vars) {
    std::unordered_map<const UOpNode*, int> at;
    for (const UOp& u : root.toposort()) {
      Node n{u.op(), u.dtype(), {}, -1, 0};
      for (const UOp& s : u.src()) n.src.push_back(at.at(s.get()));
      if (u.op() == Ops::RANGE)
        n.axis = u.arg().as_int();
      else if (u.op() == Ops::CONST)
        n.value = ConstValue::of(u).i;
      else if (u.op() == Ops::DEFINE_VAR)
        n.value = var_value(u, vars);
      else if (!GroupOp::ALU.contains(u.op()) && u.op() != Ops::CAST)
        fail(u, "not an index expression");
      if (u.dtype().is_float()) fail(u, "a float in an index expression");
      at.emplace(u.get(), static_cast<int>(nodes_.size()));
      nodes_.push_back(std::move(n));
    }
    values_.resize(nodes_.size());
  }

  static int64_t var_value(const UOp& v, const VarVals& vars) {
    const std::string& name = v.arg().as_tuple().at(0).as_string();
    auto it = vars.find(name);
    const int64_t x = it == vars.end() ? v.vmin() : it->second;
    if (x < v.vmin() || x > v.vmax())
      throw AstInterpreterError("variable " + name + "=" + std::to_string(x) + " is outside [" +
                                std::to_string(v.vmin()) + ", " + std::to_string(v.vmax()) + "]");
    return x;
  }

  int64_t eval(const int64_t* idx) const {
    for (size_t k = 0; k < nodes_.size(); k++) {
      const Node& n = nodes_[k];
      if (n.op == Ops::RANGE) {
        values_[k] = idx[n.axis];
        continue;
      }
      if (n.src.empty()) {
        values_[k] = n.value;
        continue;
      }
      const int64_t a = values_[static_cast<size_t>(n.src[0])];
      const int64_t b = n.src.size() > 1 ? values_[static_cast<size_t>(n.src[1])] : 0;
      int64_t r;
      switch (n.op) {
        case Ops::ADD:
          r = static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
          break;
        case Ops::MUL:
          r = static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
          break;
        case Ops::IDIV:
          r = b == 0 ? 0 : (b == -1 ? static_cast<int64_t>(0 - static_cast<uint64_t>(a)) : a / b);
          break;
        case Ops::MOD:
          r = b == 0 ? a : (b == -1 ? 0 : a % b);
          break;
        case Ops::MAX:
          r = std::max(a, b);
          break;
        case Ops::CMPLT:
          r = a < b;
          break;
        case Ops::CMPNE:
          r = a != b;
          break;
        case Ops::AND:
          r = a & b;
          break;
        case Ops::OR:
          r = a | b;
          break;
        case Ops::XOR:
          r = a ^ b;
          break;
        case Ops::WHERE:
          r = a ? b : values_[static_cast<size_t>(n.src[2])];
          break;
        default: {
          std::array<ConstValue, 3> ops;
          for (size_t i = 0; i < n.src.size(); i++) {
            const Node& s = nodes_[static_cast<size_t>(n.src[i])];
            ops[i] = ConstValue::integer(s.dtype, values_[static_cast<size_t>(n.src[i])]);
          }
          values_[k] = exec_alu(n.op, n.dtype, std::span(ops.data(), n.src.size())).i;
          continue;
        }
      }
      values_[k] = n.dtype.is_bool() ? r : wrap_int(r, n.dtype);
    }
    return values_.back();
  }

 private:
  struct Node {
    Ops op;
    DType dtype;
    std::vector<int> src;
    int64_t axis;
    int64_t value;
  };
  std::vector<Node> nodes_;
  mutable std::vector<int64_t> values_;
};

int64_t concrete(const sint& s, const VarVals& vars) {
  return s.is_int() ? s.to_int() : IndexProgram(s.uop(), vars).eval(nullptr);
}

// One VIEW of the AST: its shape and the map from index to buffer position. A tracker with integer
// shapes is evaluated directly on its views (IntTracker); one with variables through its (index,
// valid) expressions, with the variables bound.
struct ViewIndex {
  std::vector<int64_t> shape;
  bool injective = false;  // distinct indices reach distinct positions (a contiguous view)
  std::optional<IntTracker> direct;
  std::optional<IndexProgram> idx, valid;  // where not direct
};

ViewIndex make_view_index(const ShapeTracker& st, const VarVals& vars) {
  ViewIndex vi;
  for (const sint& s : st.shape()) vi.shape.push_back(concrete(s, vars));
  vi.injective = st.contiguous();
  if (IntTracker::concrete(st)) {
    vi.direct.emplace(st);
  } else {
    auto [idx, valid] = st.to_indexed_uops();
    vi.idx.emplace(idx, vars);
    vi.valid.emplace(valid, vars);
  }
  return vi;
}

// tinygrad's threefry2x32 (uop/symbolic.py), on the uint64 bit patterns of x and key.
uint64_t threefry2x32(uint64_t x, uint64_t key) {
  const uint32_t key0 = static_cast<uint32_t>(key), key1 = static_cast<uint32_t>(key >> 32);
  const std::array<uint32_t, 3> ks{key1, key0 ^ key1 ^ 0x1BD11BDAu, key0};
  const int rotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  uint32_t x0 = static_cast<uint32_t>(x) + ks[2], x1 = static_cast<uint32_t>(x >> 32) + ks[0];
  for (uint32_t i = 0; i < 5; i++) {
    for (int r : rotations[i % 2]) {
      x0 += x1;
      x1 = x0 ^ ((x1 << r) | (x1 >> (32 - r)));
    }
    x0 += ks[i % 3];
    x1 += ks[(i + 1) % 3] + i + 1;
  }
  return (static_cast<uint64_t>(x1) << 32) | x0;
}

ConstValue read(const HostBuffer& b, int64_t pos, const DType& as) {
  return b.dtype.is_float() ? ConstValue::real(as, b.get_float(pos))
                            : ConstValue::integer(as, b.get_int(pos));
}

void write(HostBuffer& b, int64_t pos, const ConstValue& v) {
  if (b.dtype.is_float())
    b.set_float(pos, v.as_double());
  else if (v.dtype.is_float())
    b.set_float(pos, v.f);
  else
    b.set_int(pos, v.i);
}

ConstValue bitcast(const ConstValue& v, const DType& to) {
  HostBuffer from(v.dtype, 1), out(to, 1);
  write(from, 0, v);
  if (from.bytes.size() != out.bytes.size())
    throw AstInterpreterError("BITCAST between dtypes of different sizes");
  out.bytes = from.bytes;
  return read(out, 0, to);
}

ConstValue identity_element(Ops op, const DType& d) {
  if (op == Ops::ADD) return d.is_float() ? ConstValue::real(d, 0) : ConstValue::integer(d, 0);
  if (op == Ops::MUL) return d.is_float() ? ConstValue::real(d, 1) : ConstValue::integer(d, 1);
  return d.is_float() ? ConstValue::real(d, d.min_value()) : ConstValue::integer(d, d.int_min());
}

// The dtype a value is held in: its own, or float64 for floats in an exact run.
DType held_as(const DType& d, bool exact) { return exact && d.is_float() ? dtypes::float64 : d; }

// One kernel, compiled: the AST's nodes in evaluation order with their sources as indices, each
// VIEW's index programs, and per node a cached value stamped with the index it was computed at.
// An exact run (BOUNDS given, one per buffer) holds floats as float64 and carries with every
// value its error bound (core/ir/error_bound.hpp); buffers are then float64 too.
class KernelRun {
 public:
  KernelRun(const UOp& ast, const std::vector<HostBuffer*>& bufs, const VarVals& vars,
            const std::vector<HostBuffer*>* bounds = nullptr, int64_t sample_stride = 1)
      : bufs_(bufs), vars_(vars), bounds_(bounds), exact_(bounds != nullptr), sample_stride_(sample_stride) {
    std::unordered_map<const UOpNode*, int> at;
    for (const UOp& u : ast.toposort()) {
      Node n{u, u.op(), held_as(u.dtype(), exact_), {}, -1, nullptr, nullptr, nullptr, {}, -1};
      for (const UOp& s : u.src()) n.src.push_back(at.at(s.get()));
      if (u.op() == Ops::REDUCE_AXIS) n.axes = sched::reduce_axes(u);
      if (u.op() == Ops::VIEW && u.arg().try_object<ShapeTracker>()) {
        views_.push_back(make_view_index(view_st(u), vars));
        const std::vector<int64_t>& shape = views_.back().shape;
        if (full_shape_.size() < shape.size()) full_shape_.resize(shape.size(), 1);
        for (size_t i = 0; i < shape.size(); i++) full_shape_[i] = std::max(full_shape_[i], shape[i]);
      }
      at.emplace(u.get(), static_cast<int>(nodes_.size()));
      nodes_.push_back(std::move(n));
    }
    // the view and buffer each LOAD, STORE and VALID reads through (older form: beside the buffer)
    int view_count = 0;
    for (Node& n : nodes_) {
      if (n.u.op() == Ops::VIEW && n.u.arg().try_object<ShapeTracker>()) n.view = view_count++;
    }
    for (Node& n : nodes_) {
      const Ops op = n.u.op();
      if (op != Ops::LOAD && op != Ops::STORE && op != Ops::VALID) continue;
      for (int s : n.src) {
        const Node& src = nodes_[static_cast<size_t>(s)];
        if (src.u.op() == Ops::VIEW && src.view >= 0) n.view = src.view;
        if (src.u.op() == Ops::DEFINE_GLOBAL) n.buffer = &buffer(src.u);
        if (src.u.op() == Ops::VIEW && !src.u.src().empty() && src.u.src(0).op() == Ops::DEFINE_GLOBAL)
          n.buffer = &buffer(src.u.src(0));
      }
      if (n.view < 0) fail(n.u, "no VIEW with a ShapeTracker");
      if (op != Ops::VALID && !n.buffer) fail(n.u, "no DEFINE_GLOBAL");
      if (exact_ && n.buffer) n.bound = bound_of(*n.buffer);
    }
    // A LOAD of exact data (every bound 0, and no STORE of this kernel writes it) skips reading
    // its bounds: half of an exact run's memory traffic, on the inputs a check draws.
    for (Node& n : nodes_) {
      if (n.op != Ops::LOAD || !n.bound || !all_zero(*n.bound)) continue;
      const bool stored = std::any_of(nodes_.begin(), nodes_.end(),
                                      [&](const Node& st) { return st.op == Ops::STORE && st.buffer == n.buffer; });
      if (!stored) n.bound = nullptr;
    }
    for (Node& n : nodes_)
      if (n.op == Ops::LOAD && n.held == dtypes::float64 && n.buffer->dtype == dtypes::float64)
        n.f64 = reinterpret_cast<const double*>(n.buffer->bytes.data());
    for (size_t k = 0; k < nodes_.size(); k++)
      if (nodes_[k].op == Ops::REDUCE_AXIS) {
        nodes_[k].plan = static_cast<int>(plans_.size());
        plans_.push_back(plan_lanes(nodes_[k]));
      }
    idx_.assign(full_shape_.size(), 0);
    scratch_.assign(full_shape_.size(), 0);
    values_.resize(nodes_.size());
    errors_.assign(nodes_.size(), 0);
    stamps_.assign(nodes_.size(), UINT64_MAX);
  }

  // Runs the kernel, or part PART of PARTS of every STORE's index space (splittable() first).
  void run(int64_t part = 0, int64_t parts = 1) {
    const Node& sink = nodes_.back();
    for (int s : sink.src) {
      if (nodes_[static_cast<size_t>(s)].u.op() != Ops::STORE)
        fail(nodes_[static_cast<size_t>(s)].u, "a kernel AST is a SINK of STOREs");
      store(nodes_[static_cast<size_t>(s)], part, parts);
    }
  }

  // Whether the parts of run() may run at once, each in a KernelRun of its own (exact_run_splits).
  bool splittable() const {
    for (const Node& st : nodes_) {
      if (st.op != Ops::STORE) continue;
      if (!views_[static_cast<size_t>(st.view)].injective) return false;
      for (const Node& ld : nodes_)
        if (ld.op == Ops::LOAD && ld.buffer == st.buffer) return false;
    }
    return true;
  }

 private:
  struct Node {
    UOp u;
    Ops op;      // u's, and the dtype its value is held in: read per element, kept beside it
    DType held;
    std::vector<int> src;
    int view;                   // VIEW: its index into views_; LOAD/STORE/VALID: the view they use
    HostBuffer* buffer;         // LOAD/STORE: the buffer
    HostBuffer* bound;          // LOAD/STORE of an exact run: the buffer's bounds
    const double* f64;          // LOAD of a float64 buffer into a float64 value: its data
    std::vector<int64_t> axes;  // REDUCE_AXIS: the reduced axes
    int plan;                   // REDUCE_AXIS: its LanePlan in plans_

    const DType& src_dtype(const std::vector<Node>& nodes, size_t i) const {
      return nodes[static_cast<size_t>(src.at(i))].u.dtype();
    }
  };

  void store(const Node& st, int64_t part, int64_t parts) {
    const std::vector<int64_t>& shape = views_[static_cast<size_t>(st.view)].shape;
    if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return;
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    const int64_t begin = n / parts * part + std::min(part, n % parts);
    const int64_t end = begin + n / parts + (part < n % parts ? 1 : 0);
    std::vector<int64_t> at(shape.size(), 0);
    for (size_t d = shape.size(), rest = static_cast<size_t>(begin); d-- > 0;) {
      at[d] = static_cast<int64_t>(rest % static_cast<size_t>(shape[d]));
      rest /= static_cast<size_t>(shape[d]);
    }
    for (int64_t k = begin; k < end; k++) {
      std::copy(at.begin(), at.end(), idx_.begin());
      epoch_++;
      auto [pos, ok] = locate(st.view);
      if (ok && k % sample_stride_ != 0) {  // not sampled: nothing is known of it
        check_bounds(st.u, *st.buffer, pos);
        st.bound->set_float(pos, NAN);
      } else if (ok) {
        check_bounds(st.u, *st.buffer, pos);
        write(*st.buffer, pos, eval(st.src.back()));
        if (st.bound) st.bound->set_float(pos, errors_[static_cast<size_t>(st.src.back())]);
      }
      size_t d = shape.size();
      while (d > 0 && ++at[d - 1] == shape[d - 1]) at[--d] = 0;
    }
  }

  HostBuffer& buffer(const UOp& g) {
    const int64_t i = g.arg().as_int();
    if (i < 0 || static_cast<size_t>(i) >= bufs_.size() || !bufs_[static_cast<size_t>(i)])
      throw AstInterpreterError("DEFINE_GLOBAL " + std::to_string(i) + ": no buffer given");
    return *bufs_[static_cast<size_t>(i)];
  }

  // The bounds buffer beside B in an exact run.
  HostBuffer* bound_of(const HostBuffer& b) const {
    for (size_t i = 0; i < bufs_.size(); i++)
      if (bufs_[i] == &b) {
        HostBuffer* e = i < bounds_->size() ? (*bounds_)[i] : nullptr;
        if (!e || e->numel() != b.numel()) break;
        return e;
      }
    throw AstInterpreterError("an exact run needs a bounds buffer of the same length beside every buffer");
  }

  static bool all_zero(const HostBuffer& bounds) {
    for (int64_t i = 0; i < bounds.numel(); i++)
      if (bounds.get_float(i) != 0) return false;
    return true;
  }

  static void check_bounds(const UOp& u, const HostBuffer& b, int64_t pos) {
    if (!b.holds(pos)) [[unlikely]]
      outside(u, b, pos);
  }
  [[noreturn, gnu::noinline]] static void outside(const UOp& u, const HostBuffer& b, int64_t pos) {
    fail(u, "position " + std::to_string(pos) + " is outside its buffer of " + std::to_string(b.numel()));
  }

  // The position a view maps the current index to, and whether it is valid there. An axis the
  // view has as 1 (a reduced axis of the output) reads index 0.
  std::pair<int64_t, bool> locate(int view) {
    const ViewIndex& vi = views_[static_cast<size_t>(view)];
    for (size_t i = 0; i < vi.shape.size(); i++) scratch_[i] = vi.shape[i] == 1 ? 0 : idx_[i];
    if (vi.direct) {
      const std::optional<int64_t> pos = vi.direct->position(scratch_.data());
      return {pos.value_or(0), pos.has_value()};
    }
    if (!vi.valid->eval(scratch_.data())) return {0, false};
    return {vi.idx->eval(scratch_.data()), true};
  }

  const ConstValue& eval(int k) {
    const size_t i = static_cast<size_t>(k);
    if (stamps_[i] != epoch_) {
      double error = 0;
      ConstValue v = compute(nodes_[i], error);
      values_[i] = v;
      errors_[i] = error;
      stamps_[i] = epoch_;
    }
    return values_[i];
  }

  // What LOAD N reads at position POS (kHidden: a mask hides it, 0); an exact run sets ERROR.
  ConstValue load(const Node& n, int64_t pos, double& error) const {
    const DType& held = n.held;
    if (pos == IntTracker::kHidden) return held.is_float() ? ConstValue::real(held, 0) : ConstValue::integer(held, 0);
    check_bounds(n.u, *n.buffer, pos);
    if (n.bound) error = n.bound->get_float(pos);
    return n.f64 ? ConstValue{held, 0, n.f64[pos]} : read(*n.buffer, pos, held);
  }

  // Node N's value at the current index; an exact run also sets ERROR, its bound.
  ConstValue compute(const Node& n, double& error) {
    const UOp& u = n.u;
    switch (n.op) {
      case Ops::CONST: {
        const ConstValue c = ConstValue::of(u);
        return exact_ && c.dtype.is_float() ? ConstValue::real(dtypes::float64, c.f) : c;
      }
      case Ops::DEFINE_VAR:
        return ConstValue::integer(u.dtype(), IndexProgram::var_value(u, vars_));
      case Ops::VALID:
        return ConstValue::integer(dtypes::bool_, locate(n.view).second);
      case Ops::LOAD: {
        auto [pos, ok] = locate(n.view);
        return load(n, ok ? pos : IntTracker::kHidden, error);
      }
      case Ops::REDUCE_AXIS:
        return reduce(n, error);
      case Ops::BITCAST: {
        ConstValue v = eval(n.src[0]);
        const DType& from = n.src_dtype(nodes_, 0);
        if (exact_ && errors_[static_cast<size_t>(n.src[0])] > 0) error = INFINITY;
        if (exact_ && from.is_float()) v = ConstValue::real(from, v.f);  // the kernel's bits
        const ConstValue r = bitcast(v, u.dtype());
        return exact_ && r.dtype.is_float() ? ConstValue::real(dtypes::float64, r.f) : r;
      }
      case Ops::THREEFRY: {
        const uint64_t x = static_cast<uint64_t>(eval(n.src[0]).i),
                       key = static_cast<uint64_t>(eval(n.src[1]).i);
        if (exact_ && errors_[static_cast<size_t>(n.src[0])] + errors_[static_cast<size_t>(n.src[1])] > 0)
          error = INFINITY;  // a hash of an inexact value: anything may come out
        return ConstValue::integer(u.dtype(), static_cast<int64_t>(threefry2x32(x, key)));
      }
      default:
        break;
    }
    if (!GroupOp::ALU.contains(n.op) && n.op != Ops::CAST) fail(u, "not supported by the AST interpreter");
    if (n.op == Ops::WHERE) {  // only the branch taken, unless the condition may flip
      const int cond = n.src[0];
      const int taken = n.src[eval(cond).truthy() ? 1 : 2];
      if (errors_[static_cast<size_t>(cond)] == 0) {
        const ConstValue v = eval(taken);
        error = errors_[static_cast<size_t>(taken)];
        return v;
      }
    }
    std::array<ConstValue, 3> ops;
    std::array<double, 3> errors{};
    for (size_t i = 0; i < n.src.size(); i++) {
      ops[i] = eval(n.src[i]);
      errors[i] = errors_[static_cast<size_t>(n.src[i])];
    }
    return apply_alu(n, ops, errors, error);
  }

  // ALU or CAST node N on its operands' values OPS and bounds ERRORS; an exact run sets ERROR.
  ConstValue apply_alu(const Node& n, const std::array<ConstValue, 3>& ops, const std::array<double, 3>& errors,
                       double& error) const {
    const ConstValue r = alu(n, ops);
    if (exact_)
      error = alu_error_bound(n.op, n.u.dtype(), n.src_dtype(nodes_, 0), std::span(ops.data(), n.src.size()),
                              std::span(errors.data(), n.src.size()), r);
    return r;
  }

  // An ADD or MUL held in float64 on operands held in float64: an exact run's most frequent ops.
  bool float64_arithmetic(const Node& n) const {
    return (n.op == Ops::ADD || n.op == Ops::MUL) && n.held == dtypes::float64 &&
           nodes_[static_cast<size_t>(n.src[0])].held == dtypes::float64 &&
           nodes_[static_cast<size_t>(n.src[1])].held == dtypes::float64;
  }

  // exec_alu, with float64 addition and multiplication (an exact run's most frequent ops) inline.
  static ConstValue alu(const Node& n, const std::array<ConstValue, 3>& ops) {
    if (n.held == dtypes::float64 && (n.op == Ops::ADD || n.op == Ops::MUL) && ops[0].dtype == dtypes::float64 &&
        ops[1].dtype == dtypes::float64)
      return {n.held, 0, n.op == Ops::ADD ? ops[0].f + ops[1].f : ops[0].f * ops[1].f};
    return exec_alu(n.op, n.held, std::span(ops.data(), n.src.size()));
  }

  // Loops over the reduced axes (each over the full shape's extent) with the other axes fixed, the
  // innermost a block of lanes at a time (eval_lanes), adding the terms in index order as a loop
  // of one term at a time would. An exact run bounds a float sum as a whole (SumBound: any order)
  // and other reduces step by step.
  ConstValue reduce(const Node& n, double& error) {
    const Ops op = sched::reduce_op(n.u);
    const std::vector<int64_t>& axes = n.axes;
    const std::vector<int64_t> saved = idx_;
    const DType d = n.u.dtype();
    ConstValue acc = identity_element(op, held_as(d, exact_));
    LanePlan& plan = plans_[static_cast<size_t>(n.plan)];
    SumBound& sum = plan.sum;
    sum.clear();
    const bool float_sum = exact_ && op == Ops::ADD && d.is_float();
    for (int64_t a : axes) {
      if (a < 0 || static_cast<size_t>(a) >= idx_.size())
        fail(n.u, "axis " + std::to_string(a) + " out of range");
      if (full_shape_[static_cast<size_t>(a)] == 0) return acc;
      idx_[static_cast<size_t>(a)] = 0;
    }
    const int64_t extent = plan.axis < 0 ? 1 : full_shape_[static_cast<size_t>(plan.axis)];
    const int root = n.src[0];
    for (;;) {
      for (int64_t base = 0; base < extent; base += kLanes) {
        const int64_t count = std::min(kLanes, extent - base);
        eval_lanes(plan, base, count);
        const LaneRef terms = plan.lanes(root);
        for (int64_t j = 0; j < count; j++) {
          const ConstValue& term = terms.value(j);
          const double term_error = terms.error(j);
          if (float_sum) {  // float64 addition, as exec_alu's
            acc.f += term.f;
            sum.add(term.f, term_error);
          } else {
            const std::array<ConstValue, 2> pair{acc, term};
            acc = exec_alu(op, held_as(d, exact_), pair);
            if (exact_) {
              const std::array<double, 2> errors{error, term_error};
              error = alu_error_bound(op, d, d, pair, errors, acc);
            }
          }
        }
      }
      size_t k = axes.empty() ? 0 : axes.size() - 1;  // the outer reduced axes, as an odometer
      while (k > 0) {
        const size_t a = static_cast<size_t>(axes[k - 1]);
        if (++idx_[a] < full_shape_[a]) break;
        idx_[a] = 0;
        k--;
      }
      if (k == 0) break;
    }
    idx_ = saved;
    epoch_++;
    if (float_sum) error = sum.bound(d);
    return acc;
  }

  // One node's lanes in a LanePlan: lane j at j * step (step 0: the same in every lane).
  struct LaneRef {
    ConstValue* values;
    double* errors;
    int64_t step;
    const ConstValue& value(int64_t j) const { return values[j * step]; }
    double error(int64_t j) const { return errors[j * step]; }
    void keep(int64_t j, const ConstValue& v, double e) const {
      values[j * step] = v;
      errors[j * step] = e;
    }
  };

  // How a reduce computes its terms kLanes at a time: lane j is the term at index base + j of its
  // innermost reduced axis, the other axes as they stand. A node reached from the term through
  // nodes computed lane by lane is kept, in one of three ways:
  //   once      it does not vary along the axis: computed at the block's index, read by every lane
  //   lanewise  a LOAD, VALID, ALU or CAST that varies: one pass over the lanes, its operands
  //             read from theirs (the interpreter's dispatch and caching paid once per block)
  //   per lane  anything else that varies (a WHERE computes only the branch it takes, a nested
  //             reduce loops): the per-index evaluation, once per lane
  // A node is computed as the per-index evaluation would compute it, so the terms are the same.
  struct LanePlan {
    int64_t axis = -1;  // the lane axis; -1 for a reduce of no axes (one term)
    std::vector<int> slot;  // per node: where its lanes are kept, -1 where they are not
    std::vector<bool> once_of_slot;
    std::vector<int> once, lanewise, per_lane;  // the kept nodes, in evaluation order
    std::vector<ConstValue> values;             // kLanes per slot
    std::vector<double> errors;
    SumBound sum;  // the reduce's, kept to keep its memory

    // Node K's lanes.
    LaneRef lanes(int k) {
      const size_t s = static_cast<size_t>(slot[static_cast<size_t>(k)]);
      return {&values[s * kLanes], &errors[s * kLanes], once_of_slot[s] ? 0 : 1};
    }
  };
  static constexpr int64_t kLanes = 64;

  LanePlan plan_lanes(const Node& reduce) const {
    LanePlan plan;
    plan.axis = reduce.axes.empty() ? -1 : reduce.axes.back();
    // whether each node varies along the axis (a nested reduce: whenever its terms do)
    std::vector<bool> varies(nodes_.size(), false);
    for (size_t k = 0; k < nodes_.size() && plan.axis >= 0; k++) {
      const Node& n = nodes_[k];
      if (n.op == Ops::LOAD || n.op == Ops::VALID) {
        const std::vector<int64_t>& shape = views_[static_cast<size_t>(n.view)].shape;
        varies[k] = static_cast<size_t>(plan.axis) < shape.size() && shape[static_cast<size_t>(plan.axis)] != 1;
      } else if (n.op != Ops::VIEW && n.op != Ops::DEFINE_GLOBAL) {
        for (int s : n.src) varies[k] = varies[k] || varies[static_cast<size_t>(s)];
      }
    }
    plan.slot.assign(nodes_.size(), -1);
    std::vector<int> pending{reduce.src[0]};
    while (!pending.empty()) {
      const int k = pending.back();
      pending.pop_back();
      if (plan.slot[static_cast<size_t>(k)] >= 0) continue;
      plan.slot[static_cast<size_t>(k)] = static_cast<int>(plan.once_of_slot.size());
      const Node& n = nodes_[static_cast<size_t>(k)];
      const bool lanewise = n.op == Ops::LOAD || n.op == Ops::VALID || n.op == Ops::CAST ||
                            (GroupOp::ALU.contains(n.op) && n.op != Ops::WHERE);
      plan.once_of_slot.push_back(!varies[static_cast<size_t>(k)]);
      if (!varies[static_cast<size_t>(k)]) {
        plan.once.push_back(k);
      } else if (!lanewise) {
        plan.per_lane.push_back(k);
      } else {
        plan.lanewise.push_back(k);
        if (n.op != Ops::LOAD && n.op != Ops::VALID) pending.insert(pending.end(), n.src.begin(), n.src.end());
      }
    }
    std::sort(plan.lanewise.begin(), plan.lanewise.end());  // sources first: nodes_ is in topological order
    plan.values.resize(plan.once_of_slot.size() * kLanes);
    plan.errors.assign(plan.values.size(), 0);
    return plan;
  }

  // Computes PLAN's kept nodes for lanes [0, COUNT) at BASE along its axis (see LanePlan).
  void eval_lanes(LanePlan& plan, int64_t base, int64_t count) {
    const size_t axis = static_cast<size_t>(plan.axis);
    for (int k : plan.per_lane)
      for (int64_t j = 0; j < count; j++) {
        idx_[axis] = base + j;
        epoch_++;
        plan.lanes(k).keep(j, eval(k), errors_[static_cast<size_t>(k)]);
      }
    if (plan.axis >= 0) idx_[axis] = base;
    epoch_++;
    for (int k : plan.once) plan.lanes(k).keep(0, eval(k), errors_[static_cast<size_t>(k)]);
    for (int k : plan.lanewise) {
      const Node& n = nodes_[static_cast<size_t>(k)];
      const LaneRef out = plan.lanes(k);
      const ViewIndex* view = n.view >= 0 ? &views_[static_cast<size_t>(n.view)] : nullptr;
      if (n.op == Ops::LOAD && view->direct) {  // positions along the axis in one walk of the view
        for (size_t i = 0; i < view->shape.size(); i++) scratch_[i] = view->shape[i] == 1 ? 0 : idx_[i];
        view->direct->positions_along(scratch_.data(), axis, count, positions_.data());
        if (n.f64 && !n.bound) {  // exact float64 data (a check's inputs): load()'s path, inline
          for (int64_t j = 0; j < count; j++) {
            const int64_t pos = positions_[static_cast<size_t>(j)];
            if (pos != IntTracker::kHidden) check_bounds(n.u, *n.buffer, pos);
            out.keep(j, ConstValue{n.held, 0, pos == IntTracker::kHidden ? 0.0 : n.f64[pos]}, 0);
          }
          continue;
        }
        for (int64_t j = 0; j < count; j++) {
          double error = 0;
          out.keep(j, load(n, positions_[static_cast<size_t>(j)], error), error);
        }
        continue;
      }
      if (float64_arithmetic(n)) {  // on the doubles, the bound by its rule
        const LaneRef x = plan.lanes(n.src[0]), y = plan.lanes(n.src[1]);
        const bool add = n.op == Ops::ADD;
        std::array<double, kLanes> a, b, ea, eb, r, e{};
        for (int64_t j = 0; j < count; j++) {
          a[j] = x.value(j).f, b[j] = y.value(j).f, ea[j] = x.error(j), eb[j] = y.error(j);
          r[j] = add ? a[j] + b[j] : a[j] * b[j];
        }
        const auto lanes = [count](auto& v) { return std::span(v.data(), static_cast<size_t>(count)); };
        if (exact_ && add) add_error_bounds(n.u.dtype(), lanes(ea), lanes(eb), lanes(r), lanes(e));
        if (exact_ && !add) mul_error_bounds(n.u.dtype(), lanes(a), lanes(b), lanes(ea), lanes(eb), lanes(r), lanes(e));
        for (int64_t j = 0; j < count; j++) out.keep(j, ConstValue{n.held, 0, r[j]}, e[j]);
        continue;
      }
      if (n.op == Ops::LOAD || n.op == Ops::VALID) {  // through index expressions, one lane at a time
        for (int64_t j = 0; j < count; j++) {
          idx_[axis] = base + j;
          double error = 0;
          out.keep(j, compute(n, error), error);
        }
        idx_[axis] = base;
        continue;
      }
      std::array<LaneRef, 3> srcs{};
      for (size_t i = 0; i < n.src.size(); i++) srcs[i] = plan.lanes(n.src[i]);
      std::array<ConstValue, 3> ops;
      std::array<double, 3> errors{};
      for (int64_t j = 0; j < count; j++) {
        for (size_t i = 0; i < n.src.size(); i++) {
          ops[i] = srcs[i].value(j);
          errors[i] = srcs[i].error(j);
        }
        double error = 0;
        out.keep(j, apply_alu(n, ops, errors, error), error);
      }
    }
    epoch_++;  // the per-index values cached above were computed at other indices
  }

  const std::vector<HostBuffer*>& bufs_;
  const VarVals& vars_;
  const std::vector<HostBuffer*>* bounds_;
  const bool exact_;
  const int64_t sample_stride_;  // an exact run computes every sample_stride_-th element of a STORE
  std::vector<Node> nodes_;
  std::vector<ViewIndex> views_;
  std::vector<LanePlan> plans_;  // one per REDUCE_AXIS
  std::array<int64_t, kLanes> positions_{};
  std::vector<int64_t> full_shape_, idx_, scratch_;
  std::vector<ConstValue> values_;
  std::vector<double> errors_;  // an exact run's bounds of values_
  std::vector<uint64_t> stamps_;
  uint64_t epoch_ = 0;
};

}  // namespace

void run_kernel_ast(const UOp& ast, const std::vector<HostBuffer*>& bufs, const VarVals& vars) {
  if (ast.op() != Ops::SINK) fail(ast, "a kernel AST is a SINK of STOREs");
  KernelRun(ast, bufs, vars).run();
}

void run_kernel_ast_exact(const UOp& ast, const std::vector<HostBuffer*>& values,
                          const std::vector<HostBuffer*>& bounds, const VarVals& vars,
                          int64_t sample_stride, int threads) {
  if (ast.op() != Ops::SINK) fail(ast, "a kernel AST is a SINK of STOREs");
  if (sample_stride < 1) fail(ast, "a sample stride below 1");
  const int64_t parts = threads > 1 && exact_run_splits(ast, values, vars) ? threads : 1;
  std::vector<std::unique_ptr<KernelRun>> runs;
  while (static_cast<int64_t>(runs.size()) < parts)  // built before any runs: each reads the bounds
    runs.push_back(std::make_unique<KernelRun>(ast, values, vars, &bounds, sample_stride));
  std::vector<std::future<void>> rest;
  for (int64_t part = 1; part < parts; part++)
    rest.push_back(std::async(std::launch::async, [&runs, part, parts] { runs[static_cast<size_t>(part)]->run(part, parts); }));
  runs[0]->run(0, parts);
  for (std::future<void>& f : rest) f.get();
}

bool exact_run_splits(const UOp& ast, const std::vector<HostBuffer*>& bufs, const VarVals& vars) {
  return KernelRun(ast, bufs, vars).splittable();
}

int64_t sample_stride(int64_t iterations, int64_t max_iterations) {
  return iterations <= max_iterations ? 1 : (iterations / std::max<int64_t>(max_iterations, 1)) | 1;
}

int64_t ast_iterations(const UOp& ast, const VarVals& vars) {
  std::vector<int64_t> full;
  for (const UOp& u : ast.toposort()) {
    if (u.op() != Ops::VIEW || !u.arg().try_object<ShapeTracker>()) continue;
    const std::vector<sint> shape = view_st(u).shape();
    if (full.size() < shape.size()) full.resize(shape.size(), 1);
    for (size_t i = 0; i < shape.size(); i++) full[i] = std::max(full[i], concrete(shape[i], vars));
  }
  int64_t n = 1;
  for (int64_t d : full) n = d > 0 && n > INT64_MAX / d ? INT64_MAX : n * std::max<int64_t>(d, 1);
  return n;
}

std::vector<Expected> expect_kernel_ast(const UOp& ast, const std::vector<HostBuffer>& bufs,
                                        const VarVals& vars, int64_t max_iterations, int threads) {
  std::vector<Expected> out;
  for (const HostBuffer& b : bufs) out.push_back(exact(b));
  std::vector<HostBuffer> bounds;
  for (const HostBuffer& b : bufs) bounds.emplace_back(dtypes::float64, b.numel());
  std::vector<HostBuffer*> value_ptrs, bound_ptrs;
  for (size_t i = 0; i < bufs.size(); i++) {
    value_ptrs.push_back(&out[i].value);
    bound_ptrs.push_back(&bounds[i]);
  }
  run_kernel_ast_exact(ast, value_ptrs, bound_ptrs, vars,
                       sample_stride(ast_iterations(ast, vars), max_iterations), threads);
  for (size_t i = 0; i < bufs.size(); i++)
    for (int64_t k = 0; k < bounds[i].numel(); k++)
      out[i].bound[static_cast<size_t>(k)] = bounds[i].get_float(k);
  return out;
}

std::vector<std::pair<DType, int64_t>> ast_buffer_specs(const UOp& ast) {
  std::vector<std::pair<DType, int64_t>> specs;
  for (const UOp& u : ast.toposort()) {
    if (u.op() != Ops::DEFINE_GLOBAL) continue;
    const int64_t i = u.arg().as_int();
    if (i < 0) fail(u, "negative index");
    if (specs.size() <= static_cast<size_t>(i)) specs.resize(static_cast<size_t>(i) + 1, {dtypes::void_, 0});
    specs[static_cast<size_t>(i)] = {u.dtype().base().scalar_type(), u.dtype().size};
  }
  return specs;
}

}  // namespace tunebed
