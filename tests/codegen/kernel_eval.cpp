// The direct evaluator of kernel ASTs: each node's value over its shape, row-major.
#include "tests/codegen/kernel_eval.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <stdexcept>

#include "core/ir/exec_alu.hpp"
#include "core/rewrite/graph_rewrite.hpp"
#include "core/shape/shapetracker.hpp"
#include "core/symbolic/symbolic.hpp"

namespace tunebed::testing {

namespace {

struct Array {
  std::vector<int64_t> shape;
  std::vector<ConstValue> v;
};

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t x : s) n *= x;
  return n;
}

ConstValue read(const HostBuffer& b, int64_t pos) {
  if (b.dtype.is_float()) return ConstValue::real(b.dtype, b.get_float(pos));
  return ConstValue::integer(b.dtype, b.get_int(pos));
}

// Threefry-2x32, 20 rounds, on plain integers: the oracle for the THREEFRY op, which exec_alu
// does not have.
uint64_t threefry(uint64_t x, uint64_t key) {
  const uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  const uint32_t ks[3] = {k1, k0 ^ k1 ^ 0x1BD11BDAu, k0};
  const int rot[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  uint32_t a = static_cast<uint32_t>(x) + ks[2], b = static_cast<uint32_t>(x >> 32) + ks[0];
  for (int i = 0; i < 5; i++) {
    for (int r : rot[i % 2]) {
      a += b;
      b = a ^ ((b << r) | (b >> (32 - r)));
    }
    a += ks[i % 3];
    b += ks[(i + 1) % 3] + static_cast<uint32_t>(i + 1);
  }
  return (static_cast<uint64_t>(b) << 32) | a;
}

ConstValue apply(Ops op, const DType& d, const std::vector<ConstValue>& operands) {
  if (op != Ops::THREEFRY) return exec_alu(op, d, operands);
  const uint64_t r = threefry(static_cast<uint64_t>(operands[0].i), static_cast<uint64_t>(operands[1].i));
  return ConstValue::integer(d, static_cast<int64_t>(r));
}

ConstValue zero(const DType& d) { return d.is_float() ? ConstValue::real(d, 0) : ConstValue::integer(d, 0); }

const ShapeTracker& st_of(const UOp& view) {
  const ShapeTracker* st = view.arg().try_object<ShapeTracker>();
  if (view.op() != Ops::VIEW || !st) throw std::invalid_argument("not a VIEW with a ShapeTracker");
  for (const View& v : st->views())
    if (!all_int(v.shape())) throw std::invalid_argument("symbolic shape");
  return *st;
}

// The index of flat position i of `shape` in an array of shape `src` (size-1 axes broadcast).
int64_t broadcast_index(int64_t i, const std::vector<int64_t>& shape, const std::vector<int64_t>& src) {
  int64_t out = 0, mul = 1;
  for (size_t k = shape.size(); k-- > 0;) {
    const int64_t c = i % shape[k];
    i /= shape[k];
    if (src[k] != 1) out += c * mul;
    mul *= src[k];
  }
  return out;
}

class Evaluator {
 public:
  explicit Evaluator(std::vector<HostBuffer>& bufs) : bufs_(bufs) {}

  const Array& eval(const UOp& u) {
    auto it = memo_.find(u.get());
    if (it != memo_.end()) return it->second;
    return memo_[u.get()] = compute(u);
  }

 private:
  Array through_view(const UOp& view, const std::function<ConstValue(int64_t)>& at, const DType& d) {
    const ShapeTracker& st = st_of(view);
    Array a{to_ints(st.shape()), {}};
    for (int64_t p : st.buffer_positions()) a.v.push_back(p < 0 ? zero(d) : at(p));
    return a;
  }

  Array compute(const UOp& u) {
    const Ops op = u.op();
    if (op == Ops::LOAD) {
      const UOp& view = u.src(0);
      const UOp& buf = view.src(0);
      if (buf.op() != Ops::DEFINE_GLOBAL) throw std::invalid_argument("load from a local buffer");
      const HostBuffer& b = bufs_.at(buf.arg().as_int());
      return through_view(
          view, [&](int64_t p) { return read(b, p); }, u.dtype());
    }
    if ((op == Ops::CONST || op == Ops::DEFINE_VAR) && !u.src().empty()) {
      if (op == Ops::DEFINE_VAR) throw std::invalid_argument("symbolic variable");
      ConstValue c = ConstValue::of(u.with_src({}));
      return through_view(
          u.src(0), [&](int64_t) { return c; }, u.dtype());
    }
    if (op == Ops::VIEW && u.src(0).op() == Ops::CONST) {
      ConstValue c = ConstValue::of(u.src(0));
      return through_view(
          u, [&](int64_t) { return c; }, u.src(0).dtype());
    }
    if (op == Ops::VALID) {
      Array a = through_view(
          u.src(0), [](int64_t) { return ConstValue::integer(dtypes::bool_, 1); }, dtypes::bool_);
      return a;
    }
    if (op == Ops::REDUCE_AXIS) return reduce(u);
    if (!GroupOp::ALU.contains(op) && op != Ops::CAST && op != Ops::BITCAST)
      throw std::invalid_argument("cannot evaluate " + std::string(op_name(op)));
    std::vector<const Array*> srcs;
    std::vector<int64_t> shape;
    for (const UOp& s : u.src()) {
      srcs.push_back(&eval(s));
      if (srcs.back()->shape.size() > shape.size() || numel(srcs.back()->shape) > numel(shape))
        shape = srcs.back()->shape;
    }
    Array out{shape, {}};
    std::vector<ConstValue> operands(srcs.size());
    for (int64_t i = 0; i < numel(shape); i++) {
      for (size_t k = 0; k < srcs.size(); k++)
        operands[k] = srcs[k]->v[broadcast_index(i, shape, srcs[k]->shape)];
      out.v.push_back(apply(op, u.dtype(), operands));
    }
    return out;
  }

  Array reduce(const UOp& u) {
    const Array& in = eval(u.src(0));
    const Ops op = u.arg().as_tuple().at(0).as_op();
    Array out{in.shape, {}};
    for (int64_t a : u.arg().as_tuple().at(1).as_ints()) out.shape.at(a) = 1;
    out.v.assign(numel(out.shape), ConstValue{});
    std::vector<bool> seen(out.v.size(), false);
    for (int64_t i = 0; i < numel(in.shape); i++) {
      const int64_t o = broadcast_index(i, in.shape, out.shape);
      if (!seen[o]) {
        out.v[o] = in.v[i];
        seen[o] = true;
        continue;
      }
      ConstValue operands[2] = {out.v[o], in.v[i]};
      out.v[o] = exec_alu(op, u.dtype(), operands);
    }
    return out;
  }

  std::vector<HostBuffer>& bufs_;
  std::map<const UOpNode*, Array> memo_;
};

// The kernel with every DEFINE_VAR replaced by its value, in the graph and in the views' sizes.
UOp substitute_vars(const UOp& ast, const std::map<std::string, int32_t>& vars) {
  const PatternMatcher to_const = {{"var-value", UPat(Ops::DEFINE_VAR).named("v"), [&](const Match& m) {
                                      const std::string& name = m["v"].arg().as_tuple().at(0).as_string();
                                      if (!vars.count(name))
                                        throw std::invalid_argument("no value for variable " + name);
                                      return UOp::const_int(m["v"].dtype(), vars.at(name));
                                    }}};
  auto number = [&](const sint& s) {
    return s.is_int() ? s : sint(simplify(graph_rewrite(s.uop(), to_const)));
  };
  auto numbers = [&](const SymShape& s) {
    SymShape out;
    for (const sint& x : s) out.push_back(number(x));
    return out;
  };
  std::map<const UOpNode*, UOp> done;
  for (const UOp& u : ast.toposort()) {
    std::vector<UOp> srcs;
    for (const UOp& s : u.src()) srcs.push_back(done.at(s.get()));
    UOp v = u.with_src(srcs);
    if (u.op() == Ops::DEFINE_VAR) v = graph_rewrite(u, to_const).with_src(srcs);
    if (const ShapeTracker* st = u.arg().try_object<ShapeTracker>()) {
      std::vector<View> views;
      for (const View& view : st->views()) {
        std::optional<Mask> mask;
        if (view.mask())
          for (const auto& [b, e] : *view.mask())
            (mask ? *mask : mask.emplace()).emplace_back(number(b), number(e));
        views.push_back(
            View::create(numbers(view.shape()), numbers(view.strides()), number(view.offset()), mask));
      }
      v = v.with_arg(ShapeTracker(views).to_arg());
    }
    done[u.get()] = v;
  }
  return done.at(ast.get());
}

}  // namespace

