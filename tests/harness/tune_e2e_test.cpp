// `tunebed tune` through the real program: workloads and manifests tuned into fresh databases,
// sharding, JSON-lines progress, and a run stopped with SIGINT then resumed.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "results/json_lines.hpp"
#include "results/tuning_db.hpp"
#include "tests/data/sops_sample.hpp"
#include "tests/harness/db_fixture.hpp"
#include "tests/temp_dir.hpp"

namespace tunebed::testing {
namespace {

namespace fs = std::filesystem;

// One JSON-lines progress event, by field.
using Event = std::map<std::string, results::Value>;

Event parse_event(const std::string& line) {
  Event e;
  for (auto& [key, value] : results::parse_json_object(line)) e[key] = value;
  return e;
}

std::string text(const Event& e, const std::string& key) {
  auto it = e.find(key);
  return it != e.end() && std::holds_alternative<std::string>(it->second) ? std::get<std::string>(it->second)
                                                                          : "";
}

std::vector<Event> events_of(const std::string& out) {
  std::vector<Event> events;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) events.push_back(parse_event(line));
  return events;
}

class TuneE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = (dir_ / "tuning.db").string();
    // A compile cache of the test's own, so that a run takes the time a first run takes (the
    // programs the test starts inherit it).
    ::setenv("TUNEBED_CACHE_DIR", (dir_ / "cache").c_str(), 1);
  }
  Result tune(const std::string& args, const std::string& db = "") {
    return tunebed("tune " + args + " --db " + (db.empty() ? db_ : db) + " --jobs 1");
  }
  std::string write(const std::string& name, const std::string& content) const {
    std::ofstream(dir_ / name) << content;
    return (dir_ / name).string();
  }
  // The kernels each run of DB tuned, from its candidates, as (run id, kernel hash, opts) -> count.
  std::map<std::tuple<int64_t, std::string, std::string>, int> candidates(const std::string& db) const {
    auto tdb = results::TuningDb::open_read_only(db);
    std::map<std::tuple<int64_t, std::string, std::string>, int> out;
    results::Statement st = results::raw_connection(tdb).prepare(
        "SELECT c.run_id, k.hash, c.opts FROM candidates c JOIN kernels k ON k.id = c.kernel_id ORDER BY "
        "c.id");
    while (st.step()) out[{st.column_int(0), st.column_text(1), st.column_text(2)}]++;
    return out;
  }

  const TempDir tmp_{"tunebed-tune-e2e"};
  const fs::path dir_ = tmp_.path();
  std::string db_;
};

TEST_F(TuneE2E, TunesAWorkloadThenServesItFromTheCache) {
  Result first = tune("matmul:M=16,N=16,K=16 --budget 4");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("16x16x16 float32"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("default_us  tuned_us  speedup"), std::string::npos) << first.out;
  Result best = tunebed("query best --db " + db_);
  ASSERT_EQ(best.exit_code, 0) << best.err;
  EXPECT_NE(best.out.find("matmul:M=16,N=16,K=16"), std::string::npos) << best.out;
  // The independent check (search/tune.hpp step 1) is recorded on the kernel and shown by `why`.
  Result why = tunebed("query why " + best.out.substr(best.out.find('\n') + 1, 12) + " --db " + db_);
  ASSERT_EQ(why.exit_code, 0) << why.err;
  EXPECT_NE(why.out.find("independent check on cpu: ok against the ast-interpreter+eigen (max error "),
            std::string::npos)
      << why.out;
  // The decision's confidence (search/decide.hpp) is stored with the winner and shown.
  EXPECT_NE(why.out.find("confidence: "), std::string::npos) << why.out;
  EXPECT_NE(why.out.find(" interleaved rounds"), std::string::npos) << why.out;
  Result runs = tunebed("query runs --format csv --db " + db_);
  EXPECT_NE(runs.out.find("completed"), std::string::npos) << runs.out;

  Result second = tune("matmul:M=16,N=16,K=16 --budget 4");
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.out.find(" hit "), std::string::npos) << "the second tuning must be a cache hit:\n"
                                                         << second.out;
}

