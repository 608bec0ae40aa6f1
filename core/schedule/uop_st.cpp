// tinygrad's shape properties of UOps (uop/ops.py: st, shape, base, size, _mop, r, const_like).
#include "core/schedule/uop_st.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

namespace tunebed::sched {
namespace {

thread_local std::unordered_map<UOp, std::optional<ShapeTracker>, UOpHash> st_cache;

std::optional<ShapeTracker> compute_st(const UOp& u) {
  const Ops op = u.op();
  if (GroupOp::Block.contains(op) || op == Ops::INDEX || op == Ops::SINK || op == Ops::KERNEL)
    return std::nullopt;
  if (op == Ops::VIEW) return view_st(u);
  if (GroupOp::Movement.contains(op)) return st_of(u.src(0)).mop(op, u.arg());
  // A tensor-level constant over a bare DEVICE is 0-d.
  if (op == Ops::CONST && !u.src().empty() && u.src(0).op() == Ops::DEVICE)
    return ShapeTracker::from_shape({});
  // Buffer ops and ASSIGN take the ShapeTracker of their first source.
  if (op == Ops::STORE || op == Ops::ASSIGN || op == Ops::LOAD) return uop_st(u.src(0));
  if (GroupOp::Buffer.contains(op)) {
    for (const UOp& s : u.src())
      if (s.op() == Ops::VIEW) return view_st(s);
    return std::nullopt;
  }
  if (op == Ops::BUFFER || op == Ops::BUFFER_VIEW) return ShapeTracker::from_shape({uop_size(u)});
  if (Defines.contains(op)) {
    if (u.dtype().size <= 0) return std::nullopt;
    return ShapeTracker::from_shape({u.dtype().size});
  }
  std::optional<SymShape> shape;
  for (const UOp& s : u.src()) {
    std::optional<ShapeTracker> st = uop_st(s);
    if (!st) continue;
    if (shape && *shape != st->shape())
      throw std::logic_error(std::string(op_name(op)) + ": sources have different shapes " +
                             to_string(*shape) + " and " + to_string(st->shape()));
    if (!shape) shape = st->shape();
  }
  if (!shape) return std::nullopt;
  if (op == Ops::REDUCE_AXIS) return ShapeTracker::from_shape(st_reduce(*shape, reduce_axes(u)));
  return ShapeTracker::from_shape(*shape);
}

}  // namespace

StCacheScope::~StCacheScope() { st_cache.clear(); }

std::optional<ShapeTracker> uop_st(const UOp& u) {
  if (auto it = st_cache.find(u); it != st_cache.end()) return it->second;
  std::optional<ShapeTracker> st = compute_st(u);
  st_cache.emplace(u, st);
  return st;
}

const ShapeTracker& st_of(const UOp& u) {
  auto it = st_cache.find(u);
  if (it == st_cache.end()) {
    uop_st(u);
    it = st_cache.find(u);
  }
  if (!it->second) throw std::logic_error(std::string(op_name(u.op())) + " has no shape");
  return *it->second;
}

SymShape uop_shape(const UOp& u) { return st_of(u).shape(); }

int64_t uop_size(const UOp& u) {
  if (u.op() == Ops::BUFFER) return u.arg().as_int();
  return st_of(u).size();
}

UOp uop_base(const UOp& u) {
  UOp b = u;
  while ((b.op() == Ops::VIEW && !b.src().empty()) || GroupOp::Movement.contains(b.op())) b = b.src(0);
  return b;
}

std::optional<std::string> uop_device(const UOp& u) {
  if (u.op() == Ops::DEVICE) return u.arg().as_string();
  if ((u.op() == Ops::COPY || u.op() == Ops::BUFFER) && u.src().size() > 1) return uop_device(u.src(1));
  for (const UOp& s : u.src())
    if (std::optional<std::string> d = uop_device(s)) return d;
  return std::nullopt;
}

const ShapeTracker& view_st(const UOp& v) { return v.arg().as_object<ShapeTracker>(); }

ShapeTracker st_add(const ShapeTracker& a, const ShapeTracker& b) {
  ShapeTracker ret = a;
  for (const View& v : b.views()) {
    std::vector<View> views = ret.views();
    views.push_back(v);
    ret = ShapeTracker(std::move(views)).simplify();
  }
  return ret;
}

SymShape st_reduce(const SymShape& shape, const std::vector<int64_t>& axes) {
  SymShape out = shape;
  for (int64_t a : axes) out.at(static_cast<size_t>(a)) = 1;
  return out;
}

UOp view(const UOp& x, const ShapeTracker& st) { return UOp::make(Ops::VIEW, x.dtype(), {x}, st.to_arg()); }

UOp mop(const UOp& x, Ops op, const Arg& arg) {
  UOp ret = UOp::make(op, x.dtype(), {x}, arg);
  if (uop_st(x) == uop_st(ret)) return x;
  return ret;
}

UOp reshape(const UOp& x, const SymShape& shape) {
  ArgTuple t;
  for (const sint& s : shape) t.push_back(to_arg(s));
  return mop(x, Ops::RESHAPE, Arg(std::move(t)));
}

std::vector<int64_t> reduce_axes(const UOp& r) { return r.arg().as_tuple().at(1).as_ints(); }
Ops reduce_op(const UOp& r) { return r.arg().as_tuple().at(0).as_op(); }

UOp reduce_r(const UOp& x, Ops op, std::vector<int64_t> axes) {
  const SymShape shape = uop_shape(x);
  const int64_t n = static_cast<int64_t>(shape.size());
  auto is_one = [&](int64_t i) { return !resolve(ne(shape[static_cast<size_t>(i)], 1)); };
  std::erase_if(axes, is_one);
  std::sort(axes.begin(), axes.end());
  if (axes.empty()) return x;
  auto reduced = [&](int64_t i) { return std::find(axes.begin(), axes.end(), i) != axes.end(); };
  // Kept axes after the first reduced one move in front of the reduced ones.
  std::vector<int64_t> perm, rest;
  for (int64_t i = 0; i < axes[0]; i++) perm.push_back(i);
  for (int64_t i = axes[0]; i < n; i++) (!reduced(i) && !is_one(i) ? perm : rest).push_back(i);
  const size_t moved = perm.size() - static_cast<size_t>(axes[0]);
  perm.insert(perm.end(), rest.begin(), rest.end());
  UOp permuted = mop(x, Ops::PERMUTE, Arg::ints(perm));
  const SymShape pshape = uop_shape(permuted);
  std::vector<int64_t> new_axes;
  for (int64_t i = axes[0] + static_cast<int64_t>(moved); i < n; i++)
    if (resolve(ne(pshape[static_cast<size_t>(i)], 1))) new_axes.push_back(i);
  UOp red = UOp::make(Ops::REDUCE_AXIS, x.dtype(), {permuted}, Arg::tuple({op, Arg::ints(new_axes)}));
  SymShape out = shape;
  for (int64_t a : axes) out[static_cast<size_t>(a)] = 1;
  return reshape(red, out);
}

Arg const_arg(const DType& d, double v) {
  if (d.is_float()) return Arg(round_float(v, d));
  if (d.is_bool()) return Arg(v != 0);
  return Arg(wrap_int(static_cast<int64_t>(v), d));
}

UOp const_like(const UOp& u, const Arg& value) {
  UOp c = UOp::make(Ops::CONST, u.dtype(), {}, value);
  std::optional<ShapeTracker> st = uop_st(u);
  if (!st) return c;
  const SymShape shape = st->shape();
  ShapeTracker cst = ShapeTracker::from_shape(shape, SymShape(shape.size(), sint(0)));
  std::optional<std::string> device = uop_device(u);
  UOp src = device ? view(UOp::make(Ops::DEVICE, dtypes::void_, {}, *device), cst)
                   : UOp::make(Ops::VIEW, dtypes::void_, {}, cst.to_arg());
  return c.with_src({src});
}

}  // namespace tunebed::sched
