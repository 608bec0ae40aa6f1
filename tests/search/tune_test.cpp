// The tuning driver end to end through the worker pool and a real tuning database, on a
// synthetic space of hand-written C kernels: the root (a slow but correct kernel) and one level
// of variants that segfault, hang, compute a wrong answer, fail to compile, or are correct.
#include "search/tune.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "tests/search/synthetic_target.hpp"

namespace tunebed::search {
namespace {

using namespace test;

const std::vector<Variant> faulty = {
    {"segv", "*(volatile int*)0 = 1;"},
    {"spin", "volatile int x = 0;\n  for (;;) x++;"},
    {"wrong", "for (int i = 0; i < 256; i++) out[i] = in[i] * 3.0f;"},
    {"broken", "out[0] = ;"},
    {"fast", doubling(1)},
    {"slower", doubling(200)},
};

// Correct kernels of tens of milliseconds each, all different, for a run that the writer commits
// in several batches (every 0.5 s) and that can be killed midway. (At 150000 repeats an AMD EPYC
// ran each in about 10 ms: the whole run fit in the writer's first 0.5 s and was never killed.)
std::vector<Variant> slow_variants(int n) {
  std::vector<Variant> v;
  for (int i = 0; i < n; i++) v.push_back({"slow" + std::to_string(i), doubling(800000 + i)});
  return v;
}

// Launches are priced by repeat count (fast 1 us, root 50 us, slower 200 us), so the winner is
// V:fast whatever the machine's load; the kernels still run, and the faults are real.
struct TuneDriver : ::testing::Test {
  ScopedLaunchPrice price{repeat_seconds};
  std::filesystem::path dir;
  VariantSpace space{faulty};
  std::string root = doubling(50);
  TuneTarget target;