// `tune --exhaustive` makes complete data; `replay` runs strategies against it without timing.
TEST_F(TuneE2E, ReplayRunsAStrategyAgainstAnExhaustiveRunsMeasurements) {
  const Result made = tune("matmul:M=16,N=16,K=16 --exhaustive --budget 30 --seconds 600");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const Result runs = tunebed("query runs --format csv --db " + db_);
  EXPECT_NE(runs.out.find("exhaustive"), std::string::npos) << runs.out;

  const Result beam = tunebed("replay --strategy beam --budget 10 --db " + db_);
  ASSERT_EQ(beam.exit_code, 0) << beam.err;
  EXPECT_NE(beam.out.find("kernel        device  stored  proposed  missing  best_us"), std::string::npos) << beam.out;
  EXPECT_NE(beam.out.find("beam came within 5% of the target on "), std::string::npos) << beam.out;

  const Result curve = tunebed("replay --strategy random --seed 4 --budget 7 --curve --format csv --db " + db_);
  ASSERT_EQ(curve.exit_code, 0) << curve.err;
  EXPECT_EQ(curve.out.rfind("kernel,device,index,opts,us,best_us", 0), 0u) << curve.out;
  EXPECT_EQ(std::count(curve.out.begin(), curve.out.end(), '\n'), 1 + 7) << curve.out;

  const Result bad = tunebed("replay --strategy greedy --db " + db_);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("unknown strategy 'greedy'"), std::string::npos) << bad.err;
  EXPECT_EQ(tunebed("replay --budget 0 --db " + db_).exit_code, 2);
  EXPECT_EQ(tunebed("replay --kernel ffff --db " + db_).exit_code, 2);
  const Result both = tune("matmul:M=16,N=16,K=16 --exhaustive --strategy beam");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("--exhaustive is a strategy"), std::string::npos) << both.err;
}

// `replay --fill` measures what a replay found missing, as a run of its own, until nothing is:
// a strategy that leaves BEAM's path is then judged on measurements, not on +inf.
TEST_F(TuneE2E, ReplayFillMeasuresTheMissingCandidatesAndReplaysAgain) {
  ASSERT_EQ(tune("matmul:M=32,N=32,K=32 --strategy beam --width 2 --budget 8").exit_code, 0);
  const auto missing = [&](const std::string& extra) {  // the replay's `missing` column
    const Result r = tunebed("replay --strategy random --seed 3 --budget 16 --target beam:2 --format csv --db " +
                             db_ + extra);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::istringstream lines(r.out);
    std::string header, row;
    std::getline(lines, header), std::getline(lines, row);  // one kernel
    std::vector<std::string> f;
    std::istringstream cells(row);
    for (std::string c; std::getline(cells, c, ',');) f.push_back(c);
    return f.size() > 4 ? f[4] : "(no row: " + r.out + ")";
  };
  const std::string before = missing("");  // a random walk leaves BEAM's 8 candidates
  EXPECT_TRUE(before != "0" && !before.empty() && before.find_first_not_of("0123456789") == std::string::npos)
      << before;
  EXPECT_EQ(missing(" --fill"), "0");
  EXPECT_EQ(missing(""), "0");  // stored now, for every later replay
  const Result runs = tunebed("query runs --format csv --db " + db_);
  EXPECT_NE(runs.out.find("given"), std::string::npos) << runs.out;
  // Filled measurements pool with the stored ones, so they must come from the same machine.
  {
    auto db = results::TuningDb::open(db_, results::TuningDb::Mode::existing);
    results::raw_connection(db).exec("UPDATE devices SET arch = 'elsewhere'");
  }
  const Result other = tunebed("replay --strategy random --seed 4 --budget 16 --fill --db " + db_);
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.err.find("fill only data from this machine"), std::string::npos) << other.err;
  const Result none = tunebed("replay --strategy random --fill --db " + (dir_ / "missing.db").string());
  // --fill writes into a database; it does not create one. A database that is not there is bad
  // input, as in every other command (a regression: replay exited 1, as for a failed run).
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("no tuning database at"), std::string::npos) << none.err;
  EXPECT_EQ(tunebed("replay --db " + (dir_ / "missing.db").string()).exit_code, 2);
  EXPECT_FALSE(fs::exists(dir_ / "missing.db"));
}

