// The generator works top-down from a target shape and dtype: each op picks the shapes its sources
// must have to produce the target (a reduce adds an axis, a pad shrinks one, a matmul invents an
// inner dim...), so every program it builds is well formed by construction.
#include "core/tensor/random_program.hpp"

#include <algorithm>
#include <numeric>

namespace tunebed {

namespace {

class Generator {
 public:
  Generator(RandomSource& r, const RandomProgramOptions& o) : r_(r), o_(o) {}

  Tensor gen(int depth, const Shape& shape, DType dtype) {
    if (depth <= 0 || r_.integer(0, 5) == 0) return leaf(shape, dtype);
    switch (r_.integer(0, 8)) {
      case 0:
      case 1:
        return unary(depth, shape, dtype);
      case 2:
      case 3:
        return binary(depth, shape, dtype);
      case 4:
        return reduce(depth, shape, dtype);
      case 5:
        return movement(depth, shape, dtype);
      case 6:
        return shape.size() >= 2 ? matmul(depth, shape, dtype) : binary(depth, shape, dtype);
      case 7:
        return cast(depth, shape, dtype);
      default:
        return where(depth, shape, dtype);
    }
  }

  Shape random_shape() {
    Shape s(r_.integer(0, o_.max_rank));
    for (int64_t& d : s) d = r_.integer(1, o_.max_dim);
    return s;
  }

  std::vector<Tensor> inputs;

 private:
  Tensor input(const Shape& shape, DType dtype) {
    const uint64_t seed = static_cast<uint64_t>(r_.integer(0, int64_t{1} << 30));
    Tensor t =
        dtype.is_float() ? Tensor::randn(shape, seed, dtype) : Tensor::randint(shape, -5, 6, seed, dtype);
    inputs.push_back(t);
    return t;
  }

  Tensor leaf(const Shape& shape, DType dtype) {
    switch (r_.integer(0, 3)) {
      case 0: {
        const int64_t v = r_.integer(-4, 4);
        return dtype.is_float() ? Tensor::full(shape, static_cast<double>(v) / 2, dtype)
                                : Tensor::full(shape, v, dtype);
      }
      case 1:
        return input(broadcastable(shape), dtype).expand(shape);
      case 2:
        return input(shape, dtype);
      default:
        return index_along_axis(shape, dtype);
    }
  }

  // The index along one axis: tinygrad's arange, a cumulative sum that codegen folds to a closed
  // form (reduce_collapse). It reads one number, as input() does, so that the choices after it
  // stay where they were.
  Tensor index_along_axis(const Shape& shape, DType dtype) {
    const int64_t pick = r_.integer(0, int64_t{1} << 30);
    if (shape.empty()) return Tensor::full(shape, 0, dtype);
    const size_t axis = static_cast<size_t>(pick) % shape.size();
    Shape along(shape.size(), 1);
    along[axis] = shape[axis];
    return Tensor::arange(shape[axis]).reshape(along).expand(shape).cast(dtype);
  }

  // A shape that broadcasts to `shape`: some dims 1, maybe fewer leading dims.
  Shape broadcastable(const Shape& shape) {
    Shape s(shape.begin() + r_.integer(0, static_cast<int64_t>(shape.size())), shape.end());
    for (int64_t& d : s)
      if (r_.integer(0, 2) == 0) d = 1;
    return s;
  }

  Tensor unary(int depth, const Shape& shape, DType dtype) {
    const Tensor x = gen(depth - 1, shape, dtype);
    if (!dtype.is_float()) {
      switch (r_.integer(0, 3)) {
        case 0:
          return -x;
        case 1:
          return x.relu();
        case 2:
          return x.abs();
        default:
          return x.square();
      }
    }
    switch (r_.integer(0, 9)) {
      case 0:
        return -x;
      case 1:
        return x.exp2();
      case 2:
        return x.log2();
      case 3:
        return x.sqrt();
      case 4:
        return x.sin();
      case 5:
        return x.reciprocal();
      case 6:
        return x.relu();
      case 7:
        return x.abs();
      case 8:
        return x.sigmoid();
      default:
        return x.square();
    }
  }

  Tensor binary(int depth, const Shape& shape, DType dtype) {
    const Tensor a = gen(depth - 1, shape, dtype);
    const Tensor b = gen(depth - 1, broadcastable(shape), dtype);
    switch (r_.integer(0, dtype.is_float() ? 5 : 4)) {
      case 0:
        return a + b;
      case 1:
        return a - b;
      case 2:
        return a * b;
      case 3:
        return a.maximum(b);
      case 4:
        return a.minimum(b);
      default:
        return a / b;
    }
  }

  Tensor reduce(int depth, const Shape& shape, DType dtype) {
    const int64_t axis = r_.integer(0, static_cast<int64_t>(shape.size()));
    Shape child = shape;
    child.insert(child.begin() + axis, r_.integer(1, o_.max_dim));
    const Tensor x = gen(depth - 1, child, dtype);
    switch (r_.integer(0, dtype.is_float() ? 3 : 2)) {
      case 0:
        return x.sum(static_cast<int>(axis));
      case 1:
        return x.max(static_cast<int>(axis));
      case 2:
        return x.min(static_cast<int>(axis));
      default:
        return x.mean(static_cast<int>(axis));
    }
  }

