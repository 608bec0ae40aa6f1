// A kernel AST as a tuning target (search/kernel_target.hpp).
#include "search/kernel_target.hpp"

#include <gtest/gtest.h>

#include "tests/opt/kernels.hpp"

namespace tunebed::search {
namespace {

// What runs untuned is what a tuned kernel is timed against, whoever tunes it (tune, replay --fill).
TEST(KernelTarget, TheBaselineIsTheDefaultOpts) {
  for (const char* kernel : {"matmul_512", "sum_4096x4096", "add_16M"}) {
    KernelTarget target(test::named(kernel), kernel, "cpu");
    const TuneTarget& t = target.target();
    ASSERT_TRUE(t.baseline.has_value()) << kernel;
    EXPECT_EQ(t.space->key(*t.baseline), target.default_opts()) << kernel;
    EXPECT_NE(target.default_opts(), "") << kernel << ": the CPU default threads, at least";
  }
}

}  // namespace
}  // namespace tunebed::search