// `replay --confirm` re-times each kernel's found best against the target, head to head: the
// unoptimized kernel is told apart from the tuned one; the target's own kernel is not re-timed.
TEST_F(TuneE2E, ReplayConfirmRetimesTheFoundBestAgainstTheTargetHeadToHead) {
  ASSERT_EQ(tune("matmul:M=32,N=32,K=32 --strategy beam --width 2 --budget 8").exit_code, 0);
  const Result same = tunebed("replay --strategy beam --width 2 --budget 8 --target beam:2 --confirm --db " + db_);
  ASSERT_EQ(same.exit_code, 0) << same.err;
  EXPECT_NE(same.out.find("search_s  retimed  low  high"), std::string::npos) << same.out;
  EXPECT_NE(same.out.find("  same    "), std::string::npos) << same.out;
  EXPECT_NE(same.out.find("beam re-timed head to head against the target: within 5% on 1 of 1 kernel(s) (1 found "
                          "the target's own kernel, 0 re-timed); the target more than 5% faster at 95% confidence "
                          "on 0\n"),
            std::string::npos)
      << same.out;
  // A budget of one: BEAM's first candidate, the unoptimized kernel, against the best stored.
  const Result root = tunebed("replay --strategy beam --budget 1 --confirm --format csv --db " + db_);
  ASSERT_EQ(root.exit_code, 0) << root.err;
  std::istringstream lines(root.out);
  std::string header, row;
  std::getline(lines, header), std::getline(lines, row);
  if (header.ends_with('\r')) header.pop_back();  // CSV lines end in CRLF (RFC 4180)
  EXPECT_EQ(header, "kernel,device,stored,proposed,missing,best_us,found_us,target_us,to_5pct,wall_s,search_s,retimed,low,high");
  std::vector<std::string> f;
  std::istringstream cells(row);
  for (std::string c; std::getline(cells, c, ',');) f.push_back(c);
  ASSERT_EQ(f.size(), 14u) << row;
  const double ratio = std::stod(f[11]), low = std::stod(f[12]), high = std::stod(f[13]);
  EXPECT_LE(low, ratio);
  EXPECT_LE(ratio, high);
  EXPECT_GT(low, 1.05) << "the unoptimized 32x32x32 matmul against its tuned kernel: " << row;
  const Result table = tunebed("replay --strategy beam --budget 1 --confirm --db " + db_);
  EXPECT_NE(table.out.find("(0 found the target's own kernel, 1 re-timed); the target more than 5% faster at 95% "
                           "confidence on 1"),
            std::string::npos)
      << table.out;

  EXPECT_EQ(tunebed("replay --confirm --curve --db " + db_).exit_code, 2);
  {  // re-timed here against what was measured there says nothing
    auto db = results::TuningDb::open(db_, results::TuningDb::Mode::existing);
    results::raw_connection(db).exec("UPDATE devices SET arch = 'elsewhere'");
  }
  const Result other = tunebed("replay --confirm --db " + db_);
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.err.find("--confirm: kernel "), std::string::npos) << other.err;
  EXPECT_NE(other.err.find("confirm only data from this machine"), std::string::npos) << other.err;
}

// --train-db: the model learns from another database's kernels, says how many, and the run keeps
// the path (absolute) so that a resume learns from the same data.
TEST_F(TuneE2E, TheModelStrategyLearnsFromATrainingDatabaseItNames) {
  ASSERT_EQ(tune("matmul:M=16,N=16,K=16 --exhaustive --budget 24 --seconds 600").exit_code, 0);
  const std::string fresh = (dir_ / "fresh.db").string(), alone = (dir_ / "alone.db").string();
  const Result trained = tune("matmul:M=32,N=8,K=16 --strategy model --budget 9 --train-db " + db_, fresh);
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  EXPECT_NE(trained.err.find("model: training data: 1 kernel(s), "), std::string::npos) << trained.err;
  {
    auto db = results::TuningDb::open(fresh, results::TuningDb::Mode::existing);
    results::Statement run = results::raw_connection(db).prepare("SELECT params FROM runs");
    ASSERT_TRUE(run.step());
    const std::string params = run.column_text(0);
    EXPECT_NE(params.find("\"train_db\":\"" + db_ + "\""), std::string::npos) << params;
    results::raw_connection(db).exec("UPDATE runs SET status = 'running'");
  }
  const Result resumed = tunebed("tune --resume 1 --db " + fresh);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find(" measurement(s) of " + db_ + " on this device"), std::string::npos) << resumed.err;
  const Result untrained = tune("matmul:M=32,N=8,K=16 --strategy model --budget 9", alone);
  ASSERT_EQ(untrained.exit_code, 0) << untrained.err;
  EXPECT_NE(untrained.err.find("model: training data: 0 kernel(s), 0 measurement(s) of --db"), std::string::npos)
      << untrained.err;

  const Result missing = tune("matmul:M=32,N=8,K=16 --strategy model --train-db " + (dir_ / "none.db").string(), alone);
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("--train-db: no tuning database at "), std::string::npos) << missing.err;
  const Result resume = tune("--resume 1 --train-db " + db_, fresh);
  EXPECT_NE(resume.exit_code, 0);
  EXPECT_NE(resume.err.find("drop --train-db"), std::string::npos) << resume.err;
}

// A model option where nothing uses the model strategy would be silently ignored: it is refused.
TEST_F(TuneE2E, ModelOptionsWithoutTheModelStrategyAreRefused) {
  ASSERT_EQ(tune("matmul:M=16,N=16,K=16 --budget 4").exit_code, 0);
  const Result tuned = tune("matmul:M=16,N=8,K=16 --strategy beam --train-db " + db_);
  EXPECT_EQ(tuned.exit_code, 2);
  EXPECT_NE(tuned.err.find("--train-db is an option of the model strategy, which nothing here uses"),
            std::string::npos)
      << tuned.err;
  const Result replayed = tunebed("replay --strategy random --model-top-k 3 --db " + db_);
  EXPECT_EQ(replayed.exit_code, 2);
  EXPECT_NE(replayed.err.find("--model-top-k is an option of the model strategy"), std::string::npos) << replayed.err;
  EXPECT_EQ(tunebed("replay --strategy model --model-top-k 3 --db " + db_).exit_code, 0);
}

