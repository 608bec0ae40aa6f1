#include "core/tensor/graph.hpp"

#include <algorithm>
#include <atomic>
#include <unordered_map>

namespace tunebed {

namespace {

std::atomic<int64_t> next_unique{0};

[[noreturn]] void bad(Ops op, const std::string& msg) {
  throw ShapeError(std::string(op_name(op)) + ": " + msg);
}

int64_t numel_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::vector<std::pair<int64_t, int64_t>> pairs_of(Ops op, const Arg& arg) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const Arg& p : arg.as_tuple()) {
    const std::vector<int64_t> two = p.as_ints();
    if (two.size() != 2) bad(op, "arg entries must be (int, int) pairs");
    out.emplace_back(two[0], two[1]);
  }
  return out;
}

void expect_rank(Ops op, const Shape& s, size_t n, const char* what) {
  if (s.size() != n)
    bad(op, std::string(what) + " has " + std::to_string(n) + " entries for shape " + shape_to_string(s));
}

Shape movement_shape(Ops op, const Arg& arg, const Shape& in) {
  switch (op) {
    case Ops::RESHAPE: {
      Shape out = arg.as_ints();
      for (int64_t d : out)
        if (d < 0) bad(op, "negative dimension in " + shape_to_string(out));
      if (numel_of(out) != numel_of(in))
        bad(op, "cannot reshape " + shape_to_string(in) + " to " + shape_to_string(out));
      return out;
    }
    case Ops::PERMUTE: {
      const std::vector<int64_t> order = arg.as_ints();
      expect_rank(op, in, order.size(), "order");
      std::vector<int64_t> sorted = order;
      std::sort(sorted.begin(), sorted.end());
      for (size_t k = 0; k < sorted.size(); k++)
        if (sorted[k] != static_cast<int64_t>(k))
          bad(op, "order is not a permutation of the axes of " + shape_to_string(in));
      Shape out;
      for (int64_t o : order) out.push_back(in[o]);
      return out;
    }
    case Ops::EXPAND: {
      Shape out = arg.as_ints();
      expect_rank(op, in, out.size(), "new shape");
      for (size_t k = 0; k < out.size(); k++)
        if (in[k] != out[k] && in[k] != 1)
          bad(op, "cannot expand " + shape_to_string(in) + " to " + shape_to_string(out));
      return out;
    }
    case Ops::PAD: {
      const auto pads = pairs_of(op, arg);
      expect_rank(op, in, pads.size(), "padding");
      Shape out = in;
      for (size_t k = 0; k < pads.size(); k++) {
        if (pads[k].first < 0 || pads[k].second < 0) bad(op, "negative padding of " + shape_to_string(in));
        out[k] += pads[k].first + pads[k].second;
      }
      return out;
    }
    case Ops::SHRINK: {
      const auto bounds = pairs_of(op, arg);
      expect_rank(op, in, bounds.size(), "bounds");
      Shape out;
      for (size_t k = 0; k < bounds.size(); k++) {
        const auto [b, e] = bounds[k];
        if (b < 0 || b > e || e > in[k])
          bad(op, "bounds (" + std::to_string(b) + ", " + std::to_string(e) + ") out of range for axis " +
                      std::to_string(k) + " of " + shape_to_string(in));
        out.push_back(e - b);
      }
      return out;
    }
    case Ops::FLIP: {
      expect_rank(op, in, arg.as_tuple().size(), "flip mask");
      for (const Arg& b : arg.as_tuple()) b.as_bool();
      return in;
    }
    default:
      bad(op, "is not a movement op");
  }
}

Shape reduce_shape(const Arg& arg, const Shape& in) {
  const Ops op = Ops::REDUCE_AXIS;
  const ArgTuple& t = arg.as_tuple();
  if (t.size() != 2) bad(op, "arg must be (Ops.ADD|MUL|MAX, axes)");
  const Ops r = t[0].as_op();
  if (r != Ops::ADD && r != Ops::MUL && r != Ops::MAX)
    bad(op, std::string(op_name(r)) + " is not a reduce op");
  Shape out = in;
  for (int64_t a : t[1].as_ints()) {
    if (a < 0 || a >= static_cast<int64_t>(in.size()) || out[a] == -1)
      bad(op, "bad axes for shape " + shape_to_string(in));
    out[a] = -1;  // marks a seen axis, so a repeated one is refused
  }
  for (int64_t& d : out) d = d == -1 ? 1 : d;
  return out;
}

// The dtype rules of the elementwise ops: sources agree, comparisons give bool, WHERE takes a bool.
void check_alu_dtypes(Ops op, const DType& dtype, const std::vector<UOp>& src) {
  auto name = [](const UOp& u) { return to_string(u.dtype()); };
  if (op == Ops::WHERE) {
    if (!src[0].dtype().is_bool()) bad(op, "condition is " + name(src[0]) + ", not bool");
    if (src[1].dtype() != src[2].dtype() || src[1].dtype() != dtype)
      bad(op, "branches are " + name(src[1]) + " and " + name(src[2]) + ", result " + to_string(dtype));
    return;
  }
  for (const UOp& s : src)
    if (s.dtype() != src[0].dtype()) bad(op, "sources have dtypes " + name(src[0]) + " and " + name(s));
  const DType expected = GroupOp::Comparison.contains(op) ? dtypes::bool_ : src[0].dtype();
  if (dtype != expected)
    bad(op, "on " + name(src[0]) + " gives " + to_string(expected) + ", not " + to_string(dtype));
}

}  // namespace

