// REDUCE_AXIS, and the sum of products that matmul and convolution build, with Eigen row-major
// matrices. A reduction moves the kept axes to the front (a permute), so the data is an
// (outer x inner) matrix whose rows reduce; a contraction sorts the axes into batch, M, N and K and
// runs one matrix product per batch.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/reference/array_ops.hpp"

namespace tunebed::reference {

namespace {

template <class T>
using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

std::vector<int64_t> checked_axes(Ops op, const Shape& shape, const std::vector<int64_t>& axes) {
  std::vector<int64_t> sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  for (size_t k = 0; k < sorted.size(); k++)
    if (sorted[k] < 0 || sorted[k] >= static_cast<int64_t>(shape.size()) || (k && sorted[k] == sorted[k - 1]))
      fail(op, "bad axes for shape " + shape_str(shape));
  return sorted;
}

bool contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

Shape reduced_shape(const Shape& shape, const std::vector<int64_t>& axes) {
  Shape out = shape;
  for (int64_t a : axes) out[a] = 1;
  return out;
}

// The identity of a reduction over zero elements.
double float_identity(Ops op) { return op == Ops::ADD ? 0.0 : op == Ops::MUL ? 1.0 : -INFINITY; }

}  // namespace

Array reduce(const Array& a, Ops op, const std::vector<int64_t>& axes_in) {
  if (op != Ops::ADD && op != Ops::MUL && op != Ops::MAX)
    fail(Ops::REDUCE_AXIS, std::string(op_name(op)) + " is not a reduce op");
  const std::vector<int64_t> axes = checked_axes(Ops::REDUCE_AXIS, a.shape, axes_in);
  // Kept axes first, reduced axes last: then each row of an (outer x inner) matrix reduces to one value.
  std::vector<int64_t> order;
  for (int64_t k = 0; k < static_cast<int64_t>(a.shape.size()); k++)
    if (!contains(axes, k)) order.push_back(k);
  int64_t inner = 1;
  for (int64_t k : axes) order.push_back(k), inner *= a.shape[k];
  const Array p = permute(a, order);
  Array out = make_array(a.dtype, reduced_shape(a.shape, axes));
  const Eigen::Index rows = out.numel(), cols = inner;

  if (a.dtype.is_float()) {
    Eigen::Map<Eigen::VectorXd> r(out.f.data(), rows);
    Eigen::Map<const RowMajor<double>> m(p.f.data(), rows, cols);
    if (cols == 0)
      r.setConstant(float_identity(op));
    else if (op == Ops::ADD)
      r = m.rowwise().sum();
    else if (op == Ops::MUL)
      r = m.rowwise().prod();
    else  // NaN propagates through max, as through the elementwise MAX
      r = m.rowwise().redux(
          [](double x, double y) { return std::isnan(x) || std::isnan(y) ? NAN : std::max(x, y); });
    // + 0.0: a kernel's accumulator starts at +0.0, so a sum of negative zeros is +0.0 there too.
    for (double& v : out.f) v = round_float(op == Ops::ADD ? v + 0.0 : v, a.dtype);
    return out;
  }
  // Integers: sums and products wrap modulo 2^64, then to the dtype (the same as wrapping at each step).
  Eigen::Map<const RowMajor<uint64_t>> m(reinterpret_cast<const uint64_t*>(p.i.data()), rows, cols);
  const bool u64 = a.dtype.scalar == Scalar::UInt64;
  for (Eigen::Index r = 0; r < rows; r++) {
    uint64_t acc = op == Ops::ADD ? 0 : op == Ops::MUL ? 1 : static_cast<uint64_t>(a.dtype.int_min());
    for (Eigen::Index c = 0; c < cols; c++) {
      const uint64_t x = m(r, c);
      if (op == Ops::ADD)
        acc += x;
      else if (op == Ops::MUL)
        acc *= x;
      else if (u64 ? x > acc : static_cast<int64_t>(x) > static_cast<int64_t>(acc))
        acc = x;
    }
    out.i[r] = wrap_int(static_cast<int64_t>(acc), a.dtype);
  }
  return out;
}

Array contract(const Array& p_in, const Array& q_in, const Shape& full, const std::vector<int64_t>& axes_in,
               DType out_dtype) {
  const std::vector<int64_t> axes = checked_axes(Ops::REDUCE_AXIS, full, axes_in);
  if (p_in.shape.size() != full.size() || q_in.shape.size() != full.size() || p_in.dtype != q_in.dtype)
    fail(Ops::REDUCE_AXIS, "contraction operands " + shape_str(p_in.shape) + " and " + shape_str(q_in.shape) +
                               " do not match the product's shape " + shape_str(full));
  // Each axis is batch (kept, in both), M (kept, in p only), N (kept, in q only) or K (reduced, in
  // both). An operand broadcast along a reduced axis, or a kept axis in neither, is expanded first.
  Shape p_shape = p_in.shape, q_shape = q_in.shape;
  std::vector<int64_t> batch, m_axes, n_axes, k_axes;
  for (int64_t a = 0; a < static_cast<int64_t>(full.size()); a++) {
    const bool in_p = p_shape[a] != 1 || full[a] == 1, in_q = q_shape[a] != 1 || full[a] == 1;
    if (contains(axes, a)) {
      p_shape[a] = q_shape[a] = full[a];
      k_axes.push_back(a);
    } else if (in_p && in_q) {
      batch.push_back(a);
    } else if (in_q) {
      n_axes.push_back(a);
    } else {
      p_shape[a] = full[a];
      m_axes.push_back(a);
    }
  }
  auto size_of = [&](const std::vector<int64_t>& group) {
    int64_t n = 1;
    for (int64_t a : group) n *= full[a];
    return n;
  };
  auto concat = [](std::initializer_list<const std::vector<int64_t>*> parts) {
    std::vector<int64_t> all;
    for (const auto* part : parts) all.insert(all.end(), part->begin(), part->end());
    return all;
  };
  // p is 1 along N and q along M, so listing those axes last leaves [B, M, K] and [B, K, N] in memory.
  const Array p = permute(expand(p_in, p_shape), concat({&batch, &m_axes, &k_axes, &n_axes}));
  const Array q = permute(expand(q_in, q_shape), concat({&batch, &k_axes, &n_axes, &m_axes}));
  const int64_t B = size_of(batch), M = size_of(m_axes), N = size_of(n_axes), K = size_of(k_axes);

  // The product in [batch, M, N] order, then back to the kept axes' order with the reduced axes as 1.
  Shape bmn_shape;
  for (int64_t a : concat({&batch, &m_axes, &n_axes})) bmn_shape.push_back(full[a]);
  Array bmn = make_array(out_dtype, bmn_shape);
  for (int64_t b = 0; b < B; b++) {
    if (p.dtype.is_float()) {
      Eigen::Map<const RowMajor<double>> lhs(p.f.data() + b * M * K, M, K), rhs(q.f.data() + b * K * N, K, N);
      Eigen::Map<RowMajor<double>>(bmn.f.data() + b * M * N, M, N).noalias() = lhs * rhs;
    } else {
      Eigen::Map<const RowMajor<uint64_t>> lhs(reinterpret_cast<const uint64_t*>(p.i.data()) + b * M * K, M,
                                               K),
          rhs(reinterpret_cast<const uint64_t*>(q.i.data()) + b * K * N, K, N);
      Eigen::Map<RowMajor<uint64_t>>(reinterpret_cast<uint64_t*>(bmn.i.data()) + b * M * N, M, N).noalias() =
          lhs * rhs;
    }
  }
  for (double& v : bmn.f) v = round_float(v + 0.0, out_dtype);  // +0.0 as in reduce()
  for (int64_t& v : bmn.i) v = wrap_int(v, out_dtype);

  std::vector<int64_t> bmn_axes = concat({&batch, &m_axes, &n_axes}), back(bmn_axes.size());
  std::vector<int64_t> kept = bmn_axes;
  std::sort(kept.begin(), kept.end());
  for (size_t k = 0; k < kept.size(); k++)
    back[k] = std::find(bmn_axes.begin(), bmn_axes.end(), kept[k]) - bmn_axes.begin();
  return reshape(permute(bmn, back), reduced_shape(full, axes));
}

}  // namespace tunebed::reference