// The model strategy learns from the database's other kernels, live in `tune` and offline in
// `replay`, where it never trains on the kernel it replays.
TEST_F(TuneE2E, TheModelStrategyTunesAndReplaysFromTheOtherKernelsMeasurements) {
  ASSERT_EQ(tune("matmul:M=16,N=16,K=16 --exhaustive --budget 24 --seconds 600").exit_code, 0);
  ASSERT_EQ(tune("matmul:M=8,N=32,K=16 --exhaustive --budget 24 --seconds 600").exit_code, 0);
  const Result live = tune("matmul:M=32,N=8,K=16 --strategy model --budget 9 --seconds 600");
  ASSERT_EQ(live.exit_code, 0) << live.err;
  const Result runs = tunebed("query runs --format csv --db " + db_);
  EXPECT_NE(runs.out.find("model"), std::string::npos) << runs.out;

  for (const std::string model : {"xgboost", "ridge"}) {
    const Result r = tunebed("replay --strategy model --cost-model " + model + " --target beam:2 --budget 20 --db " + db_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("target_us  to_5pct  wall_s  search_s"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("model came within 5% of the target on "), std::string::npos) << r.out;
  }
  // Against BEAM's own best, BEAM replayed reaches the target on every kernel: the target is what
  // it finds, not the best stored (a regression: --target beam:W once reported the best stored).
  const Result beam = tunebed("replay --strategy beam --width 2 --target beam:2 --budget 20 --format csv --db " + db_);
  ASSERT_EQ(beam.exit_code, 0) << beam.err;
  std::istringstream lines(beam.out);
  std::string line;
  const auto next = [&] {  // a CSV record, without its CRLF (RFC 4180)
    if (!std::getline(lines, line)) return false;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return true;
  };
  ASSERT_TRUE(next());
  ASSERT_EQ(line, "kernel,device,stored,proposed,missing,best_us,found_us,target_us,to_5pct,wall_s,search_s");
  int kernels = 0;
  for (; next(); kernels++) {
    std::vector<std::string> f;
    std::istringstream cells(line);
    for (std::string c; std::getline(cells, c, ',');) f.push_back(c);
    ASSERT_GE(f.size(), 9u) << line;
    EXPECT_EQ(f[6], f[7]) << "found_us is target_us: " << line;
    EXPECT_FALSE(f[8].empty()) << "beam reaches its own best: " << line;
  }
  EXPECT_EQ(kernels, 3);
  const Result beam_table = tunebed("replay --strategy beam --width 2 --target beam:2 --budget 20 --db " + db_);
  EXPECT_NE(beam_table.out.find("beam proposed "), std::string::npos) << beam_table.out;
  EXPECT_NE(beam_table.out.find(" candidate(s), 1.00 of BEAM width 2's "), std::string::npos) << beam_table.out;
  // One kernel replayed alone (--kernel) learns from the others all the same: its row is its row
  // of the whole replay (a regression: it trained on the --kernel's rows only, so on nothing).
  const auto rows = [&](const std::string& extra) {
    const Result r = tunebed("replay --strategy model --seed 2 --budget 20 --format csv --db " + db_ + extra);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> out;
    std::istringstream in(r.out);
    for (std::string row; std::getline(in, row);)
      out.push_back(row.substr(0, row.rfind(',')));  // without search_s, the replay's own time
    return out;
  };
  const std::vector<std::string> all = rows(""), one = rows(" --kernel " + all.at(2).substr(0, 12));
  ASSERT_EQ(one.size(), 2u);
  EXPECT_EQ(one[1], all.at(2));
  EXPECT_EQ(tunebed("replay --strategy model --cost-model forest --db " + db_).exit_code, 2);
  // Its knobs: one candidate a step and no second chance propose fewer than four and three.
  const auto proposed = [&](const std::string& extra) {  // summed over the kernels
    int64_t n = 0;
    const std::vector<std::string> replayed = rows(extra);
    for (size_t i = 1; i < replayed.size(); i++) {
      std::vector<std::string> f;
      std::istringstream cells(replayed[i]);
      for (std::string c; std::getline(cells, c, ',');) f.push_back(c);
      n += std::stoll(f.at(3));
    }
    return n;
  };
  EXPECT_LT(proposed(" --model-top-k 1 --model-patience 1"), proposed(""));
  const Result knob = tunebed("replay --strategy model --model-top-k 0 --db " + db_);
  EXPECT_EQ(knob.exit_code, 2);
  EXPECT_NE(knob.err.find("--model-top-k must be at least 1"), std::string::npos) << knob.err;
  const Result target = tunebed("replay --target beam:0 --db " + db_);
  EXPECT_EQ(target.exit_code, 2);
  EXPECT_NE(target.err.find("--target must be best or beam:W"), std::string::npos) << target.err;
  EXPECT_EQ(tunebed("replay --target beam:99999999999 --db " + db_).exit_code, 2);  // not an int: still bad input
  EXPECT_EQ(tunebed("replay --target best --db " + db_).exit_code, 0);

  // `rank` judges the same model on every stored candidate, with no search: per kernel, its
  // favourite and best of five against the best stored, and where the best stands.
  for (const std::string model : {"xgboost", "ridge"}) {
    const Result ranked = tunebed("rank --cost-model " + model + " --format csv --db " + db_);
    ASSERT_EQ(ranked.exit_code, 0) << ranked.err;
    std::istringstream in(ranked.out);
    std::string header;
    std::getline(in, header);
    EXPECT_EQ(header, "kernel,device,ranked,best_us,first_us,first_x,top5_x,best_rank,spearman\r");
    int kernels = 0;
    for (std::string row; std::getline(in, row); kernels++) {
      std::vector<std::string> f;
      std::istringstream cells(row);
      for (std::string c; std::getline(cells, c, ',');) f.push_back(c);
      ASSERT_EQ(f.size(), 9u) << row;
      const double first_x = std::stod(f[5]), top5_x = std::stod(f[6]);
      EXPECT_GE(first_x, 1) << row;
      EXPECT_GE(top5_x, 1) << row;
      EXPECT_LE(top5_x, first_x) << row;
      EXPECT_GE(std::stoll(f[7]), 1) << row;
      EXPECT_LE(std::stoll(f[7]), std::stoll(f[2])) << row;
      EXPECT_DOUBLE_EQ(std::stod(f[4]) / std::stod(f[3]), first_x) << row;
    }
    EXPECT_EQ(kernels, 3);
  }
  const Result summary = tunebed("rank --db " + db_);
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_NE(summary.out.find("xgboost ranked 3 kernel(s): favourite "), std::string::npos) << summary.out;
  EXPECT_NE(summary.err.find("a kernel never learns from its own"), std::string::npos) << summary.err;
  const Result bad_model = tunebed("rank --cost-model forest --db " + db_);
  EXPECT_EQ(bad_model.exit_code, 2);
  EXPECT_NE(bad_model.err.find("--cost-model"), std::string::npos) << bad_model.err;
  EXPECT_EQ(tunebed("rank --kernel ffff --db " + db_).exit_code, 2);
  EXPECT_EQ(tunebed("rank --db " + (dir_ / "none.db").string()).exit_code, 2);
}

// The model strategy's model and knobs are the run's: tune stores them with it, bad values are
// usage errors, and a resume searches with the stored ones (a stored model that is not one is
// named), never with new flags.
TEST_F(TuneE2E, TheModelsSettingsAreTheRunsAndAResumeKeepsThem) {
  const std::string knobs =
      " --strategy model --cost-model ridge --model-top-k 2 --model-patience 1 --model-lookahead 1 --model-restarts 1";
  ASSERT_EQ(tune("matmul:M=16,N=16,K=16 --budget 6" + knobs).exit_code, 0);
  std::string params;
  {
    auto db = results::TuningDb::open(db_, results::TuningDb::Mode::existing);
    results::Statement run = results::raw_connection(db).prepare("SELECT params FROM runs");
    ASSERT_TRUE(run.step());
    params = run.column_text(0);
    results::raw_connection(db).exec(
        "UPDATE runs SET status = 'running', params = replace(params, '\"cost_model\":\"ridge\"', "
        "'\"cost_model\":\"forest\"')");
  }
  for (const char* stored : {"\"model\":\"ridge\"", "\"top_k\":2", "\"patience\":1", "\"cost_model\":\"ridge\"",
                             "\"model_top_k\":2", "\"model_patience\":1", "\"lookahead\":1", "\"model_lookahead\":1",
                             "\"restarts\":1", "\"model_restarts\":1"})
    EXPECT_NE(params.find(stored), std::string::npos) << stored << " in " << params;
  const Result resumed = tunebed("tune --resume 1 --db " + db_);
  EXPECT_EQ(resumed.exit_code, 2);
  EXPECT_NE(resumed.err.find("--resume: run 1's model strategy: unknown cost model 'forest'"),
            std::string::npos)
      << resumed.err;
  const Result flag = tunebed("tune --resume 1 --model-top-k 3 --db " + db_);
  EXPECT_EQ(flag.exit_code, 2);
  EXPECT_NE(flag.err.find("drop --model-top-k"), std::string::npos) << flag.err;
  const Result zero = tune("matmul:M=16,N=16,K=16 --strategy model --model-patience 0");
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_NE(zero.err.find("--model-patience must be at least 1"), std::string::npos) << zero.err;
  const Result negative = tune("matmul:M=16,N=16,K=16 --strategy model --model-lookahead -1");
  EXPECT_EQ(negative.exit_code, 2);
  EXPECT_NE(negative.err.find("--model-lookahead must be at least 0"), std::string::npos) << negative.err;
  const Result restarts = tune("matmul:M=16,N=16,K=16 --strategy model --model-restarts -1");
  EXPECT_EQ(restarts.exit_code, 2);
  EXPECT_NE(restarts.err.find("--model-restarts must be at least 0"), std::string::npos) << restarts.err;
  const Result ahead = tunebed("tune --resume 1 --model-lookahead 0 --db " + db_);
  EXPECT_EQ(ahead.exit_code, 2);
  EXPECT_NE(ahead.err.find("drop --model-lookahead"), std::string::npos) << ahead.err;
  EXPECT_EQ(tune("matmul:M=16,N=16,K=16 --strategy model --cost-model forest").exit_code, 2);
}

// --check-budget bounds each kernel's exact reference run: past it the kernel is checked on an
// odd-strided sample of its outputs (32^3 iterations / 1000: every 33rd of 1024), its check says
// how many it left unverified, and the run stores the budget it was checked with.
TEST_F(TuneE2E, TheCheckBudgetSamplesTheReferenceRunAndTheRunStoresIt) {
  Result r = tune("matmul:M=32,N=32,K=32 --budget 2 --check-budget 1000");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto db = results::TuningDb::open_read_only(db_);
  results::Statement check = results::raw_connection(db).prepare("SELECT status, unverified FROM kernel_checks");
  ASSERT_TRUE(check.step());
  EXPECT_EQ(check.column_text(0), "ok");
  EXPECT_EQ(check.column_int(1), 1024 - 32);
  results::Statement run = results::raw_connection(db).prepare("SELECT params FROM runs");
  ASSERT_TRUE(run.step());
  EXPECT_NE(run.column_text(0).find("\"check_iterations\":1000"), std::string::npos) << run.column_text(0);
  Result best = tunebed("query best --db " + db_);
  Result why = tunebed("query why " + best.out.substr(best.out.find('\n') + 1, 12) + " --db " + db_);
  ASSERT_EQ(why.exit_code, 0) << why.err;
  EXPECT_NE(why.out.find("x its bound); 992 output elements unverified, "), std::string::npos) << why.out;
}

TEST_F(TuneE2E, BadInputIsAUsageError) {
  Result unknown = tune("nosuchworkload");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.err.rfind("error: ", 0), 0u) << unknown.err;
  EXPECT_FALSE(fs::exists(db_)) << "bad input must not create the database";
  EXPECT_EQ(tune("matmul --strategy nope").exit_code, 2);
  EXPECT_EQ(tune("matmul --budget 0").exit_code, 2);
  EXPECT_EQ(tune("matmul --check-budget 0").exit_code, 2);
  EXPECT_EQ(tune("matmul --device opencl").exit_code, 2);
  EXPECT_EQ(tune("matmul --progress fancy").exit_code, 2);
  Result shard = tune("matmul --shard 3/2");
  EXPECT_EQ(shard.exit_code, 2);
  EXPECT_EQ(shard.err, "error: --shard '3/2': I must be between 1 and 2 (shards are numbered from 1)\n");
  Result missing = tune("--resume 1");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err, "error: no tuning database at " + db_ + "\n");
  EXPECT_FALSE(fs::exists(db_));
}

