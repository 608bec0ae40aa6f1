// The Eigen half of the tuner's independent check (harness/workload_check.hpp), on a one-kernel
// workload's own buffers and exact run.
#include "harness/workload_check.hpp"

#include <gtest/gtest.h>

#include "core/engine/check.hpp"

namespace tunebed::cli {
namespace {

// The one kernel of SPEC, its buffers (inputs drawn as the tuner draws them) and their exact run.
struct OneKernel {
  std::vector<HostBuffer> buffers;
  std::shared_future<Expected> expected;
};

OneKernel one_kernel(const std::string& spec, const std::function<void(Expected&)>& tamper = {}) {
  const Workload w = make_workload(spec);
  const UOp ast = create_schedule({w.output.uop()}).items.at(0).ast;
  OneKernel k;
  for (auto [dtype, size] : ast_buffer_specs(ast)) {
    k.buffers.emplace_back(dtype, size);
    if (k.buffers.size() > 1) fill_random(k.buffers.back(), 7 + k.buffers.size());
  }
  Expected e = expect_kernel_ast(ast, k.buffers).at(0);
  if (tamper) tamper(e);
  std::promise<Expected> p;
  p.set_value(std::move(e));
  k.expected = p.get_future().share();
  return k;
}

TEST(EigenOnTheKernel, AgreesWithTheExactRunOnTheKernelsOwnInputs) {
  for (const char* spec : {"matmul:M=9,N=7,K=5", "conv2d:N=1,C=2,H=5,W=5,K=3", "sum:M=6,N=10,axis=cols"}) {
    SCOPED_TRACE(spec);
    const OneKernel k = one_kernel(spec);
    EXPECT_EQ(eigen_disagreement_on(spec, k.buffers, 0, k.expected), std::optional<std::string>(""));
  }
}

TEST(EigenOnTheKernel, SaysWhereAWrongExactRunDisagrees) {
  const OneKernel k = one_kernel("matmul:M=9,N=7,K=5", [](Expected& e) { e.value.set_float(4, 1e6); });
  const std::optional<std::string> why = eigen_disagreement_on("matmul:M=9,N=7,K=5", k.buffers, 0, k.expected);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("the Eigen reference disagrees with the kernel: element 4"), std::string::npos) << *why;
}

TEST(EigenOnTheKernel, LeavesAWorkloadOfSeveralKernelsToTheWholeScheduleCheck) {
  const Workload w = make_workload("softmax:M=4,N=6");
  ASSERT_GT(create_schedule({w.output.uop()}).items.size(), 1u);
  std::promise<Expected> never;
  EXPECT_EQ(eigen_disagreement_on("softmax:M=4,N=6", {}, 0, never.get_future().share()), std::nullopt);
  EXPECT_EQ(eigen_disagreement("softmax:M=4,N=6", 1, kExactRunBudget), std::optional<std::string>(""));
}

}  // namespace
}  // namespace tunebed::cli
