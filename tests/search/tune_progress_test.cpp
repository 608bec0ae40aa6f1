// tune()'s side of a batch: the events it reports, stopping at a candidate boundary and resuming,
// the baseline timed beside the winner, and the stored best agreeing with the winner
// tune() declares. Synthetic kernels: a root and one level of hand-written variants.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "search/tune.hpp"
#include "tests/search/synthetic_target.hpp"

namespace tunebed::search {
namespace {

using namespace test;

// Launches are priced by repeat count (repeat_seconds), so rankings never follow the machine's load.
struct TuneProgress : ::testing::Test {
  ScopedLaunchPrice price{repeat_seconds};
  std::filesystem::path dir;
  VariantSpace space;
  std::string root = doubling(50);
  TuneTarget target;
  std::vector<TuneEvent> events;
  std::optional<TuneResult> done;  // kernel_done's result, copied: the event points into tune()

  void SetUp() override {
    dir = std::filesystem::temp_directory_path() / ("tunebed_tune_progress_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    ::setenv("TUNEBED_CACHE_DIR", (dir / "cache").c_str(), 1);
    space.variants = {{"fast", doubling(1)},
                      {"medium", doubling(20)},
                      {"wrong", "for (int i = 0; i < 256; i++) out[i] = in[i];"}};
    target = synthetic_target(space, root);
    target.kernel = {
        .hash = "progress0001", .ast = "SINK(progress)", .shape = "256 f32", .source = "tune_progress_test"};
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  TuneOptions options() {
    TuneOptions o;
    o.timing = {.warmup = 1, .runs = 3, .early_stop_s = std::nullopt, .timeout_s = 2};
    o.decision = {.min_rounds = 5, .max_rounds = 5};
    o.on_event = [this](const TuneEvent& e) {
      events.push_back(e);
      if (e.result) done = *e.result;
    };
    return o;
  }
  results::TuningDb open_db() {
    return results::TuningDb::open((dir / "tuning.db").string(), results::TuningDb::Mode::create);
  }
  std::vector<const TuneEvent*> of_kind(TuneEvent::Kind kind) const {
    std::vector<const TuneEvent*> out;
    for (const TuneEvent& e : events)
      if (e.kind == kind) out.push_back(&e);
    return out;
  }
};

TEST_F(TuneProgress, EventsFrameTheKernelCountEveryCandidateAndAnnounceEachNewBest) {
  WorkerPool pool({.workers = 2});
  auto db = open_db();
  auto beam = make_beam({.width = 2});
  TuneResult r = tune(target, *beam, pool, db, options());

  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events.front().kind, TuneEvent::Kind::kernel_start);
  EXPECT_EQ(events.back().kind, TuneEvent::Kind::kernel_done);
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->opts, r.opts);
  std::vector<const TuneEvent*> tried = of_kind(TuneEvent::Kind::candidate);
  ASSERT_EQ(static_cast<int64_t>(tried.size()), r.measured);
  std::map<std::string, int> statuses;
  for (size_t i = 0; i < tried.size(); i++) {
    EXPECT_EQ(tried[i]->tried, static_cast<int64_t>(i + 1));
    statuses[std::string(results::to_string(tried[i]->status))]++;
  }
  EXPECT_EQ(statuses["wrong"], 1);
  EXPECT_EQ(statuses["ok"], 3);  // the root, fast and medium
  // A new_best follows its candidate, and each is faster than the one before.
  std::optional<double> best;
  for (size_t i = 0; i < events.size(); i++) {
    if (events[i].kind != TuneEvent::Kind::new_best) continue;
    ASSERT_GT(i, 0u);
    EXPECT_EQ(events[i - 1].kind, TuneEvent::Kind::candidate);
    EXPECT_EQ(events[i - 1].opts, events[i].opts);
    EXPECT_EQ(events[i].median_s, events[i].best_s);
    if (best) EXPECT_LT(*events[i].median_s, *best);
    best = events[i].median_s;
  }
  EXPECT_TRUE(best.has_value());
}

TEST_F(TuneProgress, AStopEndsTheSearchAtTheNextCandidateAndTheResumedRunRedoesNone) {
  for (int i = 0; i < 6; i++) space.variants.push_back({"slow" + std::to_string(i), doubling(20000 + i)});
  auto db = open_db();
  auto beam = make_beam({.width = 2});
  WorkerPool pool({.workers = 1});  // one candidate in flight: the stop lands exactly
  std::atomic<bool> stop{false};
  TuneOptions first = options();
  first.stop = &stop;
  first.on_event = [&](const TuneEvent& e) {
    if (e.kind == TuneEvent::Kind::candidate && e.tried == 3) stop = true;
  };
  TuneResult cut = tune(target, *beam, pool, db, first);
  EXPECT_TRUE(cut.interrupted);
  EXPECT_EQ(cut.measured, 3);
  EXPECT_EQ(db.candidates_of_run(cut.run_id).size(), 3u);
  EXPECT_EQ(db.run(cut.run_id).status, results::RunStatus::interrupted);

  TuneOptions resume = options();
  resume.resume_run = cut.run_id;
  TuneResult r = tune(target, *beam, pool, db, resume);
  EXPECT_FALSE(r.interrupted);
  EXPECT_EQ(r.reused, 3);
  EXPECT_EQ(r.measured, 1 + 9 - 3);  // the root and nine variants, less the three committed
  std::map<std::string, int> seen;
  for (const results::CommittedCandidate& c : db.candidates_of_run(cut.run_id)) seen[c.opts]++;
  EXPECT_EQ(seen.size(), 10u);
  for (const auto& [opts, n] : seen) EXPECT_EQ(n, 1) << opts;
  EXPECT_EQ(db.run(cut.run_id).status, results::RunStatus::completed);
}

TEST_F(TuneProgress, TheBaselineIsMeasuredOutsideTheBudgetAndTheWinnerIsNeverSlower) {
  target.baseline = Path{1};  // "medium"
  auto db = open_db();
  auto beam = make_beam({.width = 2});
  WorkerPool pool({.workers = 1});
  TuneOptions o = options();
  o.budget.candidates = 2;  // the root and "fast": the search never reaches "medium"
  TuneResult r = tune(target, *beam, pool, db, o);
  EXPECT_EQ(r.measured, 3);
  EXPECT_EQ(r.baseline_opts, "V:medium");
  ASSERT_TRUE(r.baseline_s.has_value());
  EXPECT_LE(r.median_s, *r.baseline_s);
  std::map<std::string, int> seen;
  for (const results::CommittedCandidate& c : db.candidates_of_run(r.run_id)) seen[c.opts]++;
  EXPECT_EQ(seen["V:medium"], 1);
}

// The search sees "flaky" as the fastest; by the time the top-k are re-timed it has become the
// slowest (a marker file switches it, and its price: 1 us, then 3000 us), so the re-timing
// declares another winner. The database's best must be that winner with its re-timed median, not
// the lowest median the search stored.
TEST_F(TuneProgress, TheStoredBestIsTheDeclaredWinnerWithItsRetimedMedian) {
  const std::string marker = (dir / "slow-now").string();
  space.variants = {{"flaky", "if (access(\"" + marker + "\", F_OK) == 0) { " + doubling(3000) +
                                  " } else { " + doubling(1) + " }"},
                    {"steady", doubling(100)}};
  root = doubling(400);  // so that the search ranks flaky < steady < root
  set_launch_price([marker](const std::string& source) {
    if (source.find("access(") == std::string::npos) return repeat_seconds(source);
    return (std::filesystem::exists(marker) ? 3000 : 1) * 1e-6;
  });
  auto db = open_db();
  auto beam = make_beam({.width = 2});
  WorkerPool pool({.workers = 1});
  TuneOptions o = options();
  o.on_event = [&](const TuneEvent& e) {
    if (e.kind == TuneEvent::Kind::candidate && e.tried == 3) std::ofstream(marker) << "1";
  };
  TuneResult r = tune(target, *beam, pool, db, o);
  std::map<std::string, double> stored;
  for (const results::CommittedCandidate& c : db.candidates_of_run(r.run_id)) stored[c.opts] = *c.median_us;
  ASSERT_EQ(stored.size(), 3u);
  EXPECT_EQ(r.opts, "V:steady");

  std::vector<results::BestRow> best = db.best();
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].opts, r.opts);
  EXPECT_DOUBLE_EQ(best[0].median_us, r.median_s * 1e6);
  EXPECT_DOUBLE_EQ(stored["V:steady"], r.median_s * 1e6);  // the re-timed median replaced the search's
  EXPECT_GT(stored["V:flaky"], stored["V:steady"]);
  // A second tuning serves the declared winner from the cache.
  TuneResult again = tune(target, *beam, pool, db, options());
  EXPECT_TRUE(again.cache_hit);
  EXPECT_EQ(again.opts, r.opts);
}

}  // namespace
}  // namespace tunebed::search