TEST_F(TuneE2E, AManifestTunesItsWorkloadsAndAstFilesWithTheirOwnOptions) {
  const char* root = std::getenv("TUNEBED_SOURCE_DIR");
  Result import = tunebed("import " + std::string(root ? root : ".") + "/tests/data/sops-sample.txt --out " +
                          (dir_ / "kernels").string());
  ASSERT_EQ(import.exit_code, 0) << import.err;
  std::set<fs::path> uops;
  for (const fs::directory_entry& e : fs::directory_iterator(dir_ / "kernels")) uops.insert(e.path());
  ASSERT_FALSE(uops.empty());
  const std::string manifest = write("campaign.txt",
                                     "# two entries\n"
                                     "matmul:M=16,N=16,K=16 budget=3\n"
                                     "\n"
                                     "ast kernels/" +
                                         uops.begin()->filename().string() + " strategy=random budget=2\n");
  Result r = tune("--manifest " + manifest + " --progress=jsonl");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<Event> events = events_of(r.out);
  std::vector<std::string> sources;
  std::map<std::string, int64_t> budgets;
  for (const Event& e : events)
    if (text(e, "event") == "kernel_start") {
      sources.push_back(text(e, "source"));
      budgets[text(e, "source")] = std::get<int64_t>(e.at("budget"));
    }
  ASSERT_EQ(sources.size(), 2u) << r.out;
  EXPECT_EQ(sources[0], "matmul:M=16,N=16,K=16,dtype=float32");
  EXPECT_EQ(sources[1], (dir_ / "kernels" / uops.begin()->filename()).string());
  EXPECT_EQ(budgets[sources[0]], 3);
  EXPECT_EQ(budgets[sources[1]], 2);
  Result runs = tunebed("query runs --format csv --db " + db_);
  EXPECT_NE(runs.out.find("mixed"), std::string::npos) << "beam and random in one run:\n" << runs.out;
  EXPECT_EQ(count(r.err, "\n"), 3) << "the summary table on stderr with jsonl:\n" << r.err;
}

