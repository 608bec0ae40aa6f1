// The reference against naive nested loops written here, independently of both the Tensor
// front end's graphs and the interpreter: matmul, conv2d (stride, padding, dilation, groups),
// pooling, softmax and layernorm at several shapes, odd and prime sizes included.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/reference/reference.hpp"
#include "core/tensor/tensor.hpp"

namespace tunebed {
namespace {

using V = std::vector<double>;

// The reference's answer for a tensor's graph (not through realize, so the oracle is what runs).
V reference_values(const Tensor& t) {
  const reference::Array a = reference::evaluate(t.uop(), t.buffers());
  EXPECT_EQ(a.shape, t.shape());
  V out;
  for (int64_t k = 0; k < a.numel(); k++) out.push_back(a.as_double(k));
  return out;
}

V host(Tensor t) { return t.values<double>(); }

void expect_close(const V& got, const V& want, double rtol = 1e-5, double atol = 1e-5) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); k++)
    ASSERT_NEAR(got[k], want[k], atol + rtol * std::fabs(want[k])) << "element " << k;
}

struct MatmulCase {
  int64_t b, m, k, n;
};

TEST(ReferenceVsLoops, Matmul) {
  for (const MatmulCase c :
       {MatmulCase{1, 1, 1, 1}, {1, 7, 13, 5}, {3, 4, 1, 9}, {2, 17, 11, 3}, {1, 64, 31, 33}}) {
    const Tensor a = Tensor::randn({c.b, c.m, c.k}, 1), b = Tensor::randn({c.b, c.k, c.n}, 2);
    const V av = host(a), bv = host(b);
    V want(c.b * c.m * c.n, 0);
    for (int64_t z = 0; z < c.b; z++)
      for (int64_t i = 0; i < c.m; i++)
        for (int64_t j = 0; j < c.n; j++) {
          double acc = 0;
          for (int64_t r = 0; r < c.k; r++) acc += av[(z * c.m + i) * c.k + r] * bv[(z * c.k + r) * c.n + j];
          want[(z * c.m + i) * c.n + j] = static_cast<float>(acc);
        }
    expect_close(reference_values(a.matmul(b)), want);
  }
}

TEST(ReferenceVsLoops, IntegerMatmulIsExactAndWraps) {
  const Tensor a = Tensor::randint({5, 7}, -1000, 1000, 3), b = Tensor::randint({7, 3}, -1000000, 1000000, 4);
  const V av = host(a), bv = host(b);
  V want;
  for (int64_t i = 0; i < 5; i++)
    for (int64_t j = 0; j < 3; j++) {
      int64_t acc = 0;
      for (int64_t r = 0; r < 7; r++)
        acc += static_cast<int64_t>(av[i * 7 + r]) * static_cast<int64_t>(bv[r * 3 + j]);
      want.push_back(static_cast<int32_t>(static_cast<uint32_t>(acc)));  // int32 wraps
    }
  EXPECT_EQ(reference_values(a.matmul(b)), want);
}

struct ConvCase {
  int64_t n, cin, h, w, cout, kh, kw, stride, pad, dil, groups;
};

V naive_conv(const V& x, const V& wt, const ConvCase& c, int64_t oh, int64_t ow) {
  const int64_t cin_g = c.cin / c.groups, cout_g = c.cout / c.groups;
  V out(c.n * c.cout * oh * ow, 0);
  for (int64_t b = 0; b < c.n; b++)
    for (int64_t o = 0; o < c.cout; o++)
      for (int64_t y = 0; y < oh; y++)
        for (int64_t x0 = 0; x0 < ow; x0++) {
          double acc = 0;
          const int64_t g = o / cout_g;
          for (int64_t ci = 0; ci < cin_g; ci++)
            for (int64_t ky = 0; ky < c.kh; ky++)
              for (int64_t kx = 0; kx < c.kw; kx++) {
                const int64_t iy = y * c.stride + ky * c.dil - c.pad, ix = x0 * c.stride + kx * c.dil - c.pad;
                if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w) continue;
                acc += x[((b * c.cin + g * cin_g + ci) * c.h + iy) * c.w + ix] *
                       wt[((o * cin_g + ci) * c.kh + ky) * c.kw + kx];
              }
          out[((b * c.cout + o) * oh + y) * ow + x0] = static_cast<float>(acc);
        }
  return out;
}

