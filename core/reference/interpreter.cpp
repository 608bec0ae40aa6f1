// The graph walk: each node is computed once from its materialised sources (memoised by node), in
// the order a depth-first evaluation reaches them.
#include <optional>
#include <stdexcept>
#include <unordered_map>

#include "core/reference/array_ops.hpp"

namespace tunebed::reference {

Array from_host(const HostBuffer& data, const Shape& shape) {
  Array a = make_array(data.dtype, shape);
  if (a.numel() != data.numel())
    throw ReferenceError("host buffer of " + std::to_string(data.numel()) + " elements does not fill shape " +
                         shape_str(shape));
  for (int64_t k = 0; k < a.numel(); k++) {
    if (a.dtype.is_float())
      a.f[k] = data.get_float(k);
    else
      a.i[k] = data.get_int(k);
  }
  return a;
}

HostBuffer to_host(const Array& a) {
  HostBuffer out(a.dtype, a.numel());
  for (int64_t k = 0; k < a.numel(); k++) {
    if (a.dtype.is_float())
      out.set_float(k, a.f[k]);
    else
      out.set_int(k, a.i[k]);
  }
  return out;
}

namespace {

Pairs pairs_of(const Arg& arg) {
  Pairs out;
  for (const Arg& p : arg.as_tuple()) {
    const std::vector<int64_t> two = p.as_ints();
    if (two.size() != 2)
      throw ReferenceError("expected (start, end) pairs, got " + std::to_string(two.size()) + " ints");
    out.emplace_back(two[0], two[1]);
  }
  return out;
}

// A float-to-float cast that loses nothing: it may sit between a MUL and its sum (sum_acc_dtype).
bool widening_float_cast(const UOp& u) {
  const DType& from = u.src(0).dtype();
  return u.op() == Ops::CAST && from.is_float() && u.dtype().is_float() &&
         u.dtype().itemsize() >= from.itemsize();
}

class Interpreter {
 public:
  explicit Interpreter(const BufferData& buffers) : buffers_(buffers) {}

  const Array& eval(const UOp& u) {
    if (auto it = memo_.find(u.get()); it != memo_.end()) return it->second;
    Array a;
    try {
      a = compute(u);
    } catch (const std::logic_error& e) {  // a malformed arg: Arg's typed access, an index out of range
      fail(u.op(), std::string("bad arg: ") + e.what());
    }
    return memo_.emplace(u.get(), std::move(a)).first->second;
  }

  std::vector<std::pair<int64_t, HostBuffer>> writes;

 private:
  Array compute(const UOp& u) {
    const Ops op = u.op();
    const Arg& arg = u.arg();
    switch (op) {
      case Ops::BUFFER:
        return buffer(u);
      case Ops::CONST:
        return constant(u.dtype(), arg);
      case Ops::RESHAPE:
        return reshape(eval(u.src(0)), arg.as_ints());
      case Ops::PERMUTE:
        return permute(eval(u.src(0)), arg.as_ints());
      case Ops::EXPAND:
        return expand(eval(u.src(0)), arg.as_ints());
      case Ops::PAD:
        return pad(eval(u.src(0)), pairs_of(arg));
      case Ops::SHRINK:
        return shrink(eval(u.src(0)), pairs_of(arg));
      case Ops::FLIP: {
        std::vector<bool> axes;
        for (const Arg& b : arg.as_tuple()) axes.push_back(b.as_bool());
        return flip(eval(u.src(0)), axes);
      }
      case Ops::REDUCE_AXIS: {
        const ArgTuple& t = arg.as_tuple();
        if (t.size() != 2) fail(op, "arg must be (op, axes)");
        if (auto c = contraction(u, t[0].as_op(), t[1].as_ints())) return *std::move(c);
        return reduce(eval(u.src(0)), t[0].as_op(), t[1].as_ints());
      }
      case Ops::CAST:
        return cast(eval(u.src(0)), u.dtype());
      case Ops::CONTIGUOUS:
      case Ops::COPY:  // one host: a copy between devices is the identity
        return eval(u.src(0));
      case Ops::ASSIGN:
        return assign(u);
      default:
        break;
    }
    if (!GroupOp::ALU.contains(op)) fail(op, "is not a value in a tensor graph");
    std::vector<const Array*> srcs;
    for (const UOp& s : u.src()) srcs.push_back(&eval(s));
    return alu(op, u.dtype(), srcs);
  }