TEST_F(TuneE2E, AManifestErrorNamesTheFileLineAndToken) {
  const std::string manifest = write("m.txt", "matmul:M=16,N=16,K=16\n# fine so far\nsum budget=many\n");
  Result bad = tune("--manifest " + manifest);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "error: " + manifest +
                         ":3: bad budget 'many' (expected a whole number of candidates, at least 1)\n");

  const std::string unknown = write("u.txt", "\n\nnosuchworkload:N=4 budget=2\n");
  Result u = tune("--manifest " + unknown);
  EXPECT_EQ(u.exit_code, 2);
  EXPECT_EQ(u.err.rfind("error: " + unknown + ":3: ", 0), 0u) << u.err;
  EXPECT_NE(u.err.find("nosuchworkload"), std::string::npos) << u.err;

  const std::string missing = write("a.txt", "ast nowhere.uop\n");
  Result a = tune("--manifest " + missing);
  EXPECT_EQ(a.exit_code, 2);
  EXPECT_EQ(a.err,
            "error: " + missing + ":1: cannot read AST file '" + (dir_ / "nowhere.uop").string() + "'\n");
  EXPECT_EQ(tune("--manifest " + (dir_ / "absent.txt").string()).exit_code, 2);
  EXPECT_FALSE(fs::exists(db_)) << "bad input must not create the database";
}