  Tensor movement(int depth, const Shape& shape, DType dtype) {
    const size_t rank = shape.size();
    switch (r_.integer(0, 5)) {
      case 0: {  // permute: source axis perm[i] becomes axis i
        std::vector<int64_t> perm(rank);
        std::iota(perm.begin(), perm.end(), 0);
        for (size_t k = rank; k > 1; k--)
          std::swap(perm[k - 1], perm[r_.integer(0, static_cast<int64_t>(k) - 1)]);
        Shape child(rank);
        for (size_t k = 0; k < rank; k++) child[perm[k]] = shape[k];
        return gen(depth - 1, child, dtype).permute(perm);
      }
      case 1:
        return gen(depth - 1, reshaped(shape), dtype).reshape(shape);
      case 2: {
        Shape child = shape;
        PadPairs pads;
        for (int64_t& d : child) {
          const int64_t before = r_.integer(0, std::min<int64_t>(2, d - 1));
          const int64_t after = r_.integer(0, std::min<int64_t>(2, d - 1 - before));
          d -= before + after;
          pads.emplace_back(before, after);
        }
        return gen(depth - 1, child, dtype).pad(pads);
      }
      case 3: {
        Shape child = shape;
        PadPairs bounds;
        for (size_t k = 0; k < rank; k++) {
          const int64_t before = r_.integer(0, 2), after = r_.integer(0, 2);
          child[k] += before + after;
          bounds.emplace_back(before, before + shape[k]);
        }
        return gen(depth - 1, child, dtype).shrink(bounds);
      }
      case 4: {
        std::vector<int64_t> axes;
        for (size_t k = 0; k < rank; k++)
          if (r_.coin()) axes.push_back(static_cast<int64_t>(k));
        return gen(depth - 1, shape, dtype).flip(axes);
      }
      default: {
        Shape child = shape;
        for (int64_t& d : child)
          if (r_.coin()) d = 1;
        return gen(depth - 1, child, dtype).expand(shape);
      }
    }
  }

  // Another shape of the same size: two adjacent dims merged, one split by a divisor, or a 1 added.
  Shape reshaped(const Shape& shape) {
    Shape s = shape;
    const int64_t kind = r_.integer(0, 2);
    if (kind == 0 && s.size() >= 2) {
      const size_t k = static_cast<size_t>(r_.integer(0, static_cast<int64_t>(s.size()) - 2));
      s[k] *= s[k + 1];
      s.erase(s.begin() + k + 1);
    } else if (kind == 1 && !s.empty()) {
      const size_t k = static_cast<size_t>(r_.integer(0, static_cast<int64_t>(s.size()) - 1));
      std::vector<int64_t> divisors;
      for (int64_t f = 1; f <= s[k]; f++)
        if (s[k] % f == 0) divisors.push_back(f);
      const int64_t f = r_.pick(divisors);
      s[k] /= f;
      s.insert(s.begin() + k, f);
    } else {
      s.insert(s.begin() + r_.integer(0, static_cast<int64_t>(s.size())), 1);
    }
    return s;
  }

  Tensor matmul(int depth, const Shape& shape, DType dtype) {
    const int64_t K = r_.integer(1, o_.max_dim);
    Shape a(shape.begin(), shape.end() - 1), b(shape.begin(), shape.end() - 2);
    a.push_back(K);
    b.insert(b.end(), {K, shape.back()});
    return gen(depth - 1, a, dtype).matmul(gen(depth - 1, b, dtype));
  }

  // A float cast to an integer is undefined in C out of range (NaN included), so the program clamps
  // first: a compiled kernel and the reference must agree on every program generated.
  Tensor cast(int depth, const Shape& shape, DType dtype) {
    const DType from = r_.pick(o_.dtypes);
    Tensor x = gen(depth - 1, shape, from);
    if (from.is_float() && !dtype.is_float())
      x = x.ne(x).where(0.0, x).maximum(scalar_like(x, -1000.0)).minimum(scalar_like(x, 1000.0));
    return x.cast(dtype);
  }

  Tensor where(int depth, const Shape& shape, DType dtype) {
    const DType cd = r_.pick(o_.dtypes);
    const Tensor cond = gen(depth - 1, broadcastable(shape), cd) < gen(depth - 1, broadcastable(shape), cd);
    return cond.where(gen(depth - 1, shape, dtype), gen(depth - 1, broadcastable(shape), dtype));
  }

  RandomSource& r_;
  const RandomProgramOptions& o_;
};

}  // namespace

RandomProgram random_program(RandomSource& rng, const RandomProgramOptions& opts) {
  if (opts.dtypes.empty() || opts.max_dim < 1 || opts.max_rank < 0)
    throw std::invalid_argument("random_program: options need dtypes, max_dim >= 1 and max_rank >= 0");
  Generator g(rng, opts);
  const Shape shape = g.random_shape();
  const DType dtype = rng.pick(opts.dtypes);
  Tensor out = g.gen(rng.integer(0, opts.max_depth), shape, dtype);
  return {std::move(g.inputs), std::move(out)};
}

}  // namespace tunebed
