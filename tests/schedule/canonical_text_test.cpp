// A kernel AST has one canonical text and hash, whichever buffers or graph it came from.
#include <gtest/gtest.h>

#include "core/ir/text.hpp"
#include "core/schedule/schedule.hpp"
#include "core/tensor/tensor.hpp"
#include "core/tensor/workloads.hpp"

namespace tunebed {
namespace {

std::vector<std::string> texts(const Tensor& t) {
  std::vector<std::string> out;
  for (const ScheduleItem& item : create_schedule({t.uop()}).items) out.push_back(kernel_text(item.ast));
  return out;
}

TEST(CanonicalText, SameWorkloadScheduledTwiceGivesIdenticalTextAndHash) {
  // two builds: fresh buffers with other UNIQUE ids, the same kernels
  const Workload w1 = make_workload("softmax"), w2 = make_workload("softmax");
  ASSERT_NE(w1.output.uop(), w2.output.uop());
  const Schedule s1 = create_schedule({w1.output.uop()}), s2 = create_schedule({w2.output.uop()});
  ASSERT_EQ(s1.items.size(), s2.items.size());
  ASSERT_FALSE(s1.items.empty());
  for (size_t i = 0; i < s1.items.size(); i++) {
    EXPECT_EQ(kernel_text(s1.items[i].ast), kernel_text(s2.items[i].ast));
    EXPECT_EQ(kernel_hash(s1.items[i].ast), kernel_hash(s2.items[i].ast));
  }
}

TEST(CanonicalText, MatmulAndItsBroadcastSumAreTheSameKernel) {
  const Tensor a = Tensor::empty({8, 16}), b = Tensor::empty({16, 32});
  const Tensor by_hand = (a.reshape({8, 1, 16}) * b.transpose().reshape({1, 32, 16})).sum(-1);
  EXPECT_EQ(texts(a.matmul(b)), texts(by_hand));
}

TEST(CanonicalText, ReshapeRoundTripsAndDoubleTransposesLeaveNoTrace) {
  const Tensor x = Tensor::empty({8, 16});
  EXPECT_EQ(texts(x.sum(1)), texts(x.transpose().transpose().sum(1)));
  EXPECT_EQ(texts(x + 1), texts(x.reshape({2, 4, 16}).reshape({8, 16}) + 1));
}

TEST(CanonicalText, DifferentKernelsHaveDifferentTextAndHash) {
  const Tensor x = Tensor::empty({8, 16});
  const UOp a = create_schedule({x.sum(1).uop()}).items.at(0).ast;
  const UOp b = create_schedule({x.sum(0).uop()}).items.at(0).ast;
  EXPECT_NE(kernel_text(a), kernel_text(b));
  EXPECT_NE(kernel_hash(a), kernel_hash(b));
}

TEST(CanonicalText, TextParsesBackToTheSameAst) {
  for (const char* spec : {"matmul:M=8,N=8,K=8", "softmax", "layernorm", "conv2d"}) {
    SCOPED_TRACE(spec);
    for (const ScheduleItem& item : create_schedule({make_workload(spec).output.uop()}).items)
      EXPECT_EQ(parse_uop(kernel_text(item.ast)), item.ast);
  }
}

}  // namespace
}  // namespace tunebed