  Array buffer(const UOp& u) {
    if (u.src().size() != 2 || u.src(0).op() != Ops::UNIQUE)
      fail(Ops::BUFFER, "sources must be (UNIQUE, DEVICE)");
    const int64_t id = u.src(0).arg().as_int();
    auto it = buffers_.find(id);
    if (it == buffers_.end() || !it->second)
      fail(Ops::BUFFER, "no host data for buffer " + std::to_string(id));
    const HostBuffer& data = *it->second;
    if (data.dtype != u.dtype() || data.numel() != u.arg().as_int())
      fail(Ops::BUFFER, "buffer " + std::to_string(id) + " is " + std::to_string(u.arg().as_int()) + " x " +
                            to_string(u.dtype()) + " but its data is " + std::to_string(data.numel()) +
                            " x " + to_string(data.dtype));
    return from_host(data, {data.numel()});
  }

  // ASSIGN(target, value): the value, written to the target's buffer once the evaluation is over.
  Array assign(const UOp& u) {
    UOp base = u.src(0);
    while (base.op() == Ops::RESHAPE) base = base.src(0);
    if (base.op() != Ops::BUFFER)
      fail(Ops::ASSIGN,
           "target must be a buffer or a reshape of one, not " + std::string(op_name(base.op())));
    const Array& target = eval(u.src(0));
    const Array& value = eval(u.src(1));
    if (target.shape != value.shape || target.dtype != value.dtype)
      fail(Ops::ASSIGN, "value " + shape_str(value.shape) + " " + to_string(value.dtype) +
                            " does not match target " + shape_str(target.shape) + " " +
                            to_string(target.dtype));
    writes.emplace_back(base.src(0).arg().as_int(), to_host(value));
    return value;
  }

  // An operand of a MUL with its EXPANDs undone: the data it broadcasts, at the rank of the product,
  // and the product's shape. CASTs and PERMUTEs commute with EXPAND, so they apply to the small data.
  std::pair<Array, Shape> unexpanded(const UOp& u) {
    switch (u.op()) {
      case Ops::EXPAND:
        return {unexpanded(u.src(0)).first, u.arg().as_ints()};
      case Ops::CAST: {
        auto [a, full] = unexpanded(u.src(0));
        return {cast(a, u.dtype()), full};
      }
      case Ops::PERMUTE: {
        auto [a, full] = unexpanded(u.src(0));
        const std::vector<int64_t> order = u.arg().as_ints();
        Shape permuted;
        for (int64_t o : order) permuted.push_back(full.at(o));
        return {permute(a, order), permuted};
      }
      default: {
        const Array& a = eval(u);
        return {a, a.shape};
      }
    }
  }

  // REDUCE_AXIS ADD over a MUL, seen through PERMUTEs and widening float CASTs: a contraction.
  std::optional<Array> contraction(const UOp& reduce_op, Ops op, const std::vector<int64_t>& axes) {
    if (op != Ops::ADD) return std::nullopt;
    UOp s = reduce_op.src(0);
    while (s.op() == Ops::PERMUTE || widening_float_cast(s)) s = s.src(0);
    if (s.op() != Ops::MUL || s.src().size() != 2) return std::nullopt;
    const DType mul = s.dtype(), out = reduce_op.dtype();
    if (mul.is_float() ? !out.is_float() : mul != out) return std::nullopt;
    auto [p, full] = unexpanded(s.src(0));
    auto [q, full_q] = unexpanded(s.src(1));
    if (full != full_q || p.dtype != mul || q.dtype != mul)
      return std::nullopt;  // malformed: let alu() say why
    // Replay the PERMUTEs between the reduce and the MUL, innermost first.
    std::vector<UOp> chain;
    for (UOp c = reduce_op.src(0); c != s; c = c.src(0)) chain.push_back(c);
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      if (it->op() != Ops::PERMUTE) continue;
      const std::vector<int64_t> order = it->arg().as_ints();
      Shape permuted;
      for (int64_t o : order) permuted.push_back(full.at(o));
      p = permute(p, order), q = permute(q, order), full = permuted;
    }
    return contract(p, q, full, axes, out);
  }

  const BufferData& buffers_;
  std::unordered_map<const UOpNode*, Array> memo_;  // looked up only, never iterated
};

}  // namespace

Evaluation evaluate(const std::vector<UOp>& outputs, const BufferData& buffers) {
  Interpreter interp(buffers);
  Evaluation result;
  for (const UOp& out : outputs) {
    if (!out) throw ReferenceError("evaluate: null output");
    result.outputs.push_back(interp.eval(out));
  }
  result.writes = std::move(interp.writes);
  return result;
}

Array evaluate(const UOp& output, const BufferData& buffers) {
  return evaluate(std::vector<UOp>{output}, buffers).outputs.at(0);
}

}  // namespace tunebed::reference
