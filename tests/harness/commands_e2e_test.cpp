// The small tools through the real program: workloads, run --reference, simplify, st, schedule.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/harness/db_fixture.hpp"

namespace tunebed::testing {
namespace {

TEST(CommandsE2E, WorkloadsListsEveryWorkloadWithItsDefaults) {
  Result r = tunebed("workloads");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* name : {"matmul", "conv2d", "softmax", "layernorm", "attention", "mlp", "sum", "max"})
    EXPECT_NE(("\n" + r.out).find("\n" + std::string(name) + " "), std::string::npos) << name << "\n"
                                                                                      << r.out;
  EXPECT_NE(r.out.find("M=512 N=512 K=512 dtype=float32"), std::string::npos) << r.out;
}

TEST(CommandsE2E, RunReferenceSavesInputsAndOutputAsNpy) {
  std::string pattern = (std::filesystem::temp_directory_path() / "tunebed-run-e2e-XXXXXX").string();
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  std::filesystem::path dir = pattern;
  Result r = tunebed("run softmax:M=4,N=5 --reference --seed 3 --save " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* f : {"x.npy", "output.npy"}) {
    std::string bytes = read_file(dir / f);
    ASSERT_GT(bytes.size(), 10u) << f;
    EXPECT_EQ(bytes.substr(0, 6), "\x93NUMPY") << f;
    EXPECT_NE(bytes.find("'shape': (4, 5)"), std::string::npos) << f;
  }
  std::filesystem::remove_all(dir);
}

TEST(CommandsE2E, BadWorkloadsAreUsageErrorsListingTheChoices) {
  Result unknown = tunebed("run nosuch --reference");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("error: unknown workload 'nosuch' (valid: attention"), std::string::npos)
      << unknown.err;
  Result param = tunebed("run matmul:Q=3 --reference");
  EXPECT_EQ(param.exit_code, 2);
  EXPECT_EQ(param.err.rfind("error: ", 0), 0u) << param.err;
}

TEST(CommandsE2E, SimplifyPrintsTheSimplifiedExpressionAndJson) {
  Result r = tunebed("simplify '(x*4+2)//4' --vars x:0:100");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "x\n");
  Result j = tunebed("simplify '(x*4+2)//4' --json");
  EXPECT_EQ(j.out,
            "{\"input\": \"(x*4+2)//4\", \"simplified\": \"x\", \"ops_before\": 3, \"ops_after\": 0}\n");
  Result bad = tunebed("simplify '(x+'");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("error: column 4:"), std::string::npos) << bad.err;
}

TEST(CommandsE2E, StPrintsTheMapOfPaddedFlippedViews) {
  Result r = tunebed("st 2,3 'pad(1:0,0:1)' 'flip(0)' --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"map\":[3,4,5,-1,0,1,2,-1,-1,-1,-1,-1]"), std::string::npos) << r.out;
  Result bad = tunebed("st 2,3 'reshape(7)'");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("error: op 1 reshape(7) on shape (2, 3)"), std::string::npos) << bad.err;
}

TEST(CommandsE2E, ScheduleCountsTheKernels) {
  Result r = tunebed("schedule matmul:M=8,N=8,K=8");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("kernels: 1"), std::string::npos) << r.out;
  Result s = tunebed("schedule softmax:M=4,N=8");
  EXPECT_NE(s.out.find("kernels: 3"), std::string::npos) << s.out;  // tinygrad at the seed: 3
}

}  // namespace
}  // namespace tunebed::testing
