// `tunebed run` through the real program: compiled workloads with --check, --opts and --debug,
// and single kernel ASTs with --ast, --inputs and --save.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "results/tuning_db.hpp"
#include "tests/data/sops_sample.hpp"
#include "tests/harness/run_tunebed.hpp"

namespace tunebed::testing {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir() {
  std::string pattern = (fs::temp_directory_path() / "tunebed-run-e2e-XXXXXX").string();
  EXPECT_NE(mkdtemp(pattern.data()), nullptr);
  return pattern;
}

// One tinygrad AST line of the checked-in dataset sample (an elementwise kernel over three
// buffers), as tinygrad text and as the canonical .uop file `tunebed import --out` writes.
class RunAst : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = temp_dir();
    std::ofstream(dir_ / "kernel.txt") << sops_sample_lines().at(2) << "\n";
    const Result r =
        tunebed("import " + (dir_ / "kernel.txt").string() + " --out " + (dir_ / "uops").string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const auto& e : fs::directory_iterator(dir_ / "uops")) uop_ = e.path().string();
    ASSERT_FALSE(uop_.empty()) << r.out;
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static inline fs::path dir_;
  static inline std::string uop_;  // the .uop file
};

TEST(RunE2E, CheckPassesForACompiledWorkload) {
  const Result r = tunebed("run softmax:M=7,N=13 --check");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("kernel 2  E_7_13"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GFLOP/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("check     ok against the AST interpreter's exact run (max error "), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(") and the Eigen reference (max error "), std::string::npos) << r.out;
}

TEST(RunE2E, GivenOptsAreAppliedAndPrinted) {
  const Result r = tunebed("run matmul:M=16,N=16,K=16 --opts UPCAST:0:4,UNROLL:0:4 --check");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("UPCAST:0:4,UNROLL:0:4"), std::string::npos) << r.out;
  const Result none = tunebed("run matmul:M=16,N=16,K=16 --opts none");
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_NE(none.out.find("r_16_16_16  "), std::string::npos) << none.out;
}

// `tune` then `run --db`: the tuned kernel runs its stored winner and is timed against the default
// opts; a kernel the database does not know says so; --opts wins over the database.
TEST(RunE2E, WithADatabaseEachKernelRunsItsStoredWinnerOrSaysWhyNot) {
  const fs::path dir = temp_dir();
  const std::string db = (dir / "t.db").string();
  const Result tune = tunebed("tune matmul:M=16,N=16,K=16 --budget 4 --jobs 1 --db " + db);
  ASSERT_EQ(tune.exit_code, 0) << tune.err;
  const std::vector<results::BestRow> best = results::TuningDb::open_read_only(db).best();
  ASSERT_EQ(best.size(), 1u);
  const std::string winner = best[0].opts.empty() ? "-" : best[0].opts;

  const Result run = tunebed("run matmul:M=16,N=16,K=16 --check --db " + db);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("kernel 0  r_"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("  " + winner + "  "), std::string::npos) << winner << "\n" << run.out;
  EXPECT_NE(run.out.find("          tuned: run " + best[0].run_uuid.substr(0, 8) + ", "), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("; default opts "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("check     ok"), std::string::npos) << run.out;
  // The kernel named by its hash runs the winner too.
  const Result by_hash = tunebed("run --ast " + best[0].kernel_hash.substr(0, 10) + " --check --db " + db);
  ASSERT_EQ(by_hash.exit_code, 0) << by_hash.err;
  EXPECT_NE(by_hash.out.find("          tuned: run "), std::string::npos) << by_hash.out;

  const Result other = tunebed("run softmax:M=7,N=13 --db " + db);
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_NE(other.out.find("kernel 2  "), std::string::npos) << other.out;
  size_t defaults = 0;
  for (size_t at = other.out.find("default: not tuned on this device"); at != std::string::npos;
       at = other.out.find("default: not tuned on this device", at + 1))
    defaults++;
  EXPECT_EQ(defaults, 3u) << other.out;

  const Result given = tunebed("run matmul:M=16,N=16,K=16 --opts none --db " + db);
  ASSERT_EQ(given.exit_code, 0) << given.err;
  EXPECT_EQ(given.out.find("tuned:"), std::string::npos) << given.out;
  EXPECT_EQ(given.out.find("default:"), std::string::npos) << given.out;

  const Result missing = tunebed("run matmul:M=16,N=16,K=16 --db " + (dir / "missing.db").string());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err.rfind("error: --db: ", 0), 0u) << missing.err;
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;
  fs::remove_all(dir);
}

