// `tunebed query` through the real program, on the fixture database (db_fixture.hpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/harness/db_fixture.hpp"
#include "tunebed/build_info.hpp"

namespace tunebed::testing {
namespace {

class QueryE2E : public DbFixture {
 protected:
  Result query(const std::string& args) { return tunebed("query " + args + " --db " + db_); }
};

// The lines of OUT that contain NEEDLE.
std::vector<std::string> lines_with(const std::string& out, const std::string& needle) {
  std::vector<std::string> found;
  std::size_t start = 0;
  while (start < out.size()) {
    std::size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    std::string line = out.substr(start, end - start);
    if (line.find(needle) != std::string::npos) found.push_back(line);
    start = end + 1;
  }
  return found;
}

TEST_F(QueryE2E, BestShowsOneWinnerPerKernelAndDevice) {
  Result r = query("best");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("kernel        shape", 0), 0u) << r.out;
  // matmul on cpu0 and cpu1, sum on cpu0, relu on cpu1; header + 4 rows.
  EXPECT_EQ(count(r.out, "\n"), 5) << r.out;
  auto matmul_cpu0 = lines_with(r.out, kWinnerOpts);
  ASSERT_EQ(matmul_cpu0.size(), 1u) << r.out;
  EXPECT_NE(matmul_cpu0[0].find("3f2a9c0d4e5b  64x64x64 f32"), std::string::npos) << matmul_cpu0[0];
  EXPECT_NE(matmul_cpu0[0].find("92.00"), std::string::npos) << matmul_cpu0[0];
  EXPECT_EQ(r.err, "");
  // Hashes and uuids are shortened in the table unless -v.
  EXPECT_EQ(r.out.find(kMatmul), std::string::npos) << r.out;
  EXPECT_NE(query("best -v").out.find(kMatmul), std::string::npos);
}

TEST_F(QueryE2E, BestFiltersByWorkloadDeviceAndKernel) {
  Result by_device = query("best --device cpu0 -q");
  EXPECT_EQ(by_device.exit_code, 0) << by_device.err;
  EXPECT_EQ(count(by_device.out, "\n"), 2) << by_device.out;
  EXPECT_EQ(count(by_device.out, "cpu1"), 0) << by_device.out;

  Result by_workload = query("best --workload sum -q");
  EXPECT_EQ(count(by_workload.out, "\n"), 1) << by_workload.out;
  EXPECT_NE(by_workload.out.find("GROUPTOP:0:32"), std::string::npos) << by_workload.out;

  Result by_kernel = query("best --kernel 3f2a -q");
  EXPECT_EQ(count(by_kernel.out, "\n"), 2) << by_kernel.out;  // matmul on both devices
}

TEST_F(QueryE2E, BestCsvIsRfc4180) {
  Result r = query("best --device cpu0 --format csv -v");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("kernel,shape,source,device,actions,opts,median_us,gflops,gb_per_s,run\r\n", 0), 0u)
      << r.out;
  // Opts hold commas, so they are quoted; hashes are whole in CSV.
  EXPECT_NE(r.out.find(kMatmul + ",64x64x64 f32,matmul,cpu0,as1,\"" + kWinnerOpts + "\",92,"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(count(r.out, "\r\n"), 3) << r.out;
}

TEST_F(QueryE2E, BestJsonIsAnArrayOfObjects) {
  Result r = query("best --workload matmul --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("[\n  {\"kernel\":\"" + kMatmul + "\"", 0), 0u) << r.out;
  EXPECT_EQ(r.out.substr(r.out.size() - 4), "}\n]\n") << r.out;
  EXPECT_EQ(count(r.out, "{\"kernel\""), 2) << r.out;
  EXPECT_NE(r.out.find("\"opts\":\"" + kWinnerOpts + "\",\"median_us\":92,"), std::string::npos) << r.out;
  Result none = query("best --workload nothing --format json");
  EXPECT_EQ(none.out, "[]\n");
}

TEST_F(QueryE2E, OutputIsDeterministic) {
  for (const char* q :
       {"best --format json", "failures --format csv", "runs", "history 3f2a --format json"}) {
    EXPECT_EQ(query(q).out, query(q).out) << q;
  }
}

TEST_F(QueryE2E, HistoryListsEveryCandidateOfTheKernelInOrder) {
  Result r = query("history 7b1e --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count(r.out, "\r\n"), 5) << r.out;  // header + 4 candidates
  auto first = r.out.find(",GROUPTOP:0:16,ok,12.5,"), second = r.out.find(",GROUPTOP:0:32,ok,11.9,");
  EXPECT_NE(first, std::string::npos) << r.out;
  EXPECT_LT(first, second) << r.out;
  // A multi-line error keeps its line break inside one quoted field.
  EXPECT_NE(r.out.find("\"error: use of undeclared identifier \"\"acc0\"\"\nnote: in kernel r_64_64\""),
            std::string::npos)
      << r.out;
}

TEST_F(QueryE2E, HistoryOfUnknownKernelExits2) {
  Result r = query("history ffff");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: no kernel matches 'ffff' in " + db_ + "\n");
}

TEST_F(QueryE2E, WhyShowsTheWinningRunsTraceWithWinnerAndNearTies) {
  Result r = query("why 3f2a --device cpu0 --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("index,seq,opts,status,median_us,best_so_far_us,elapsed_s,vs_winner_pct,note\r\n", 0),
            0u)
      << r.out;
  // The nine matmul candidates of the beam run on cpu0, not the random run's or cpu1's.
  EXPECT_EQ(count(r.out, "\r\n"), 10) << r.out;
  // elapsed_s comes from julianday() differences: 0.8 s apart, to about 10 microseconds.
  EXPECT_NE(r.out.find("\r\n1,1,,ok,420,420,0.79999"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\r\n6,6,\"" + kWinnerOpts + "\",ok,92,92,4.7999"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(",0,winner\r\n"), std::string::npos) << r.out;
  EXPECT_EQ(count(r.out, ",near-tie\r\n"), 2) << r.out;  // 94.1 (+2.3%) and 96.5 (+4.9%)
  EXPECT_NE(r.out.find("\r\n8,8,GROUP:0:16,wrong,50,92,"), std::string::npos)
      << r.out;  // fast but wrong: no tie
  Result tight = query("why 3f2a --device cpu0 --within 3 --format csv");
  EXPECT_EQ(count(tight.out, ",near-tie\r\n"), 1) << tight.out;
}

TEST_F(QueryE2E, WhyTableEndsWithASummary) {
  Result r = query("why 3f2a --device cpu0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\nwinner on cpu0: " + kWinnerOpts +
                       " at 92.00 us, candidate 6 of 9 in run 100000000000; 2 near-tie(s) within 5%\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(query("why 3f2a --device cpu0 -q").out.find("winner on"), std::string::npos);
}

TEST_F(QueryE2E, WhyOfAKernelWithWinnersOnTwoDevicesAsksForOne) {
  Result r = query("why 3f2a");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(
      r.err,
      "error: kernel 3f2a has 2 winners: cpu0 (actions as1), cpu1 (actions as1); choose one with --device\n");
}

TEST_F(QueryE2E, FailuresListEveryFailedStatusAndQuarantine) {
  Result r = query("failures --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count(r.out, "\r\n"), 6) << r.out;  // header + 5 failures
  for (const char* status : {",compile_error,0,", ",crash,1,", ",timeout,1,", ",wrong,0,0.5,"}) {
    EXPECT_NE(r.out.find(status), std::string::npos) << status << "\n" << r.out;
  }
  Result crashes = query("failures --status crash -q");
  EXPECT_EQ(count(crashes.out, "\n"), 1) << crashes.out;
  EXPECT_NE(crashes.out.find("LOCAL:0:32"), std::string::npos) << crashes.out;
  Result bad = query("failures --status ok");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err,
            "error: unknown failure status 'ok' (expected compile_error, crash, timeout or wrong)\n");
}

TEST_F(QueryE2E, RunsListsEveryRunOldestFirst) {
  Result r = query("runs --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto beam = r.out.find("10000000000000000000000000000001,beam,7,completed,"),
       random = r.out.find("20000000000000000000000000000002,random,14,interrupted,");
  ASSERT_NE(beam, std::string::npos) << r.out;
  ASSERT_NE(random, std::string::npos) << r.out;
  EXPECT_LT(beam, random);
  EXPECT_NE(r.out.find(",2026-11-30T11:00:59.000Z,13,testhost," + std::string(build::kVersion) + ",abc1234,\r\n"), std::string::npos)
      << r.out;
}

TEST_F(QueryE2E, CompareShowsBothDevicesWinnersAndSpeedup) {
  Result r = query("compare --device cpu0 --device cpu1 --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(kMatmul + ",64x64x64 f32,matmul,\"" + kWinnerOpts +
                       "\",92,\"UPCAST:0:4,LOCAL:1:8\",80,1.15\r\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(kReduce + ",4096 f32,sum,GROUPTOP:0:32,11.9,,,\r\n"), std::string::npos) << r.out;
  Result one = query("compare --device cpu0");
  EXPECT_EQ(one.exit_code, 2);
  EXPECT_EQ(one.err, "error: compare needs exactly two --device options, got 1\n");
  Result unknown = query("compare --device cpu0 --device tpu9");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.err, "error: no device matches 'tpu9' in " + db_ + "\n");
}

TEST_F(QueryE2E, DiffPairsWinnersAcrossDatabases) {
  std::string newer = path("newer.db");
  build(newer, true);
  Result r = tunebed("query diff " + db_ + " " + newer + " --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count(r.out, "\r\n"), 6) << r.out;  // header + 4 shared winners + softmax
  EXPECT_NE(r.out.find(",cpu0,as1,\"" + kWinnerOpts +
                       "\",92,\"UPCAST:0:8,LOCAL:1:32\",85,1.0823529411764705,new opts\r\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(kSoftmax + ",32x1024 f32,softmax,cpu0,as1,,,,40,,only in B\r\n"), std::string::npos)
      << r.out;
  EXPECT_EQ(count(r.out, ",same opts\r\n"), 3) << r.out;
}

TEST_F(QueryE2E, EverySubqueryHasHelpWithExamples) {
  for (const char* q : {"best", "history", "why", "failures", "runs", "compare", "diff"}) {
    Result r = tunebed(std::string("query ") + q + " --help");
    EXPECT_EQ(r.exit_code, 0) << q << r.err;
    EXPECT_EQ(r.out.rfind(std::string("usage: tunebed query ") + q, 0), 0u) << r.out;
    EXPECT_NE(r.out.find("\nexamples:\n  tunebed query " + std::string(q)), std::string::npos) << r.out;
  }
  Result list = tunebed("query --help");
  EXPECT_EQ(list.exit_code, 0);
  EXPECT_NE(list.out.find("\n  why       the search trace"), std::string::npos) << list.out;
}

TEST_F(QueryE2E, BadUsageExits2WithOneErrorLine) {
  struct Case {
    std::string args, err;
  };
  for (const Case& c : std::vector<Case>{
           {"query",
            "error: tunebed query needs one of: best, compare, diff, failures, findings, history, runs, "
            "why\n"},
           {"query frobnicate",
            "error: unknown query subcommand 'frobnicate' (expected best, compare, diff, "
            "failures, findings, history, runs, why)\n"},
           {"query best --bogus", "error: unrecognised option '--bogus'\n"},
           {"query best --format xml --db " + db_,
            "error: unknown format 'xml' (expected table, csv or json)\n"},
           {"query best -v -q --db " + db_, "error: -v and -q contradict each other; give one\n"},
           {"query best --kernel 3f --workload matmul --db " + db_,
            "error: give --kernel or --workload, not both\n"},
       }) {
    Result r = tunebed(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_EQ(r.err, c.err) << c.args;
    EXPECT_EQ(r.out, "") << c.args;
  }
}

TEST_F(QueryE2E, MissingDatabaseIsAnErrorAndIsNotCreated) {
  std::string missing = path("nope/tuning.db"), also_missing = path("absent.db");
  Result r = tunebed("query best --db " + also_missing);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: no tuning database at " + also_missing + "\n");
  EXPECT_FALSE(std::filesystem::exists(also_missing));
  EXPECT_EQ(tunebed("query runs --db " + missing).exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(path("nope")));
}

TEST_F(QueryE2E, CorruptDatabaseIsAnErrorAndStaysByteForByte) {
  // Overwrite the middle of the file (b-tree pages) with garbage; the header stays valid.
  std::string bytes = read_file(db_);
  ASSERT_GT(bytes.size(), 8192u);
  for (std::size_t i = 4096; i < bytes.size() - 1024; i += 7) bytes[i] = static_cast<char>(0xA5);
  {
    std::ofstream out(db_, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  for (const char* q : {"best", "runs", "history 3f2a", "failures"}) {
    Result r = query(q);
    EXPECT_EQ(r.exit_code, 2) << q;
    EXPECT_EQ(r.err.rfind("error: " + db_ + " is ", 0), 0u) << r.err;
    EXPECT_EQ(count(r.err, "\n"), 1) << r.err;
  }
  EXPECT_EQ(read_file(db_), bytes);
  EXPECT_FALSE(std::filesystem::exists(db_ + "-wal"));
}

TEST_F(QueryE2E, AFileThatIsNotADatabaseIsRefused) {
  std::string text = path("notes.txt");
  std::ofstream(text) << "not a database\n";
  Result r = tunebed("query best --db " + text);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("error: " + text + " is not a tuning database", 0), 0u) << r.err;
  EXPECT_EQ(read_file(text), "not a database\n");
}

}  // namespace
}  // namespace tunebed::testing
