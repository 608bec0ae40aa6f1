// Broadcasting follows NumPy; ops given shapes they cannot work with throw ShapeError naming the
// op and the shapes, before any graph node exists.
#include <gtest/gtest.h>

#include "core/tensor/tensor.hpp"

namespace tunebed {
namespace {

using V = std::vector<double>;

// Runs f, which must throw ShapeError, and returns the message.
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const ShapeError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ShapeError";
  return "";
}

TEST(TensorBroadcast, FollowsNumpyRules) {
  const Tensor col = Tensor::from_values({1, 2}, {2, 1}), row = Tensor::from_values({10, 20, 30}, {3});
  Tensor sum = col + row;
  EXPECT_EQ(sum.shape(), (Shape{2, 3}));
  EXPECT_EQ(sum.values<double>(), (V{11, 21, 31, 12, 22, 32}));
  EXPECT_EQ((Tensor::ones({4, 1, 3}) * Tensor::ones({2, 1})).shape(), (Shape{4, 2, 3}));
  EXPECT_EQ((Tensor::ones({2, 3}) + Tensor(1.0)).shape(), (Shape{2, 3}));  // a 0-d tensor
  EXPECT_EQ((Tensor::ones({0, 3}) + Tensor::ones({1, 3})).shape(), (Shape{0, 3}));
  EXPECT_EQ(Tensor::ones({3}).expand({2, 3}).shape(), (Shape{2, 3}));
}

TEST(TensorErrors, IncompatibleBroadcastNamesBothShapes) {
  EXPECT_EQ(error_of([] {
              Tensor::ones({2, 3}) + Tensor::ones({4, 3});
            }),
            "add: cannot broadcast (2, 3) with (4, 3)");
  EXPECT_EQ(error_of([] { Tensor::ones({3}).expand({2, 4}); }), "expand: cannot broadcast (3,) to (2, 4)");
}

TEST(TensorErrors, MatmulOfMismatchedInnerDims) {
  EXPECT_EQ(error_of([] {
              Tensor::ones({2, 3}).matmul(Tensor::ones({4, 5}));
            }),
            "matmul: cannot dot (2, 3) and (4, 5): inner dims 3 and 4 differ");
  EXPECT_EQ(error_of([] {
              Tensor(1.0).matmul(Tensor::ones({4, 5}));
            }),
            "matmul: cannot dot () and (4, 5): both tensors need to be at least 1D");
  EXPECT_NE(error_of([] {
              Tensor::ones({2, 2, 3}).matmul(Tensor::ones({3, 3, 1}));
            }).find("batch dims do not broadcast"),
            std::string::npos);
}

TEST(TensorErrors, BadReshapeAxesAndArgs) {
  EXPECT_EQ(error_of([] {
              Tensor::ones({2, 3}).reshape({4, 2});
            }),
            "RESHAPE: cannot reshape (2, 3) to (4, 2)");
  EXPECT_EQ(error_of([] {
              Tensor::ones({2, 3}).reshape({-1, -1});
            }),
            "reshape: only one dimension can be -1, got (-1, -1)");
  EXPECT_EQ(error_of([] { Tensor::ones({2, 3}).sum(2); }), "sum: dimension 2 out of range for shape (2, 3)");
  EXPECT_EQ(error_of([] {
              Tensor::ones({2, 3}).min({1, -1});
            }),
            "min: an axis appears twice for shape (2, 3)");
  EXPECT_EQ(error_of([] {
              Tensor::ones({2, 3}).permute({0, 0});
            }),
            "PERMUTE: order is not a permutation of the axes of (2, 3)");
  EXPECT_EQ(error_of([] {
              Tensor::ones({2, 3}).shrink({{0, 2}, {1, 4}});
            }),
            "SHRINK: bounds (1, 4) out of range for axis 1 of (2, 3)");
  EXPECT_EQ(error_of([] { Tensor::ones({2, 3}).flip({1, -1}); }), "flip: axis -1 appears twice");
  EXPECT_EQ(error_of([] { Tensor::ones({4}).slice({{0, 4, 0}}); }), "slice: step of axis 0 is zero");
}

TEST(TensorErrors, ConvPoolAndDtypeMisuse) {
  EXPECT_NE(error_of([] {
              Tensor::ones({1, 3, 5, 5}).conv2d(Tensor::ones({4, 2, 3, 3}));
            }).find("conv2d: input (1, 3, 5, 5) does not match weight (4, 2, 3, 3)"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              Tensor::ones({1, 1, 2, 2}).max_pool2d({3, 3});
            }).find("is larger than the input"),
            std::string::npos);
  EXPECT_EQ(error_of([] { Tensor::ones({2}).idiv(Tensor::ones({2})); }), "idiv: needs integers, got float32");
  EXPECT_EQ(error_of([] { Tensor::rand({2}, 0, dtypes::int32); }), "rand: only float dtypes, got int32");
  Tensor a = Tensor::ones({2});
  EXPECT_EQ(error_of([&] { a.assign(Tensor::ones({3})); }),
            "assign: value (3,) float32 does not match target (2,) float32");
}

}  // namespace
}  // namespace tunebed