TEST_F(TuneE2E, AManifestAstEntryTakesATinygradAstLine) {
  // Line 1: a + b over 3 floats, with tinygrad's KernelInfo.
  const std::string kernel = write("tinygrad.txt", sops_sample_lines().at(0) + "\n");
  Result r = tune("--manifest " + write("m.txt", "ast tinygrad.txt budget=1\n") + " --progress=jsonl");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::set<std::string> sources;
  for (const Event& e : events_of(r.out))
    if (text(e, "event") == "kernel_start") sources.insert(text(e, "source"));
  EXPECT_EQ(sources, std::set<std::string>{kernel}) << r.out;
}

TEST_F(TuneE2E, ShardsCoverTheManifestExactlyOnceAndMergeIntoOneDatabase) {
  const std::string manifest = write(
      "m.txt", "matmul:M=16,N=16,K=16\nsoftmax:M=8,N=8\nelementwise:N=64,length=2\nsum:M=8,N=8,axis=rows\n");
  std::vector<std::set<std::string>> shards;
  for (const char* shard : {"1/2", "2/2"}) {
    const std::string db = (dir_ / ("shard-" + std::string(1, shard[0]) + ".db")).string();
    Result r = tune("--manifest " + manifest + " --budget 1 --progress=jsonl --shard " + shard, db);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::set<std::string> kernels;
    for (const Event& e : events_of(r.out))
      if (text(e, "event") == "kernel_done") kernels.insert(text(e, "kernel"));
    shards.push_back(kernels);
  }
  Result all = tune("--manifest " + manifest + " --budget 1 --progress=jsonl", (dir_ / "all.db").string());
  ASSERT_EQ(all.exit_code, 0) << all.err;
  std::set<std::string> every;
  for (const Event& e : events_of(all.out))
    if (text(e, "event") == "kernel_done") every.insert(text(e, "kernel"));
  ASSERT_GE(every.size(), 6u);  // softmax alone is three kernels
  std::set<std::string> both;
  for (const auto& s : shards) both.insert(s.begin(), s.end());
  EXPECT_EQ(shards[0].size() + shards[1].size(), every.size()) << "a kernel was tuned by both shards";
  EXPECT_EQ(both, every);
  EXPECT_LE(std::max(shards[0].size(), shards[1].size()) - std::min(shards[0].size(), shards[1].size()), 1u);

  const std::string merged = (dir_ / "merged.db").string();
  Result merge = tunebed("db merge " + merged + " " + (dir_ / "shard-1.db").string() + " " +
                         (dir_ / "shard-2.db").string());
  ASSERT_EQ(merge.exit_code, 0) << merge.err;
  Result best = tunebed("query best --format csv --db " + merged);
  EXPECT_EQ(count(best.out, "\n"), static_cast<int>(every.size()) + 1) << best.out;
}