  void SetUp() override {
    dir = std::filesystem::temp_directory_path() / ("tunebed_tune_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    // A compile cache of its own: with a warm shared cache every candidate compiled instantly and
    // the SIGKILL test's run could finish before it was killed.
    ::setenv("TUNEBED_CACHE_DIR", (dir / "cache").c_str(), 1);
    target = synthetic_target(space, root);
    target.kernel = {.hash = "synthetic0001",
                     .ast = "SINK(synthetic)",
                     .shape = "256 f32",
                     .flops = kN,
                     .bytes = 8 * kN,
                     .source = "tune_test"};
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  TuneOptions options() const {
    TuneOptions o;
    o.timing = {.warmup = 1, .runs = 3, .early_stop_s = std::nullopt, .timeout_s = 0.5};
    o.decision = {.min_rounds = 5, .max_rounds = 5};
    o.seed = 1;
    return o;
  }
  std::string db_path() const { return (dir / "tuning.db").string(); }
  // A process killed with SIGKILL leaves its run 'running'; that is what resume picks up.
  static void leave_running(results::TuningDb& db, int64_t run_id) {
    results::raw_connection(db)
        .prepare("UPDATE runs SET status = 'running', ended_at = NULL WHERE id = ?")
        .bind_all(run_id)
        .run();
  }
};

TEST_F(TuneDriver, FaultsAreRecordedQuarantinedAndACorrectKernelWins) {
  WorkerPool pool({.workers = 2});
  auto db = results::TuningDb::open(db_path(), results::TuningDb::Mode::create);
  auto beam = make_beam({.width = 2});
  TuneResult r = tune(target, *beam, pool, db, options());
  EXPECT_FALSE(r.cache_hit);
  EXPECT_EQ(r.opts, "V:fast");
  EXPECT_EQ(r.measured, 1 + 6);  // the root, then every variant

  std::map<std::string, results::FailureRow> failures;
  for (const results::FailureRow& f : db.failures()) failures[f.opts] = f;
  ASSERT_EQ(failures.size(), 3u);
  EXPECT_EQ(failures["V:segv"].status, CandidateStatus::crash);
  EXPECT_NE(failures["V:segv"].error.find("SIGSEGV"), std::string::npos) << failures["V:segv"].error;
  EXPECT_TRUE(failures["V:segv"].quarantined);
  // Endless, it passes the stop line before its timeout: stopped, which no failure is, and run
  // again by a later tuning, at the cost of one stop line.
  EXPECT_FALSE(failures.contains("V:spin"));
  std::map<std::string, CandidateStatus> status;
  for (const results::CommittedCandidate& c : db.candidates_of_run(r.run_id)) status[c.opts] = c.status;
  EXPECT_EQ(status["V:spin"], CandidateStatus::stopped);
  EXPECT_EQ(failures["V:wrong"].status, CandidateStatus::wrong);
  EXPECT_FALSE(failures["V:wrong"].quarantined);
  EXPECT_EQ(failures["V:broken"].status, CandidateStatus::compile_error);
  EXPECT_NE(failures["V:broken"].error.find("expected expression"), std::string::npos)
      << failures["V:broken"].error;

  std::vector<results::BestRow> best = db.best();
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].opts, "V:fast");
  EXPECT_EQ(db.run(r.run_id).status, results::RunStatus::completed);
  EXPECT_TRUE(db.integrity_check().empty());
}

// V:fast (1 us) and V:mid (100 us) tuned by BEAM width 2 in one worker, 5 timed runs, no
// re-timing (the search's own samples stay), with BASELINE as the target's: the number of samples
// each candidate's row kept, by opts, and the run's rows in order in ROWS.
std::map<std::string, size_t> samples_of_fast_and_mid(TuneDriver& f, std::optional<Path> baseline,
                                                      std::vector<std::string>& rows) {
  VariantSpace two{{{"fast", doubling(1)}, {"mid", doubling(100)}}};
  TuneTarget t = synthetic_target(two, f.root);
  t.kernel = f.target.kernel;
  t.baseline = baseline;
  WorkerPool pool({.workers = 1});
  auto db = results::TuningDb::open(f.db_path(), results::TuningDb::Mode::create);
  auto beam = make_beam({.width = 2});
  TuneOptions o = f.options();
  o.timing.runs = 5;
  o.top_k = 1;
  TuneResult r = tune(t, *beam, pool, db, o);
  EXPECT_EQ(r.opts, "V:fast");
  for (const results::CommittedCandidate& c : db.candidates_of_run(r.run_id)) rows.push_back(c.opts);
  std::map<std::string, size_t> samples;
  for (const results::CandidateRow& c : db.history(db.kernel(t.kernel.hash)->id)) samples[c.opts] = c.samples_us.size();
  return samples;
}

// The early-stop bar falls as a batch comes in. One worker runs the level in order: V:fast
// (1 us), then V:mid (100 us), which is under 3x the root (50 us), the bar the batch began with,
// but far over 3x V:fast: it stops after two samples (kLoneStopSample: one of a kernel this short
// could be a descheduled core).
TEST_F(TuneDriver, TheEarlyStopBarFallsWithinABatch) {
  std::vector<std::string> rows;
  std::map<std::string, size_t> samples = samples_of_fast_and_mid(*this, std::nullopt, rows);
  EXPECT_EQ(samples[""], 5u);
  EXPECT_EQ(samples["V:fast"], 5u);
  EXPECT_EQ(samples["V:mid"], 2u);
}

// The baseline (the default opts) is measured before the search, outside its budget, so the
// early-stop bar is low from the first proposal on: the root (50 us) is over 3x V:fast (1 us)
// and gets two samples, not the five it gets above, where the search must find V:fast first. BEAM
// proposing the baseline's opts gets its row's cost: V:fast is measured once.
TEST_F(TuneDriver, TheBaselineIsMeasuredFirstAndSetsTheEarlyStopBar) {
  std::vector<std::string> rows;
  std::map<std::string, size_t> samples = samples_of_fast_and_mid(*this, Path{0}, rows);
  EXPECT_EQ(rows, (std::vector<std::string>{"V:fast", "", "V:mid"}));
  EXPECT_EQ(samples["V:fast"], 5u);
  EXPECT_EQ(samples[""], 2u);
  EXPECT_EQ(samples["V:mid"], 2u);
}

// Two opts that render the same source are one kernel: the second is not run, is not recorded
// (the first's row holds the measurement) and costs +inf to the strategy, so that it takes no
// beam slot; a resumed run knows the committed candidates' sources too.
TEST_F(TuneDriver, AVariantThatRendersAnotherOnesSourceIsNotRunAgain) {
  VariantSpace twins{{{"fast", doubling(1)}, {"again", doubling(1)}, {"slower", doubling(200)}}};
  TuneTarget t = synthetic_target(twins, root);
  t.kernel = target.kernel;
  WorkerPool pool({.workers = 1});
  auto db = results::TuningDb::open(db_path(), results::TuningDb::Mode::create);
  auto beam = make_beam({.width = 2});
  TuneResult r = tune(t, *beam, pool, db, options());
  EXPECT_EQ(r.opts, "V:fast");
  EXPECT_EQ(r.measured, 3);  // the root, V:fast and V:slower
  EXPECT_EQ(r.skipped_duplicate, 1);
  std::set<std::string> recorded;
  for (const results::CommittedCandidate& c : db.candidates_of_run(r.run_id)) recorded.insert(c.opts);
  EXPECT_EQ(recorded, (std::set<std::string>{"", "V:fast", "V:slower"}));

  // Resumed after V:fast was committed, V:again is still known for the twin it is.
  results::raw_connection(db).prepare("DELETE FROM candidates WHERE opts = 'V:slower'").run();
  leave_running(db, r.run_id);
  TuneOptions resume = options();
  resume.resume_run = r.run_id;
  TuneResult again = tune(t, *beam, pool, db, resume);
  EXPECT_EQ(again.reused, 2);
  EXPECT_EQ(again.measured, 1);  // V:slower
  EXPECT_EQ(again.skipped_duplicate, 1);
}

// A proposal that renders the baseline's source is measured under its own opts: the strategy never
// had the baseline's cost, and a replay looks each proposal up by its opts.
TEST_F(TuneDriver, AProposalThatRendersTheBaselinesSourceIsMeasuredUnderItsOwnOpts) {
  VariantSpace twins{{{"fast", doubling(1)}, {"slower", doubling(200)}, {"default", doubling(200)}}};
  TuneTarget t = synthetic_target(twins, root);
  t.kernel = target.kernel;
  t.baseline = Path{2};  // V:default, V:slower's source
  WorkerPool pool({.workers = 1});
  auto db = results::TuningDb::open(db_path(), results::TuningDb::Mode::create);
  auto beam = make_beam({.width = 1});
  TuneOptions o = options();
  o.budget.candidates = 3;  // the root, V:fast, V:slower; V:default only as the baseline
  TuneResult r = tune(t, *beam, pool, db, o);
  EXPECT_EQ(r.opts, "V:fast");
  EXPECT_EQ(r.baseline_opts, "V:default");
  ASSERT_TRUE(r.baseline_s.has_value());
  EXPECT_GT(*r.baseline_s, r.median_s);
  EXPECT_EQ(r.measured, 4);
  EXPECT_EQ(r.skipped_duplicate, 0);
  std::set<std::string> recorded;
  for (const results::CommittedCandidate& c : db.candidates_of_run(r.run_id)) recorded.insert(c.opts);
  EXPECT_EQ(recorded, (std::set<std::string>{"V:default", "", "V:fast", "V:slower"}));
  ASSERT_TRUE(r.confidence.has_value());
  EXPECT_EQ(r.confidence->incumbent_opts, "V:default");
}

TEST_F(TuneDriver, TheSecondTuningIsACacheHitAndRetuneSkipsTheQuarantined) {
  WorkerPool pool({.workers = 2});
  auto db = results::TuningDb::open(db_path(), results::TuningDb::Mode::create);
  auto beam = make_beam({.width = 2});
  tune(target, *beam, pool, db, options());

  TuneResult again = tune(target, *beam, pool, db, options());
  EXPECT_TRUE(again.cache_hit);
  EXPECT_EQ(again.opts, "V:fast");
  EXPECT_GT(again.median_s, 0);
  EXPECT_EQ(db.runs().size(), 1u);  // no new run

  TuneOptions retune = options();
  retune.retune = true;
  TuneResult fresh = tune(target, *beam, pool, db, retune);
  EXPECT_FALSE(fresh.cache_hit);
  EXPECT_EQ(fresh.skipped_quarantined, 1);  // the segfault did not run again; the stopped loop did
  EXPECT_EQ(fresh.measured, 1 + 5);
  for (const results::CommittedCandidate& c : db.candidates_of_run(fresh.run_id)) EXPECT_NE(c.opts, "V:segv");
}

TEST_F(TuneDriver, AResumedRunDoesNotRedoCommittedCandidates) {
  WorkerPool pool({.workers = 2});
  auto db = results::TuningDb::open(db_path(), results::TuningDb::Mode::create);
  auto beam = make_beam({.width = 2});
  TuneOptions first = options();
  first.budget.candidates = 3;
  TuneResult cut = tune(target, *beam, pool, db, first);
  ASSERT_EQ(db.candidates_of_run(cut.run_id).size(), 3u);
  leave_running(db, cut.run_id);

  TuneOptions resume = options();
  resume.resume_run = cut.run_id;
  TuneResult r = tune(target, *beam, pool, db, resume);
  EXPECT_EQ(r.run_id, cut.run_id);
  EXPECT_EQ(r.reused, 3);
  EXPECT_EQ(r.measured, 7 - 3);
  EXPECT_EQ(r.opts, "V:fast");
  std::map<std::string, int> seen;
  for (const results::CommittedCandidate& c : db.candidates_of_run(cut.run_id)) seen[c.opts]++;
  EXPECT_EQ(seen.size(), 7u);
  for (const auto& [opts, n] : seen) EXPECT_EQ(n, 1) << opts;
  EXPECT_EQ(db.run(cut.run_id).status, results::RunStatus::completed);
}

TEST_F(TuneDriver, ARunKilledWithSIGKILLResumesWithEveryCommittedCandidateOnce) {
  space.variants = slow_variants(12);
  results::TuningDb::open(db_path(), results::TuningDb::Mode::create);  // the schema, before the fork
  auto beam = make_beam({.width = 2});
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The tuning process: its own pool and connection; killed before it can finish.
    WorkerPool pool({.workers = 2});
    auto db = results::TuningDb::open(db_path(), results::TuningDb::Mode::existing);
    tune(target, *beam, pool, db, options());
    ::_exit(0);
  }
  auto db = results::TuningDb::open(db_path(), results::TuningDb::Mode::existing);
  auto committed = [&] { return results::raw_connection(db).query_int("SELECT count(*) FROM candidates"); };
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (committed() < 3 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the tuning process finished before it could be killed";
  const int64_t before = committed();
  ASSERT_GE(before, 3);
  ASSERT_LT(before, 13);
  std::vector<results::Run> runs = db.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, results::RunStatus::running);  // nobody could mark it

  WorkerPool pool({.workers = 2});
  TuneOptions resume = options();
  resume.resume_run = runs[0].id;
  TuneResult r = tune(target, *beam, pool, db, resume);
  EXPECT_EQ(r.reused, before);
  EXPECT_EQ(r.measured, 13 - before);
  std::map<std::string, int> seen;
  for (const results::CommittedCandidate& c : db.candidates_of_run(runs[0].id)) seen[c.opts]++;
  EXPECT_EQ(seen.size(), 13u);
  for (const auto& [opts, n] : seen) EXPECT_EQ(n, 1) << opts;
  EXPECT_EQ(db.run(runs[0].id).status, results::RunStatus::completed);
  EXPECT_TRUE(db.integrity_check().empty());
}

}  // namespace
}  // namespace tunebed::search
