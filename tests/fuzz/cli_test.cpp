// `tunebed fuzz` and `tunebed query findings` through the real program: listing stored findings
// in each format, reproducing and minimising a stored input, and bad usage (exit 2, one line).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "results/findings.hpp"
#include "results/tuning_db.hpp"
#include "tests/fuzz/fake_fuzzer.hpp"
#include "tests/harness/run_tunebed.hpp"

namespace tunebed::testing {
namespace {

class FuzzCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::remove(db_);
    auto db = results::TuningDb::open(db_, results::TuningDb::Mode::create);
    results::Findings f = db.findings();
    f.record({"fake", "wrong", "fake check failed at element N", "padding X padding", "detail", 0.5});
    f.record({"fake", "wrong", "fake check failed at element N", "a longer padding X padding", "", 0.5});
    f.record({"rewrite", "crash", "fixed long ago", std::string(8, '\0'), "", std::nullopt});
  }
  void TearDown() override {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db_ + suffix);
  }
  std::string db_ = (std::filesystem::temp_directory_path() /
                     ("tunebed-fuzz-cli-" + std::to_string(getpid()) + "-" +
                      ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db"))
                        .string();
  FakeFuzzers fakes_{
      std::string("cli-") + ::testing::UnitTest::GetInstance()->current_test_info()->name()};
};

TEST_F(FuzzCli, QueryFindingsListsEachFindingOnceWithItsCount) {
  Result r = tunebed("query findings --format csv --db " + db_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(
      r.out.substr(0, r.out.find('\n')),
      "id,target,kind,signature,count,input_bytes,minimized,max_error,first_seen,last_seen\r");  // RFC 4180
  EXPECT_NE(r.out.find("\n1,fake,wrong,fake check failed at element N,2,17,0,0.5,"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n2,rewrite,crash,fixed long ago,1,8,0,,"), std::string::npos) << r.out;
  Result json = tunebed("query findings --format json --db " + db_);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find(R"("target":"fake","kind":"wrong")"), std::string::npos) << json.out;
  Result table = tunebed("query findings --db " + db_);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("fixed long ago"), std::string::npos) << table.out;
}

TEST_F(FuzzCli, ReproOfAStillFailingInputExitsOneAndSaysHow) {
  Result r = tunebed("fuzz repro 1 --db " + db_ + " --fuzzers " + fakes_.path().string());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out,
            "finding 1: fuzz_fake wrong: fake check failed at element N (17 bytes)\n"
            "wrong: fake check failed at element N\nmax_error: 0.5\n");
}

// The real replay-only fuzz_rewrite of this build runs the stored input: all zeros is a valid
// graph the tables keep the value of, so the finding is fixed.
TEST_F(FuzzCli, ReproOfAFixedInputRunsCleanAndExitsZero) {
  Result r = tunebed("fuzz repro 2 --db " + db_ + " --fuzzers " + FUZZ_DIR);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "finding 2: fuzz_rewrite crash: fixed long ago (8 bytes)\nruns clean\n");
}

TEST_F(FuzzCli, MinimizeStoresTheSmallerInput) {
  Result r = tunebed("fuzz minimize 1 --time 30 --db " + db_ + " --fuzzers " + fakes_.path().string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "finding 1: 17 bytes (17 nonzero) -> 1 bytes (1 nonzero)\n");
  Result q = tunebed("query findings --format csv --db " + db_);
  EXPECT_NE(q.out.find("\n1,fake,wrong,fake check failed at element N,2,1,1,"), std::string::npos) << q.out;
}

TEST_F(FuzzCli, BadUsageIsOneErrorLineAndExitTwo) {
  const std::string fz = " --db " + db_ + " --fuzzers " + fakes_.path().string();
  for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{
           {"fuzz fake" + fz, "--time"},
           {"fuzz fake --time 0" + fz, "--time must be at least 1"},
           {"fuzz nosuch --time 5" + fz, "no fuzz target 'nosuch'"},
           {"fuzz fake --time 5" + fz, "replay-only"},
           {"fuzz repro abc" + fz, "a finding id is a number, got 'abc'"},
           {"fuzz repro 99" + fz, "no finding 99"},
           {"fuzz minimize" + fz, "id"},
           {"fuzz --time 5 --db " + db_ + " --fuzzers /nonexistent", "no fuzz_* binaries in /nonexistent"},
       }) {
    Result r = tunebed(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << args << "\n" << r.err;
  }
}

}  // namespace
}  // namespace tunebed::testing
