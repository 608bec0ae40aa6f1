// `tunebed import` through the built program: counts, failures by line, --out files that parse
// back, --db rows, and exit 2 for a file that cannot be read.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "tests/data/sops_sample.hpp"

namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// A scratch folder per test, removed afterwards; `tunebed import ARGS` runs with its output captured there.
class ImportE2E : public ::testing::Test {
 protected:
  fs::path dir = fs::temp_directory_path() / ("tunebed-import-e2e-" + std::to_string(::getpid()));
  std::string out, err;

  void SetUp() override { fs::create_directories(dir); }
  void TearDown() override { fs::remove_all(dir); }

  int import(const std::string& args) {
    const std::string cmd = std::string(TUNEBED_EXE) + " import " + args + " >" + (dir / "stdout").string() +
                            " 2>" + (dir / "stderr").string() + " </dev/null";
    const int status = std::system(cmd.c_str());
    out = slurp(dir / "stdout");
    err = slurp(dir / "stderr");
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  static std::string sample() { return tunebed::testing::sops_sample_path(); }
  static std::string sample_line(int n) {
    return tunebed::testing::sops_sample_lines().at(static_cast<size_t>(n - 1));
  }
};

TEST_F(ImportE2E, CountsDuplicatesAndEachFailureByLine) {
  // Lines 1 and 3 of the sample are one kernel; the third line here is not a UOp at all.
  std::ofstream(dir / "corpus.txt") << sample_line(1) << "\n" << sample_line(3) << "\nUOp(Ops.SINK, oops\n";
  ASSERT_EQ(import((dir / "corpus.txt").string() + " --out " + (dir / "kernels").string()), 0) << err;
  EXPECT_EQ(out.rfind("imported 1, duplicates 1, failed 1 (of 3 lines)\nline 3: column ", 0), 0u) << out;
  EXPECT_NE(out.find("expected 'dtypes'"), std::string::npos) << out;
  EXPECT_EQ(err, "");
  int files = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir / "kernels")) {
    const std::string text = slurp(e.path());
    // The canonical text (its re-parsing is tested in tests/imports): the SINK last, named by hash.
    EXPECT_EQ(text.rfind("u0 = ", 0), 0u) << text;
    EXPECT_NE(text.find(" = SINK void src=("), std::string::npos) << text;
    EXPECT_EQ(e.path().extension(), ".uop");
    EXPECT_EQ(e.path().stem().string().find_first_not_of("0123456789abcdef"), std::string::npos);
    EXPECT_EQ(e.path().stem().string().size(), 16u);
    files++;
  }
  EXPECT_EQ(files, 1);
}

TEST_F(ImportE2E, SampleIntoADatabaseRecordsFileAndLine) {
  const std::string db = (dir / "t.db").string();
  ASSERT_EQ(import(sample() + " --db " + db + " -v"), 0) << err;
  EXPECT_NE(out.find("imported 146, duplicates 1, failed 19 (of 166 lines)"), std::string::npos) << out;
  EXPECT_NE(out.find(" kernels/s\n"), std::string::npos) << out;
  const std::string query =
      "sqlite3 " + db + " \"SELECT count(*), min(source) FROM kernels\" >" + (dir / "q").string();
  ASSERT_EQ(std::system(query.c_str()), 0);
  EXPECT_EQ(slurp(dir / "q"), "146|" + sample() + ":1\n");
  // Every kernel carries its work (core/opt's kernel_cost): its buffers' bytes, and FLOPs for all
  // but the pure copies, which have no ALU op.
  const std::string costs = "sqlite3 " + db +
                            " \"SELECT sum(bytes > 0), sum(flops > 0) > 100 FROM kernels\" >" +
                            (dir / "c").string();
  ASSERT_EQ(std::system(costs.c_str()), 0);
  EXPECT_EQ(slurp(dir / "c"), "146|1\n");
  // A second import finds every kernel already there: the same hashes, nothing new.
  ASSERT_EQ(import(sample() + " --db " + db), 0) << err;
  ASSERT_EQ(std::system(query.c_str()), 0);
  EXPECT_EQ(slurp(dir / "q").substr(0, 4), "146|");
}

TEST_F(ImportE2E, MissingFileExits2WithOneErrorLine) {
  EXPECT_EQ(import((dir / "nope.gz").string()), 2);
  EXPECT_EQ(err, "error: cannot open '" + (dir / "nope.gz").string() + "'\n");
  EXPECT_EQ(out, "");
}

}  // namespace
