// `tunebed check-corpus` through the built program, on a few lines of the checked-in sample: the
// counts table, a malformed line counted as import_error, the JSON listing, a kernel that crashes,
// the run limit, an arange folded to a closed form, and exit 2 for bad usage.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/data/sops_sample.hpp"
#include "tests/harness/run_tunebed.hpp"

namespace tunebed::testing {
namespace {

namespace fs = std::filesystem;

class CheckCorpusE2E : public ::testing::Test {
 protected:
  fs::path dir = fs::temp_directory_path() / ("tunebed-check-corpus-e2e-" + std::to_string(::getpid()));
  std::string corpus = (dir / "corpus.txt").string();

  // Sample lines 1 and 3 are one kernel (a+b); line 2 is another; the fourth line is not a UOp.
  void SetUp() override {
    fs::create_directories(dir);
    const std::vector<std::string> sample = sops_sample_lines();
    std::ofstream(corpus) << sample.at(0) << "\n"
                          << sample.at(1) << "\n"
                          << sample.at(2) << "\nUOp(Ops.SINK, oops\n";
  }
  void TearDown() override { fs::remove_all(dir); }
};

TEST_F(CheckCorpusE2E, TablePrintsCountsByOptsKindAndOutcome) {
  Result r = tunebed("check-corpus " + corpus + " --random-opts 2");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("4 lines: 2 kernels to check, 1 duplicates, 1 import errors; 2 random opt sequences"),
            std::string::npos)
      << r.out;
  EXPECT_NE(
      r.out.find("opts        ok  wrong  compile_error  crash  timeout  unsupported  illegal  unchecked  "
                 "import_error\n"),
      std::string::npos)
      << r.out;
  // Both kernels match the interpreter with no opts and hand-coded opts, and 2 random sequences each.
  EXPECT_NE(r.out.find("\nnone         2      0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nhand-coded   2      0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nrandom       4      0"), std::string::npos) << r.out;
  // The malformed line has a row of its own: one import_error.
  EXPECT_NE(
      r.out.find("\n(import)     0      0              0      0        0            0        0          0"
                 "             1\n"),
      std::string::npos)
      << r.out;
  EXPECT_EQ(r.err, "");
}

TEST_F(CheckCorpusE2E, JsonListsTheImportErrorWithItsLine) {
  Result r = tunebed("check-corpus " + corpus + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.rfind(
                "{\"lines\": 4, \"kernels\": 2, \"checked\": 2, \"duplicates\": 1, \"import_errors\": 1", 0),
            0u)
      << r.out;
  EXPECT_NE(r.out.find("{\"opts\":\"none\",\"ok\":2,\"wrong\":0"), std::string::npos) << r.out;
  EXPECT_NE(
      r.out.find("{\"line\":4,\"hash\":\"\",\"opts_kind\":\"-\",\"opts\":\"\",\"outcome\":\"import_error\","
                 "\"message\":\"column "),
      std::string::npos)
      << r.out;
}

// Sample line 1 with its second input read 2^30 elements past the buffer: compiled, it dies of
// SIGSEGV. The interpreter refuses it, so there is no reference, but every variant still runs and
// each crash happens in a checking process.
TEST_F(CheckCorpusE2E, AKernelThatCrashesIsCountedAndTheRunGoesOn) {
  std::ifstream in(corpus);
  std::string add, other;
  std::getline(in, add);
  std::getline(in, other);
  const std::string view =
      "View(shape=(3,),strides=(1,),offset=0,mask=None,contiguous=True),)),src=(UOp(Ops."
      "DEFINE_GLOBAL,dtypes.float.ptr(3),arg=1";
  const size_t at = add.find(view);
  ASSERT_NE(at, std::string::npos);
  add.replace(at, view.size(),
              "View(shape=(3,),strides=(1,),offset=1073741824,mask=None,contiguous=False),)),src=(UOp(Ops."
              "DEFINE_GLOBAL,dtypes.float.ptr(3),arg=1");
  const std::string crashing = (dir / "crashing.txt").string();
  std::ofstream(crashing) << add << "\n" << other << "\n";

  Result r = tunebed("check-corpus " + crashing + " --random-opts 2 --timeout 30 -v");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;  // a crash is a finding
  EXPECT_NE(r.out.find("2 lines: 2 kernels to check"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("interrupted"), std::string::npos) << r.out;
  // Every variant of line 1 crashed, each in its own process; line 2 still ran and passed.
  EXPECT_NE(
      r.out.find("\nnone         1      0              0      1        0            0        0          0"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("none                    crash    killed by signal SIGSEGV"), std::string::npos)
      << r.out;
}

// The JSON counts of one opts kind with `ok` and `unchecked` and no other outcome, up to there.
std::string json_counts(const std::string& kind, int ok, int unchecked) {
  return "{\"opts\":\"" + kind + "\",\"ok\":" + std::to_string(ok) +
         ",\"wrong\":0,\"compile_error\":0,\"crash\":0,\"timeout\":0,\"unsupported\":0,\"illegal\":0,"
         "\"unchecked\":" +
         std::to_string(unchecked) + ",";
}

TEST_F(CheckCorpusE2E, KernelsPastTheRunLimitAreCompiledNotRun) {
  Result r = tunebed("check-corpus " + corpus + " --run-limit 1 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(json_counts("none", 0, 2)), std::string::npos) << r.out;
}

// tinygrad's 1.2M arange (dataset line 4226) is 1.4 x 10^12 iterations as an AST. Its no-opts
// program folds the sum (core/codegen/reduce_collapse.cpp) and runs, and so does the hand-coded
// variant, which unrolls the sum and still folds it. The interpreter checks both on a sample.
TEST_F(CheckCorpusE2E, AnArangeOfATrillionIterationsRunsInClosedForm) {
  std::ifstream in(std::string(std::getenv("TUNEBED_SOURCE_DIR")) + "/tests/data/collapse-kernels.txt");
  std::string arange;
  std::getline(in, arange);
  std::ofstream(corpus) << arange << "\n";
  Result r = tunebed("check-corpus " + corpus + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // The kernel is past the interpreter's budget, so its exact run samples the output. Past the run
  // limit, both variants would be `unchecked`.
  EXPECT_NE(r.out.find(json_counts("none", 1, 0)), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(json_counts("hand-coded", 1, 0)), std::string::npos) << r.out;
}

// The table as printed, without the last line (how many were checked, in what time).
std::string counts_of(const std::string& out) { return out.substr(0, out.rfind("checked ")); }

TEST_F(CheckCorpusE2E, ALoggedRunResumesWithTheSameCounts) {
  const std::string log = (dir / "check.log").string();
  Result first = tunebed("check-corpus " + corpus + " --random-opts 2 --log " + log);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_NE(first.out.find("\nchecked 2 in "), std::string::npos) << first.out;
  // Each kernel's 5 variants (none, hand-coded, tinygrad's, 2 random), a line each.
  std::ifstream in(log);
  int lines = 0;
  for (std::string line; std::getline(in, line);) lines++;
  EXPECT_EQ(lines, 10);

  Result again = tunebed("check-corpus " + corpus + " --random-opts 2 --log " + log);
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_NE(again.out.find("\nchecked 0 in 0 s (0 kernels/s), 2 from the log\n"), std::string::npos)
      << again.out;
  EXPECT_EQ(counts_of(again.out), counts_of(first.out));
  // Another K is another check: nothing is taken from the log.
  Result other = tunebed("check-corpus " + corpus + " --random-opts 1 --log " + log);
  EXPECT_NE(other.out.find("\nchecked 2 in "), std::string::npos) << other.out;

  std::ofstream(log, std::ios::app) << "not json\n";
  Result corrupt = tunebed("check-corpus " + corpus + " --random-opts 2 --log " + log);
  EXPECT_EQ(corrupt.exit_code, 2);
  EXPECT_EQ(corrupt.err.rfind("error: --log " + log + ":", 0), 0u) << corrupt.err;
  EXPECT_NE(corrupt.err.find(": not a check-corpus log line: "), std::string::npos) << corrupt.err;
}

TEST_F(CheckCorpusE2E, SampleOfZeroLinesChecksNothing) {
  Result r = tunebed("check-corpus " + corpus + " --sample 0 --seed 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("0 lines: 0 kernels to check", 0), 0u) << r.out;
}

TEST_F(CheckCorpusE2E, BadUsageExits2WithOneErrorLine) {
  Result bad_flag = tunebed("check-corpus " + corpus + " --random-opts -1");
  EXPECT_EQ(bad_flag.exit_code, 2);
  EXPECT_EQ(bad_flag.err, "error: --random-opts must be >= 0\n");
  Result unknown = tunebed("check-corpus " + corpus + " --no-such-flag");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.err.rfind("error: ", 0), 0u) << unknown.err;
  Result missing = tunebed("check-corpus " + (dir / "absent.gz").string());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err, "error: cannot open '" + (dir / "absent.gz").string() + "'\n");
  EXPECT_EQ(missing.out, "");
}

}  // namespace
}  // namespace tunebed::testing