void eval_kernel(const UOp& ast_with_vars, std::vector<HostBuffer>& bufs,
                 const std::map<std::string, int32_t>& vars) {
  const UOp ast = substitute_vars(ast_with_vars, vars);
  Evaluator ev(bufs);
  for (const UOp& store : ast.src()) {
    if (store.op() != Ops::STORE) throw std::invalid_argument("a SINK source that is not a STORE");
    const UOp& view = store.src(0);
    const Array& val = ev.eval(store.src(1));
    HostBuffer& out = bufs.at(view.src(0).arg().as_int());
    const std::vector<int64_t> pos = st_of(view).buffer_positions();
    for (size_t i = 0; i < pos.size(); i++) {
      if (pos[i] < 0) continue;
      const ConstValue& c =
          val.v.at(broadcast_index(static_cast<int64_t>(i), to_ints(st_of(view).shape()), val.shape));
      ConstValue cast = exec_alu(Ops::CAST, out.dtype, std::span<const ConstValue>(&c, 1));
      if (out.dtype.is_float())
        out.set_float(pos[i], cast.f);
      else
        out.set_int(pos[i], cast.i);
    }
  }
}

std::vector<int64_t> output_buffers(const UOp& ast) {
  std::vector<int64_t> out;
  for (const UOp& store : ast.src())
    if (store.op() == Ops::STORE) out.push_back(store.src(0).src(0).arg().as_int());
  return out;
}

