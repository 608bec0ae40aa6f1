#include "scalar_eval.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace tunebed::testing {

namespace {

int64_t flat_index(const std::vector<int64_t>& idx, const std::vector<int64_t>& shape) {
  int64_t flat = 0;
  for (size_t k = 0; k < shape.size(); k++) flat = flat * shape[k] + idx[k];
  return flat;
}

std::vector<int64_t> unflatten(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t k = shape.size(); k-- > 0;) idx[k] = flat % shape[k], flat /= shape[k];
  return idx;
}

std::vector<std::pair<int64_t, int64_t>> pairs(const Arg& a) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const Arg& p : a.as_tuple()) out.emplace_back(p.as_tuple()[0].as_int(), p.as_tuple()[1].as_int());
  return out;
}

ScalarValue rounded(const DType& d, double f, int64_t i) {
  if (d.is_float()) return {round_float(f, d), 0};
  return {0, wrap_int(i, d)};
}

double as_double(const DType& d, const ScalarValue& v) {
  return d.is_float() ? v.f : static_cast<double>(v.i);
}

// One element of an elementwise op, on the sources' values. Integer + - * wrap through uint64.
ScalarValue alu(Ops op, const DType& out, const DType& in, const std::vector<ScalarValue>& s) {
  if (op == Ops::WHERE) return s[0].i ? s[1] : s[2];
  if (in.is_float()) {
    const double a = s[0].f, b = s.size() > 1 ? s[1].f : 0;
    switch (op) {
      case Ops::ADD:
        return rounded(out, a + b, 0);
      case Ops::MUL:
        return rounded(out, a * b, 0);
      case Ops::MAX:
        return rounded(out, std::isnan(a) || std::isnan(b) ? NAN : a < b ? b : a, 0);
      case Ops::POW:
        return rounded(out, std::pow(a, b), 0);
      case Ops::CMPLT:
        return {0, a < b};
      case Ops::CMPNE:
        return {0, a != b};
      case Ops::NEG:
        return rounded(out, -a, 0);
      case Ops::RECIP:
        return rounded(out, 1 / a, 0);
      case Ops::SQRT:
        return rounded(out, std::sqrt(a), 0);
      case Ops::EXP2:
        return rounded(out, std::exp2(a), 0);
      case Ops::LOG2:
        return rounded(out, std::log2(a), 0);
      case Ops::SIN:
        return rounded(out, std::sin(a), 0);
      default:
        throw std::runtime_error("scalar evaluator: no float " + std::string(op_name(op)));
    }
  }
  const uint64_t a = static_cast<uint64_t>(s[0].i), b = s.size() > 1 ? static_cast<uint64_t>(s[1].i) : 0;
  switch (op) {
    case Ops::ADD:
      return rounded(out, 0, static_cast<int64_t>(a + b));
    case Ops::MUL:
      return rounded(out, 0, static_cast<int64_t>(a * b));
    case Ops::XOR:
      return rounded(out, 0, static_cast<int64_t>(a ^ b));
    case Ops::MAX:
      return rounded(out, 0, std::max(s[0].i, s[1].i));
    case Ops::CMPLT:
      return {0, s[0].i < s[1].i};
    case Ops::CMPNE:
      return {0, s[0].i != s[1].i};
    default:
      throw std::runtime_error("scalar evaluator: no integer " + std::string(op_name(op)));
  }
}

ScalarValue cast(const DType& to, const DType& from, const ScalarValue& v) {
  if (to.is_float()) return rounded(to, as_double(from, v), 0);
  if (!from.is_float()) return rounded(to, 0, v.i);
  if (to.is_bool()) return {0, v.f != 0};
  // Out of range is undefined in C; the reference saturates to int64 and wraps (reference.hpp).
  if (std::isnan(v.f)) return {0, 0};
  if (v.f >= 0x1p63) return rounded(to, 0, std::numeric_limits<int64_t>::max());
  if (v.f <= -0x1p63) return rounded(to, 0, std::numeric_limits<int64_t>::min());
  return rounded(to, 0, static_cast<int64_t>(v.f));
}

}  // namespace

std::vector<int64_t> ScalarEvaluator::shape(const UOp& u) {
  if (auto it = shapes_.find(u.get()); it != shapes_.end()) return it->second;
  std::vector<int64_t> s;
  switch (u.op()) {
    case Ops::BUFFER:
      s = {u.arg().as_int()};
      break;
    case Ops::CONST:
      break;
    case Ops::RESHAPE:
    case Ops::EXPAND:
      s = u.arg().as_ints();
      break;
    case Ops::PERMUTE:
      for (int64_t p : u.arg().as_ints()) s.push_back(shape(u.src(0))[p]);
      break;
    case Ops::PAD:
    case Ops::SHRINK: {
      s = shape(u.src(0));
      const auto ps = pairs(u.arg());
      for (size_t k = 0; k < s.size(); k++)
        s[k] = u.op() == Ops::PAD ? s[k] + ps[k].first + ps[k].second : ps[k].second - ps[k].first;
      break;
    }
    case Ops::REDUCE_AXIS:
      s = shape(u.src(0));
      for (int64_t a : u.arg().as_tuple()[1].as_ints()) s[a] = 1;
      break;
    default:
      s = shape(u.src(0));
  }
  shapes_[u.get()] = s;
  return s;
}

ScalarValue ScalarEvaluator::at(const UOp& u, const std::vector<int64_t>& index) {
  auto key = std::make_pair(u.get(), index);
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  const ScalarValue v = compute(u, index);
  memo_[key] = v;
  return v;
}