TEST(RunE2E, IllegalOptsExitTwoWithTheLegalityMessage) {
  const Result r = tunebed("run matmul:M=16,N=16,K=16 --opts UPCAST:0:3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("error: kernel 0 (r_16_16_16): ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("does not divide"), std::string::npos) << r.err;
  EXPECT_EQ(tunebed("run matmul:M=16,N=16,K=16 --opts UPCAST:zero").exit_code, 2);
}

TEST(RunE2E, DebugFourPrintsTheSourceAndDebugTwoTheKernels) {
  const Result r = tunebed("run matmul:M=8,N=8,K=8 --debug 4 --opts UPCAST:0:4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("item 0    r_8_8_8"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(void* const* bufs, const int* vars, int core_id, int num_cores) {"),
            std::string::npos)
      << r.out;
  const Result two = tunebed("run matmul:M=8,N=8,K=8 --debug 2");
  EXPECT_NE(two.out.find("item 0"), std::string::npos) << two.out;
  EXPECT_EQ(two.out.find("bufs[0]"), std::string::npos) << two.out;
}

TEST_F(RunAst, CanonicalFileRunsAndChecks) {
  const Result r = tunebed("run --ast " + uop_ + " --check");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("check     ok against the AST interpreter"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("buf0      3 float32 (output)"), std::string::npos) << r.out;
}

TEST_F(RunAst, TinygradTextRunsWithTinygradsOpts) {
  const Result r = tunebed("run --ast " + (dir_ / "kernel.txt").string() + " --tinygrad-opts --check");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("opts      tinygrad's: "), std::string::npos) << r.out;
  const Result canonical = tunebed("run --ast " + uop_ + " --tinygrad-opts");
  EXPECT_EQ(canonical.exit_code, 2);
  EXPECT_NE(canonical.err.find("only a tinygrad AST text carries tinygrad's opts"), std::string::npos)
      << canonical.err;
}

TEST_F(RunAst, HashIsLookedUpInTheTuningDb) {
  const std::string db = (dir_ / "tuning.db").string();
  ASSERT_EQ(tunebed("import " + (dir_ / "kernel.txt").string() + " --db " + db).exit_code, 0);
  const std::string hash = fs::path(uop_).stem().string();
  const Result r = tunebed("run --ast " + hash.substr(0, 6) + " --db " + db + " --check --opts none");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("kernel    " + hash + " (kernel " + hash + " of " + db + ")"), std::string::npos)
      << r.out;
  const Result unknown = tunebed("run --ast ffffff --db " + db);
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.err.rfind("error: --ast: ", 0), 0u) << unknown.err;
}

TEST_F(RunAst, InputsAndSaveRoundTrip) {
  const fs::path first = dir_ / "first", second = dir_ / "second";
  ASSERT_EQ(tunebed("run --ast " + uop_ + " --seed 5 --save " + first.string()).exit_code, 0);
  ASSERT_TRUE(fs::exists(first / "buf1.npy"));
  // Another seed, but the saved inputs: the same output, byte for byte.
  const Result r =
      tunebed("run --ast " + uop_ + " --seed 9 --inputs " + first.string() + " --save " + second.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(first / "buf0.npy"), read_file(second / "buf0.npy"));
  const Result other = tunebed("run --ast " + uop_ + " --seed 9 --save " + (dir_ / "third").string());
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_NE(read_file(first / "buf0.npy"), read_file(dir_ / "third" / "buf0.npy"));
}

TEST_F(RunAst, MissingInputFileIsAUsageError) {
  const Result r = tunebed("run --ast " + uop_ + " --inputs " + (dir_ / "nothing").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("buf1.npy is missing"), std::string::npos) << r.err;
}

TEST_F(RunAst, BadAstFileIsAOneLineError) {
  const fs::path bad = dir_ / "bad.uop";
  std::ofstream(bad) << "SINK(\n  garbage\n";
  const Result r = tunebed("run --ast " + bad.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("error: --ast " + bad.string() + ": ", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  const Result neither = tunebed("run --ast not-a-file-or-hash");
  EXPECT_EQ(neither.exit_code, 2);
  EXPECT_NE(neither.err.find("neither a file nor a kernel hash"), std::string::npos) << neither.err;
}

}  // namespace
}  // namespace tunebed::testing