void fill_random(HostBuffer& b, std::mt19937& rng) {
  std::uniform_real_distribution<double> real(-2, 2);
  std::uniform_int_distribution<int64_t> signed_int(-8, 7), unsigned_int(1, 16), coin(0, 1);
  for (int64_t i = 0; i < b.numel(); i++) {
    if (b.dtype.is_float())
      b.set_float(i, real(rng));
    else if (b.dtype.is_bool())
      b.set_int(i, coin(rng));
    else if (b.dtype.is_unsigned())
      b.set_int(i, unsigned_int(rng));
    else {
      const int64_t v = signed_int(rng);
      b.set_int(i, v >= 0 ? v + 1 : v);
    }
  }
}

std::string compare_buffers(const HostBuffer& got, const HostBuffer& want) {
  if (got.dtype != want.dtype || got.numel() != want.numel()) return "buffers of different dtype or size";
  const double tol = want.dtype.scalar == Scalar::Float16 ? 1e-2 : 1e-4;
  for (int64_t i = 0; i < want.numel(); i++) {
    bool same;
    if (want.dtype.is_float()) {
      const double a = got.get_float(i), b = want.get_float(i);
      same = (std::isnan(a) && std::isnan(b)) || a == b || std::abs(a - b) <= tol * (1 + std::abs(b));
    } else {
      same = got.get_int(i) == want.get_int(i);
    }
    if (!same)
      return "element " + std::to_string(i) + ": got " + std::to_string(got.get_float(i)) + ", want " +
             std::to_string(want.get_float(i));
  }
  return "";
}

}  // namespace tunebed::testing