ScalarValue ScalarEvaluator::compute(const UOp& u, const std::vector<int64_t>& idx) {
  const DType& d = u.dtype();
  switch (u.op()) {
    case Ops::BUFFER: {
      const HostBuffer& b = *buffers_.at(u.src(0).arg().as_int());
      return d.is_float() ? ScalarValue{b.get_float(idx[0]), 0} : ScalarValue{0, b.get_int(idx[0])};
    }
    case Ops::CONST: {
      const Arg& a = u.arg();
      if (d.is_float()) return {a.as_number(), 0};
      return {0, a.is<bool>() ? a.as_bool() : a.as_int()};
    }
    case Ops::RESHAPE:
      return at(u.src(0), unflatten(flat_index(idx, shape(u)), shape(u.src(0))));
    case Ops::PERMUTE: {
      const std::vector<int64_t> perm = u.arg().as_ints();
      std::vector<int64_t> src(idx.size());
      for (size_t k = 0; k < perm.size(); k++) src[perm[k]] = idx[k];
      return at(u.src(0), src);
    }
    case Ops::EXPAND: {
      std::vector<int64_t> src = idx;
      const std::vector<int64_t> in = shape(u.src(0));
      for (size_t k = 0; k < src.size(); k++)
        if (in[k] == 1) src[k] = 0;
      return at(u.src(0), src);
    }
    case Ops::PAD: {
      std::vector<int64_t> src = idx;
      const std::vector<int64_t> in = shape(u.src(0));
      const auto ps = pairs(u.arg());
      for (size_t k = 0; k < src.size(); k++) {
        src[k] -= ps[k].first;
        if (src[k] < 0 || src[k] >= in[k]) return {};  // zero
      }
      return at(u.src(0), src);
    }
    case Ops::SHRINK: {
      std::vector<int64_t> src = idx;
      const auto ps = pairs(u.arg());
      for (size_t k = 0; k < src.size(); k++) src[k] += ps[k].first;
      return at(u.src(0), src);
    }
    case Ops::FLIP: {
      std::vector<int64_t> src = idx;
      const std::vector<int64_t> in = shape(u.src(0));
      const ArgTuple& flip = u.arg().as_tuple();
      for (size_t k = 0; k < src.size(); k++)
        if (flip[k].as_bool()) src[k] = in[k] - 1 - src[k];
      return at(u.src(0), src);
    }
    case Ops::REDUCE_AXIS:
      return reduce(u, idx);
    case Ops::CAST:
      return cast(d, u.src(0).dtype(), at(u.src(0), idx));
    case Ops::CONTIGUOUS:
      return at(u.src(0), idx);
    default:
      break;
  }
  std::vector<ScalarValue> srcs;
  for (const UOp& s : u.src()) srcs.push_back(at(s, idx));
  return alu(u.op(), d, u.src(u.op() == Ops::WHERE ? 1 : 0).dtype(), srcs);
}

// A sum accumulates in double (or wrapping 64-bit integers) and rounds once. A sum of float
// products (a MUL under the reduce, through permutes and widening casts) takes each product exactly,
// as core/reference/reference.hpp documents for contractions.
ScalarValue ScalarEvaluator::reduce(const UOp& u, const std::vector<int64_t>& idx) {
  const Ops op = u.arg().as_tuple()[0].as_op();
  const std::vector<int64_t> axes = u.arg().as_tuple()[1].as_ints();
  const UOp& src = u.src(0);
  const std::vector<int64_t> in = shape(src);
  const DType& d = u.dtype();
  UOp mul = src;
  while (mul.op() == Ops::PERMUTE ||
         (mul.op() == Ops::CAST && mul.dtype().is_float() && mul.src(0).dtype().is_float() &&
          mul.dtype().itemsize() >= mul.src(0).dtype().itemsize()))
    mul = mul.src(0);
  const bool exact_products =
      op == Ops::ADD && d.is_float() && mul.op() == Ops::MUL && mul.dtype().is_float();

  double facc = op == Ops::ADD ? 0 : op == Ops::MUL ? 1 : -std::numeric_limits<double>::infinity();
  uint64_t iacc = op == Ops::ADD ? 0 : op == Ops::MUL ? 1 : static_cast<uint64_t>(d.int_min());
  int64_t count = 1;
  for (int64_t a : axes) count *= in[a];
  for (int64_t r = 0; r < count; r++) {
    std::vector<int64_t> full = idx;
    int64_t rest = r;
    for (size_t k = axes.size(); k-- > 0;) full[axes[k]] = rest % in[axes[k]], rest /= in[axes[k]];
    if (exact_products) {
      // The index at the MUL: undo the permutes between it and the reduce, outermost first.
      std::vector<int64_t> at_mul = full;
      for (UOp c = src; c != mul; c = c.src(0)) {
        if (c.op() != Ops::PERMUTE) continue;
        const std::vector<int64_t> perm = c.arg().as_ints();
        std::vector<int64_t> next(at_mul.size());
        for (size_t k = 0; k < perm.size(); k++) next[perm[k]] = at_mul[k];
        at_mul = next;
      }
      facc += at(mul.src(0), at_mul).f * at(mul.src(1), at_mul).f;
      continue;
    }
    const ScalarValue v = at(src, full);
    if (d.is_float()) {
      if (op == Ops::ADD)
        facc += v.f;
      else if (op == Ops::MUL)
        facc *= v.f;
      else
        facc = std::isnan(facc) || std::isnan(v.f) ? NAN : std::max(facc, v.f);
    } else {
      if (op == Ops::ADD)
        iacc += static_cast<uint64_t>(v.i);
      else if (op == Ops::MUL)
        iacc *= static_cast<uint64_t>(v.i);
      else
        iacc = static_cast<uint64_t>(std::max(static_cast<int64_t>(iacc), v.i));
    }
  }
  return rounded(d, facc, static_cast<int64_t>(iacc));
}

}  // namespace tunebed::testing