TEST(ReferenceVsLoops, Conv2d) {
  const ConvCase cases[] = {
      {1, 1, 5, 5, 1, 3, 3, 1, 0, 1, 1},   {2, 3, 7, 6, 4, 3, 2, 1, 1, 1, 1},
      {1, 4, 9, 9, 6, 3, 3, 2, 1, 1, 2},   {1, 2, 11, 7, 2, 3, 3, 1, 2, 2, 1},
      {1, 6, 8, 8, 6, 3, 3, 1, 1, 1, 6},   {2, 4, 13, 5, 8, 2, 2, 3, 0, 1, 4},
      {1, 3, 10, 10, 3, 5, 3, 2, 2, 2, 3},
  };
  for (const ConvCase& c : cases) {
    const Tensor x = Tensor::randn({c.n, c.cin, c.h, c.w}, 5),
                 w = Tensor::randn({c.cout, c.cin / c.groups, c.kh, c.kw}, 6);
    const Tensor y = x.conv2d(
        w, std::nullopt, {.groups = c.groups, .stride = {c.stride}, .dilation = {c.dil}, .padding = {c.pad}});
    const int64_t oh = (c.h + 2 * c.pad - c.dil * (c.kh - 1) - 1) / c.stride + 1;
    const int64_t ow = (c.w + 2 * c.pad - c.dil * (c.kw - 1) - 1) / c.stride + 1;
    ASSERT_EQ(y.shape(), (Shape{c.n, c.cout, oh, ow}));
    expect_close(reference_values(y), naive_conv(host(x), host(w), c, oh, ow));
  }
}

TEST(ReferenceVsLoops, MaxAndAvgPool) {
  struct PoolCase {
    int64_t h, w, k, stride, pad;
  };
  for (const PoolCase c :
       {PoolCase{4, 4, 2, 2, 0}, {7, 5, 3, 2, 1}, {9, 9, 3, 3, 0}, {6, 11, 2, 1, 1}, {5, 5, 5, 1, 2}}) {
    const Tensor x = Tensor::randn({2, 3, c.h, c.w}, 7);
    const V xv = host(x);
    const int64_t oh = (c.h + 2 * c.pad - c.k) / c.stride + 1, ow = (c.w + 2 * c.pad - c.k) / c.stride + 1;
    V want_max, want_avg;
    for (int64_t p = 0; p < 6; p++)
      for (int64_t y = 0; y < oh; y++)
        for (int64_t x0 = 0; x0 < ow; x0++) {
          double mx = -std::numeric_limits<double>::infinity(), sum = 0;
          for (int64_t ky = 0; ky < c.k; ky++)
            for (int64_t kx = 0; kx < c.k; kx++) {
              const int64_t iy = y * c.stride + ky - c.pad, ix = x0 * c.stride + kx - c.pad;
              if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w) continue;  // padding: -inf for max, 0 for avg
              const double v = xv[(p * c.h + iy) * c.w + ix];
              mx = std::max(mx, v), sum += v;
            }
          want_max.push_back(mx);
          want_avg.push_back(sum / (c.k * c.k));  // the average counts the padding
        }
    const std::vector<int64_t> k{c.k, c.k}, s{c.stride, c.stride}, pad{c.pad};
    expect_close(reference_values(x.max_pool2d(k, s, {1}, pad)), want_max);
    expect_close(reference_values(x.avg_pool2d(k, s, {1}, pad)), want_avg);
  }
}

TEST(ReferenceVsLoops, SoftmaxAndLayernorm) {
  for (const Shape& shape : {Shape{1, 1}, Shape{3, 7}, Shape{5, 13}, Shape{2, 64}, Shape{17, 3}}) {
    const Tensor x = Tensor::randn(shape, 8) * 3;
    const V xv = host(x);
    const int64_t rows = shape[0], n = shape[1];
    V soft, norm;
    for (int64_t r = 0; r < rows; r++) {
      double mx = -INFINITY, total = 0, mean = 0, var = 0;
      for (int64_t j = 0; j < n; j++) mx = std::max(mx, xv[r * n + j]), mean += xv[r * n + j] / n;
      for (int64_t j = 0; j < n; j++)
        total += std::exp(xv[r * n + j] - mx), var += std::pow(xv[r * n + j] - mean, 2) / n;
      for (int64_t j = 0; j < n; j++) soft.push_back(std::exp(xv[r * n + j] - mx) / total);
      for (int64_t j = 0; j < n; j++) norm.push_back((xv[r * n + j] - mean) / std::sqrt(var + 1e-5));
    }
    expect_close(reference_values(x.softmax()), soft, 1e-5, 1e-6);
    expect_close(reference_values(x.layernorm()), norm, 1e-4, 1e-4);
  }
}

}  // namespace
}  // namespace tunebed
