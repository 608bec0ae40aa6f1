// `tunebed tune` through the real program: a small workload tuned into a fresh database.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/harness/db_fixture.hpp"

namespace tunebed::testing {
namespace {

class TuneE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "tunebed-tune-e2e-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    db_ = (dir_ / "tuning.db").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  Result tune(const std::string& args) { return tunebed("tune " + args + " --db " + db_ + " --jobs 1"); }

  std::filesystem::path dir_;
  std::string db_;
};

TEST_F(TuneE2E, TunesAWorkloadThenServesItFromTheCache) {
  Result first = tune("matmul:M=16,N=16,K=16 --budget 6");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("16x16x16 float32"), std::string::npos) << first.out;
  Result best = tunebed("query best --db " + db_);
  ASSERT_EQ(best.exit_code, 0) << best.err;
  EXPECT_NE(best.out.find("matmul:M=16,N=16,K=16"), std::string::npos) << best.out;
  Result runs = tunebed("query runs --format csv --db " + db_);
  EXPECT_NE(runs.out.find("completed"), std::string::npos) << runs.out;

  Result second = tune("matmul:M=16,N=16,K=16 --budget 6");
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.out.find(" hit "), std::string::npos) << "the second tuning must be a cache hit:\n"
                                                        << second.out;
}

TEST_F(TuneE2E, BadInputIsAUsageError) {
  Result unknown = tune("nosuchworkload");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.err.rfind("error: ", 0), 0u) << unknown.err;
  EXPECT_FALSE(std::filesystem::exists(db_)) << "bad input must not create the database";
  EXPECT_EQ(tune("matmul --strategy nope").exit_code, 2);
  EXPECT_EQ(tune("matmul --budget 0").exit_code, 2);
  EXPECT_EQ(tune("matmul --device opencl").exit_code, 2);
}

}  // namespace
}  // namespace tunebed::testing
