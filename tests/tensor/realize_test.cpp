// realize(), assign and the Backend seam.
#include "core/tensor/realize.hpp"

#include <gtest/gtest.h>

#include "core/tensor/graph.hpp"
#include "core/tensor/tensor.hpp"

namespace tunebed {
namespace {

using V = std::vector<double>;

TEST(TensorRealize, RealizeTurnsTheGraphIntoABuffer) {
  Tensor t = (Tensor::arange(6).reshape({2, 3}) * 2).transpose();
  EXPECT_FALSE(t.is_realized());
  t.realize();
  EXPECT_TRUE(t.is_realized());
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_EQ(t.uop().op(), Ops::RESHAPE);
  EXPECT_EQ(t.uop().src(0).op(), Ops::BUFFER);
  EXPECT_EQ(t.values<double>(), (V{0, 6, 2, 8, 4, 10}));
  EXPECT_EQ(t.buffers().size(), 1u);
}

TEST(TensorRealize, AssignWritesIntoTheSameBuffer) {
  Tensor a = Tensor::from_values({1, 2, 3, 4}, {2, 2});
  const Tensor view = a;  // shares a's buffer
  const int64_t id = buffer_id(a.uop().src(0));
  a += Tensor::full({2, 2}, 10.0);
  EXPECT_EQ(a.uop().op(), Ops::ASSIGN);
  a.realize();
  EXPECT_EQ(buffer_id(a.uop().src(0)), id);
  EXPECT_EQ(a.values<double>(), (V{11, 12, 13, 14}));
  EXPECT_EQ(Tensor(view).values<double>(), (V{11, 12, 13, 14}));
}

TEST(TensorRealize, AugmentedAssignReadsTheOldValues) {
  Tensor a = Tensor::from_values({1, 2, 3, 4}, {2, 2});
  a += a.transpose();
  EXPECT_EQ(a.values<double>(), (V{2, 5, 5, 8}));
  Tensor z = Tensor::zeros({2});  // not a buffer yet: assign realizes it first
  z += Tensor::ones({2});
  EXPECT_EQ(z.values<double>(), (V{1, 1}));
}

TEST(TensorRealize, ContiguousIsANodeWithTheSameValues) {
  Tensor t = Tensor::arange(6).reshape({2, 3}).transpose().contiguous();
  EXPECT_EQ(t.uop().op(), Ops::CONTIGUOUS);
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_EQ(t.values<double>(), (V{0, 3, 1, 4, 2, 5}));
}

// A backend that records what it was asked and forwards to the reference.
class CountingBackend final : public Backend {
 public:
  std::string name() const override { return "counting"; }
  std::vector<HostBuffer> realize(const std::vector<UOp>& outputs, const BufferData& buffers) override {
    calls++;
    return ReferenceBackend().realize(outputs, buffers);
  }
  int calls = 0;
};

TEST(TensorRealize, RealizeGoesThroughTheInstalledBackend) {
  auto counting = std::make_shared<CountingBackend>();
  auto previous = set_backend(counting);
  EXPECT_EQ(previous->name(), "reference");
  Tensor t = Tensor::ones({3}) + 1;
  t.realize();
  t.realize();  // already a buffer: no second call
  set_backend(previous);
  EXPECT_EQ(counting->calls, 1);
  EXPECT_EQ(current_backend()->name(), "reference");
}

}  // namespace
}  // namespace tunebed
