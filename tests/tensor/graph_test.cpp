// The tensor-level graph convention of core/tensor/README.md, node by node.
#include "core/tensor/graph.hpp"

#include <gtest/gtest.h>

#include "core/ir/text.hpp"
#include "core/tensor/tensor.hpp"

namespace tunebed {
namespace {

std::vector<int64_t> ints(const UOp& u) { return u.arg().as_ints(); }

TEST(TensorGraph, BuffersAreUniqueDeviceAndSize) {
  const Tensor t = Tensor::empty({2, 3}, dtypes::int32);
  ASSERT_EQ(t.uop().op(), Ops::RESHAPE);
  EXPECT_EQ(ints(t.uop()), (std::vector<int64_t>{2, 3}));
  const UOp buf = t.uop().src(0);
  EXPECT_EQ(buf.op(), Ops::BUFFER);
  EXPECT_EQ(buf.dtype(), dtypes::int32);
  EXPECT_EQ(buf.arg().as_int(), 6);
  EXPECT_EQ(buf.src(0).op(), Ops::UNIQUE);
  EXPECT_EQ(buf.src(1).op(), Ops::DEVICE);
  EXPECT_EQ(buf.src(1).arg().as_string(), "CPU");
  EXPECT_NE(buffer_id(buf), buffer_id(Tensor::empty({2, 3}, dtypes::int32).uop().src(0)));  // never shared
  EXPECT_EQ(t.buffers().count(buffer_id(buf)), 1u);
}

TEST(TensorGraph, ConstantsAreZeroDimAndExpanded) {
  const Tensor c(1.5);
  EXPECT_EQ(c.uop().op(), Ops::CONST);
  EXPECT_EQ(c.uop().src(0).op(), Ops::DEVICE);
  EXPECT_EQ(c.shape(), Shape{});
  const Tensor f = Tensor::full({2, 3}, 4);
  EXPECT_EQ(f.uop().op(), Ops::EXPAND);
  EXPECT_EQ(f.uop().src(0).op(), Ops::RESHAPE);
  EXPECT_EQ(ints(f.uop().src(0)), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(f.uop().src(0).src(0).arg().as_int(), 4);
}

TEST(TensorGraph, ReduceKeepsDimsAndPermutesKeptAxesFirst) {
  const Tensor x = Tensor::empty({2, 3});
  const UOp rows = x.sum(1).uop();  // RESHAPE((2,)) of REDUCE_AXIS(ADD, (1,)) of shape (2, 1)
  ASSERT_EQ(rows.op(), Ops::RESHAPE);
  const UOp r = rows.src(0);
  ASSERT_EQ(r.op(), Ops::REDUCE_AXIS);
  EXPECT_EQ(r.arg().as_tuple()[0].as_op(), Ops::ADD);
  EXPECT_EQ(r.arg().as_tuple()[1].as_ints(), (std::vector<int64_t>{1}));
  EXPECT_EQ(tensor_shape(r), (Shape{2, 1}));
  // Reducing axis 0 moves the kept axis in front first, as tinygrad's UOp.r.
  const UOp cols = x.sum(0).uop();
  const UOp r0 = cols.src(0).op() == Ops::REDUCE_AXIS ? cols.src(0) : cols.src(0).src(0);
  ASSERT_EQ(r0.op(), Ops::REDUCE_AXIS);
  EXPECT_EQ(r0.src(0).op(), Ops::PERMUTE);
  EXPECT_EQ(ints(r0.src(0)), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(r0.arg().as_tuple()[1].as_ints(), (std::vector<int64_t>{1}));
}

TEST(TensorGraph, OnlyTheTensorGraphsAluOpsAppear) {
  const Tensor a = Tensor::empty({4}), b = Tensor::empty({4});
  for (const Tensor& t : {a - b, a / b, a.eq(b), a.minimum(b)})
    for (const UOp& u : t.uop().toposort()) {
      EXPECT_NE(u.op(), Ops::SUB);
      EXPECT_NE(u.op(), Ops::FDIV);
      EXPECT_NE(u.op(), Ops::CMPEQ);
    }
  const UOp mm = Tensor::empty({2, 3}).matmul(Tensor::empty({3, 4})).uop();
  UOp r = mm;
  while (r.op() != Ops::REDUCE_AXIS) r = r.src(0);
  EXPECT_EQ(r.src(0).op(), Ops::MUL);
  EXPECT_EQ(r.src(0).src(0).op(), Ops::EXPAND);
  EXPECT_EQ(r.src(0).src(1).op(), Ops::EXPAND);
}

TEST(TensorGraph, ShapeOfEveryNodeAndTextRoundTrip) {
  const Tensor x = Tensor::empty({1, 2, 5, 5}), w = Tensor::empty({3, 2, 3, 3});
  const Tensor y =
      x.conv2d(w, std::nullopt, {.stride = {2}, .padding = {1}}).relu().max_pool2d({2, 2}).softmax();
  EXPECT_EQ(y.shape(), (Shape{1, 3, 1, 1}));
  EXPECT_EQ(tensor_shape(y.uop()), y.shape());
  EXPECT_EQ(parse_uop(print_uop(y.uop())), y.uop());
}

TEST(TensorGraph, InferShapeRefusesMalformedNodes) {
  const UOp a = Tensor::empty({2}).uop(), b = Tensor::empty({3}).uop();
  EXPECT_THROW(infer_shape(Ops::ADD, dtypes::float32, Arg(), {a, b}, {{2}, {3}}), ShapeError);
  EXPECT_THROW(infer_shape(Ops::CMPLT, dtypes::float32, Arg(), {a, a}, {{2}, {2}}),
               ShapeError);  // must be bool
  EXPECT_THROW(infer_shape(Ops::EXPAND, dtypes::float32, Arg::ints(std::vector<int64_t>{3}), {a}, {{2}}),
               ShapeError);
  EXPECT_THROW(infer_shape(Ops::REDUCE_AXIS, dtypes::float32,
                           Arg::tuple({Arg(Ops::ADD), Arg::ints(std::vector<int64_t>{0, 0})}), {a}, {{2}}),
               ShapeError);
}

TEST(TensorGraph, FromUopInfersTheShapeAndNeedsTheData) {
  const Tensor x = Tensor::from_values({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor y = Tensor::from_uop(x.sum(0).uop(), x.buffers());
  EXPECT_EQ(y.shape(), (Shape{3}));
  EXPECT_EQ(y.values<double>(), (std::vector<double>{5, 7, 9}));
  EXPECT_THROW(Tensor::from_uop(x.uop(), {}), std::invalid_argument);
}

TEST(TensorGraph, ToAnotherDeviceIsACopy) {
  Tensor x = Tensor::from_values({1, 2}, {2});
  Tensor y = x.to("CPU:1");
  EXPECT_EQ(y.uop().op(), Ops::COPY);
  EXPECT_EQ(y.uop().src(1).arg().as_string(), "CPU:1");
  EXPECT_EQ(y.device(), "CPU:1");
  EXPECT_EQ(x.device(), "CPU");
  EXPECT_EQ(y.values<double>(), (std::vector<double>{1, 2}));
}

}  // namespace
}  // namespace tunebed
