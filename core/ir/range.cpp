// Range analysis (vmin/vmax), as tinygrad's UOp._min_max, computed once when a node is built.
// Arithmetic is done in 128 bits; a bound outside the dtype's range widens to the whole dtype,
// because the value may then wrap around.
#include "core/ir/range.hpp"

#include <algorithm>
#include <stdexcept>

namespace tunebed {

namespace {

using i128 = __int128;

// C's truncating division, the semantics of IDIV.
i128 cdiv(i128 a, i128 b) { return a / b; }

Range whole(const DType& d) { return {d.int_min(), d.int_max()}; }

Range fit(i128 lo, i128 hi, const DType& d) {
  if (lo > hi || lo < d.int_min() || hi > d.int_max()) return whole(d);
  return {static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
}

Range binary(const UOpNode& n) {
  const UOp& a = n.src[0];
  const UOp& b = n.src[1];
  i128 a0 = a.vmin(), a1 = a.vmax(), b0 = b.vmin(), b1 = b.vmax();
  const DType& d = n.dtype;
  switch (n.op) {
    case Ops::ADD: return fit(a0 + b0, a1 + b1, d);
    case Ops::SUB: return fit(a0 - b1, a1 - b0, d);
    case Ops::MUL: {
      i128 v[] = {a0 * b0, a0 * b1, a1 * b0, a1 * b1};
      return fit(*std::min_element(v, v + 4), *std::max_element(v, v + 4), d);
    }
    case Ops::AND:
      if (d.is_bool()) return {a0 && b0, a1 && b1};
      if (b0 == b1 && a0 >= 0 && b0 >= 0) return fit(0, std::min(a1, b1), d);
      break;
    case Ops::OR:
      if (d.is_bool()) return {a0 || b0, a1 || b1};
      break;
    case Ops::SHL:
      if (b0 == b1 && b0 >= 0 && b0 < 63) return fit(a0 << static_cast<int>(b0), a1 << static_cast<int>(b0), d);
      break;
    case Ops::SHR:
      if (b0 == b1 && b0 >= 0 && b0 < 63) return fit(a0 >> static_cast<int>(b0), a1 >> static_cast<int>(b0), d);
      break;
    case Ops::MOD:
      if (b0 > 0) return fit(a0 >= 0 ? 0 : -(b1 - 1), a1 <= 0 ? 0 : b1 - 1, d);
      if (b1 < 0) return fit(a0 >= 0 ? 0 : -(-b0 - 1), a1 <= 0 ? 0 : -b0 - 1, d);
      break;
    case Ops::IDIV:
      if (b0 == b1 && b0 > 0) return fit(cdiv(a0, b0), cdiv(a1, b0), d);
      if (b0 == b1 && b0 < 0) return fit(cdiv(a1, b0), cdiv(a0, b0), d);
      if (a1 <= 0 && b1 < 0) return fit(cdiv(a1, b0), cdiv(a0, b1), d);
      if (a0 >= 0 && b0 > 0) return fit(cdiv(a0, b1), cdiv(a1, b0), d);
      if (a1 <= 0 && b0 > 0) return fit(cdiv(a0, b0), cdiv(a1, b1), d);
      if (a0 >= 0 && b1 < 0) return fit(cdiv(a1, b1), cdiv(a0, b0), d);
      break;
    case Ops::MAX: return fit(std::max(a0, b0), std::max(a1, b1), d);
    case Ops::CMPLT: return {a1 < b0, a0 < b1};
    case Ops::CMPNE: return {a1 < b0 || b1 < a0, !(a0 == a1 && a1 == b0 && b0 == b1)};
    case Ops::CMPEQ: return {a0 == a1 && a1 == b0 && b0 == b1, !(a1 < b0 || b1 < a0)};
    default: break;
  }
  return whole(d);
}

}  // namespace

Range compute_range(const UOpNode& n) {
  const DType& d = n.dtype;
  if (d.ptr || d.is_void()) return {0, 0};
  bool integral = d.is_int() || d.is_bool();
  switch (n.op) {
    case Ops::CONST:
      if (n.arg.is<int64_t>()) return {n.arg.as_int(), n.arg.as_int()};
      if (n.arg.is<bool>()) return {n.arg.as_bool(), n.arg.as_bool()};
      return whole(d);
    case Ops::DEFINE_VAR: {
      // An empty range would reach a division by its bounds (fuzz_ir_parse found IDIV by one).
      const ArgTuple& t = n.arg.as_tuple();
      if (t.at(1).as_int() > t.at(2).as_int())
        throw std::invalid_argument("variable " + t.at(0).as_string() + " has min > max");
      return {t.at(1).as_int(), t.at(2).as_int()};
    }
    case Ops::RANGE: return {0, std::max<int64_t>(1, n.src.at(0).vmax()) - 1};
    case Ops::SPECIAL: {
      const Arg& size = n.arg.as_tuple().at(1);
      return {0, std::max<int64_t>(1, size.is<UOp>() ? size.as_uop().vmax() : size.as_int()) - 1};
    }
    case Ops::BIND: return {n.src.at(0).vmin(), n.src.at(0).vmax()};
    case Ops::WHERE:
      if (!integral || n.src.size() != 3) break;
      return {std::min(n.src[1].vmin(), n.src[2].vmin()), std::max(n.src[1].vmax(), n.src[2].vmax())};
    case Ops::UNROLL:
    case Ops::VECTORIZE: {
      if (!integral || n.src.empty()) break;
      Range r{n.src[0].vmin(), n.src[0].vmax()};
      for (const UOp& s : n.src) r = {std::min(r.lo, s.vmin()), std::max(r.hi, s.vmax())};
      return r;
    }
    case Ops::CAST: {
      if (!integral || n.src.size() != 1) break;
      const UOp& s = n.src[0];
      if (!(s.dtype().is_int() || s.dtype().is_bool())) break;
      if (s.vmin() >= d.int_min() && s.vmax() <= d.int_max()) return {s.vmin(), s.vmax()};
      break;
    }
    default:
      if (GroupOp::Binary.contains(n.op) && n.src.size() == 2 && !n.src[0].dtype().is_float() &&
          !n.src[0].dtype().ptr && (integral || GroupOp::Comparison.contains(n.op)))
        return binary(n);
  }
  return whole(d);
}

}  // namespace tunebed