std::string shape_to_string(const Shape& s) {
  std::string out = "(";
  for (size_t k = 0; k < s.size(); k++) out += (k ? ", " : "") + std::to_string(s[k]);
  return out + (s.size() == 1 ? ",)" : ")");
}

UOp device_uop(const std::string& device) { return UOp::make(Ops::DEVICE, dtypes::void_, {}, Arg(device)); }

UOp new_buffer(const std::string& device, int64_t size, DType dtype) {
  if (size < 0) throw ShapeError("BUFFER: negative size " + std::to_string(size));
  UOp unique = UOp::make(Ops::UNIQUE, dtypes::void_, {}, Arg(next_unique.fetch_add(1)));
  return UOp::make(Ops::BUFFER, dtype, {unique, device_uop(device)}, Arg(size));
}

int64_t buffer_id(const UOp& buffer) {
  if (buffer.op() != Ops::BUFFER)
    throw std::invalid_argument("buffer_id of " + std::string(op_name(buffer.op())));
  return buffer.src(0).arg().as_int();
}

UOp const_uop(DType dtype, const ConstType& value, const std::string& device) {
  return UOp::make(Ops::CONST, dtype, {device_uop(device)}, value.as_arg(dtype));
}

Shape infer_shape(Ops op, const DType& dtype, const Arg& arg, const std::vector<UOp>& src,
                  const std::vector<Shape>& src_shapes) {
  auto want_srcs = [&](size_t n) {
    if (src.size() != n)
      bad(op, "takes " + std::to_string(n) + " sources, got " + std::to_string(src.size()));
  };
  try {
    if (op == Ops::BUFFER) return {arg.as_int()};
    if (op == Ops::CONST) return {};
    if (GroupOp::Movement.contains(op)) {
      want_srcs(1);
      if (src[0].dtype() != dtype) bad(op, "changes the dtype");
      return movement_shape(op, arg, src_shapes[0]);
    }
    switch (op) {
      case Ops::REDUCE_AXIS:
        want_srcs(1);
        return reduce_shape(arg, src_shapes[0]);
      case Ops::CAST:
      case Ops::CONTIGUOUS:
        want_srcs(1);
        return src_shapes[0];
      case Ops::COPY:
        want_srcs(2);
        if (src[1].op() != Ops::DEVICE) bad(op, "second source must be a DEVICE");
        return src_shapes[0];
      case Ops::ASSIGN:
        want_srcs(2);
        if (src_shapes[0] != src_shapes[1] || src[0].dtype() != src[1].dtype())
          bad(op, "value " + shape_to_string(src_shapes[1]) + " " + to_string(src[1].dtype()) +
                      " does not match target " + shape_to_string(src_shapes[0]) + " " +
                      to_string(src[0].dtype()));
        return src_shapes[0];
      default:
        break;
    }
    if (!GroupOp::ALU.contains(op) || op == Ops::MULACC) bad(op, "is not an op of the tensor graph");
    want_srcs(GroupOp::Ternary.contains(op) ? 3 : GroupOp::Binary.contains(op) ? 2 : 1);
    for (const Shape& s : src_shapes)
      if (s != src_shapes[0])
        bad(op, "sources have shapes " + shape_to_string(src_shapes[0]) + " and " + shape_to_string(s) +
                    " (broadcast them first)");
    check_alu_dtypes(op, dtype, src);
    return src_shapes[0];
  } catch (const std::invalid_argument& e) {
    if (dynamic_cast<const ShapeError*>(&e)) throw;
    bad(op, std::string("bad arg: ") + e.what());  // Arg's typed access
  }
}

Shape tensor_shape(const UOp& root) {
  std::unordered_map<const UOpNode*, Shape> shapes;  // looked up only
  for (const UOp& u : root.toposort()) {
    if (u.op() == Ops::DEVICE || u.op() == Ops::UNIQUE) continue;
    std::vector<Shape> src_shapes;
    for (const UOp& s : u.src()) src_shapes.push_back(shapes.count(s.get()) ? shapes[s.get()] : Shape{});
    shapes[u.get()] = infer_shape(u.op(), u.dtype(), u.arg(), u.src(), src_shapes);
  }
  return shapes.at(root.get());
}

std::vector<UOp> graph_buffers(const UOp& root) {
  std::vector<UOp> out;
  for (const UOp& u : root.toposort())
    if (u.op() == Ops::BUFFER) out.push_back(u);
  return out;
}

}  // namespace tunebed