TEST_F(TuneE2E, JsonlProgressIsOneParseableObjectPerEvent) {
  Result r = tune("matmul:M=16,N=16,K=16 --budget 3 --progress=jsonl");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<Event> events;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    ASSERT_NO_THROW(events.push_back(parse_event(line))) << line;
    ASSERT_TRUE(events.back().contains("t")) << line;
  }
  ASSERT_GE(events.size(), 5u);
  EXPECT_EQ(text(events.front(), "event"), "run_start");
  EXPECT_EQ(text(events.back(), "event"), "run_done");
  EXPECT_EQ(text(events.back(), "status"), "completed");
  std::map<std::string, int> kinds;
  for (const Event& e : events) kinds[text(e, "event")]++;
  EXPECT_EQ(kinds["kernel_start"], 1);
  EXPECT_EQ(kinds["kernel_done"], 1);
  EXPECT_GE(kinds["candidate"], 3);
  EXPECT_GE(kinds["new_best"], 1);
  for (const Event& e : events)
    if (text(e, "event") == "kernel_done") EXPECT_TRUE(std::holds_alternative<double>(e.at("tuned_us")));
}

// A `tunebed tune` running in the background, its stdout read line by line.
class Background {
 public:
  explicit Background(const std::string& command) {
    int fds[2];
    EXPECT_EQ(::pipe(fds), 0);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(fds[1], STDOUT_FILENO);
      ::close(fds[0]);
      ::close(fds[1]);
      ::execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), nullptr);
      ::_exit(127);
    }
    ::close(fds[1]);
    out_ = ::fdopen(fds[0], "r");
  }
  ~Background() {
    if (out_) std::fclose(out_);
  }
  std::optional<std::string> line() {
    char buf[8192];
    if (!std::fgets(buf, sizeof buf, out_)) return std::nullopt;
    return std::string(buf);
  }
  void signal(int sig) const { ::kill(pid_, sig); }
  int wait() {
    while (line()) {
    }
    int status = 0;
    ::waitpid(pid_, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  pid_t pid_ = -1;
  FILE* out_ = nullptr;
};

TEST_F(TuneE2E, SigintStopsAtACandidateBoundaryAndResumeFinishesWithoutRedoingAny) {
  const std::string err = (dir_ / "stderr").string();
  Background run(std::string(TUNEBED_EXE) +
                 " tune matmul:M=32,N=32,K=32 sum:M=64,N=64,axis=rows --budget 12 --jobs 1 "
                 "--progress=jsonl --db " +
                 db_ + " 2>" + err);
  int seen = 0;
  while (std::optional<std::string> l = run.line())
    if (text(parse_event(*l), "event") == "candidate" && ++seen == 3) break;
  ASSERT_EQ(seen, 3) << "the run ended before its third candidate";
  run.signal(SIGINT);
  EXPECT_EQ(run.wait(), 130);
  const std::string message = read_file(err);
  const std::string resume = "tunebed tune --resume 1 --db " + db_;
  ASSERT_NE(message.find("interrupted: resume with " + resume + "\n"), std::string::npos) << message;

  auto committed = candidates(db_);
  ASSERT_GE(committed.size(), 3u);
  {
    auto db = results::TuningDb::open_read_only(db_);
    EXPECT_EQ(db.run(1).status, results::RunStatus::interrupted);
  }

  Result resumed = tunebed(resume.substr(std::string("tunebed ").size()) + " --jobs 1 --progress=jsonl");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  int64_t reused = 0;
  size_t done = 0;
  for (const Event& e : events_of(resumed.out))
    if (text(e, "event") == "kernel_done") reused += std::get<int64_t>(e.at("reused")), done++;
  EXPECT_EQ(done, 2u);
  EXPECT_EQ(reused, static_cast<int64_t>(committed.size()));
  auto after = candidates(db_);
  for (const auto& [key, n] : after)
    EXPECT_EQ(n, 1) << std::get<1>(key) << " " << std::get<2>(key) << " ran twice";
  for (const auto& [key, n] : committed) EXPECT_TRUE(after.contains(key));
  EXPECT_GT(after.size(), committed.size());
  auto db = results::TuningDb::open_read_only(db_);
  EXPECT_EQ(db.run(1).status, results::RunStatus::completed);
  EXPECT_EQ(db.runs().size(), 1u);
  Result again = tune("--resume 1");
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_EQ(again.err, "error: --resume: run 1 has completed; there is nothing to resume\n");
}

}  // namespace
}  // namespace tunebed::testing
