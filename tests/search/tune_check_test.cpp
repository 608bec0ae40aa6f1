// tune()'s independent check (search/tune.hpp, step 1) and the re-verification of a stored winner:
// a kernel whose unoptimized form is wrong is not tuned and says why, and a winner that has gone
// wrong is demoted with its reason and the kernel tuned again. Planted in synthetic kernels
// (synthetic_target.hpp), whose oracle says every correct kernel doubles its input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "search/strategy.hpp"
#include "search/tune.hpp"
#include "tests/search/synthetic_target.hpp"

namespace tunebed::search::test {
namespace {

struct TuneCheck : ::testing::Test {
  std::filesystem::path dir;
  ScopedLaunchPrice price{repeat_seconds};  // V:a (1 us) wins over V:b (2 us) and the root (50 us)
  VariantSpace space{{{"a", doubling(1)}, {"b", doubling(2)}}};
  std::string root = doubling(50);
  TuneTarget target;

  void SetUp() override {
    dir = std::filesystem::temp_directory_path() / ("tunebed_tune_check_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    ::setenv("TUNEBED_CACHE_DIR", (dir / "cache").c_str(), 1);
    target = synthetic_target(space, root);
    target.kernel = {
        .hash = "synthetic0002", .ast = "SINK(synthetic)", .shape = "256 f32", .source = "check"};
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  TuneOptions options() const {
    TuneOptions o;
    o.timing = {.warmup = 0, .runs = 1, .early_stop_s = std::nullopt, .timeout_s = 5};
    o.decision = {.min_rounds = 1, .max_rounds = 1};
    return o;
  }
  // One tune() into this test's database.
  TuneResult tune_once() {
    if (!db)
      db.emplace(results::TuningDb::open((dir / "tuning.db").string(), results::TuningDb::Mode::create));
    return tune(target, *beam, pool, *db, options());
  }
  std::optional<results::KernelCheck> check() {
    return db->kernel_check(db->resolve_kernel("synthetic0002"), 1);
  }
  std::optional<results::BestEntry> stored() {
    return db->cached_best(db->resolve_kernel("synthetic0002"), 1, target.action_space_version);
  }

  WorkerPool pool{{.workers = 1}};
  std::unique_ptr<Strategy> beam = make_beam({.width = 2});
  std::optional<results::TuningDb> db;
};

TEST_F(TuneCheck, TheRootIsCheckedOnceAndTheOutcomeRecordedOnTheKernel) {
  const TuneResult r = tune_once();
  EXPECT_EQ(r.not_tuned, "");
  ASSERT_TRUE(check().has_value());
  EXPECT_EQ(check()->status, "ok");
  EXPECT_EQ(check()->oracle, "ast-interpreter");
  EXPECT_EQ(check()->max_error, 0.0);  // doubling is exact in float32
}

TEST_F(TuneCheck, AKernelWhoseRootIsWrongIsNotTunedAndSaysWhy) {
  root = "for (int i = 0; i < 256; i++) out[i] = in[i] * 2.0f + (i == 77 ? 1e-3f : 0.0f);";
  const TuneResult r = tune_once();
  EXPECT_NE(r.not_tuned.find("the unoptimized kernel disagrees with the ast-interpreter: element 77"),
            std::string::npos)
      << r.not_tuned;
  EXPECT_EQ(r.run_id, 0);
  EXPECT_TRUE(db->runs().empty());  // no search began
  ASSERT_TRUE(check().has_value());
  EXPECT_EQ(check()->status, "wrong");
  EXPECT_EQ(check()->message, r.not_tuned);
}

TEST_F(TuneCheck, AnOracleASecondOneDisagreesWithStopsTheKernel) {
  const std::string why = "the Eigen reference disagrees with the scheduled kernels: element 3";
  target.cross_check = [why](auto&, auto&) { return std::optional<std::string>(why); };
  EXPECT_EQ(tune_once().not_tuned, why);
  ASSERT_TRUE(check().has_value());
  EXPECT_EQ(check()->oracle, "ast-interpreter+eigen");
  EXPECT_EQ(check()->status, "wrong");
  EXPECT_EQ(check()->message, why);
}

TEST_F(TuneCheck, TheCrossCheckRunsOnAnotherThreadAndIsNamedWhenItAnswers) {
  std::vector<std::thread::id> ran_on;  // written by the cross check's thread, read after tune()
  target.cross_check = [&ran_on](auto&, auto&) {
    ran_on.push_back(std::this_thread::get_id());
    return std::optional<std::string>("");
  };
  EXPECT_EQ(tune_once().not_tuned, "");
  ASSERT_EQ(ran_on.size(), 1u);
  EXPECT_NE(ran_on[0], std::this_thread::get_id());  // beside the oracle's own run, not after it
  EXPECT_EQ(check()->oracle, "ast-interpreter+eigen");
  EXPECT_EQ(check()->status, "ok");
}

// The worker runs the root while the oracle computes. The root's launch, in the worker, leaves a
// mark (its price function runs there); the oracle waits up to 30 s for it. Run one after the
// other, the oracle would wait in vain and the root's launch would come after it.
TEST_F(TuneCheck, TheRootRunsInAWorkerWhileTheOracleComputes) {
  const std::filesystem::path mark = dir / "root-launched";
  ScopedLaunchPrice marking{[mark](const std::string& source) {
    if (source.find("r < 50;") != std::string::npos) std::ofstream(mark).put('1');
    return repeat_seconds(source);
  }};
  WorkerPool marked_pool{{.workers = 1}};  // forked after the price, so its worker has it
  const auto expect = target.expect;
  bool saw_mark = false;
  target.expect = [&](const std::vector<HostBuffer>& buffers) {
    for (int i = 0; i < 3000 && !saw_mark; i++) {
      saw_mark = std::filesystem::exists(mark);
      if (!saw_mark) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return expect(buffers);
  };
  db.emplace(results::TuningDb::open((dir / "tuning.db").string(), results::TuningDb::Mode::create));
  EXPECT_EQ(tune(target, *beam, marked_pool, *db, options()).not_tuned, "");
  EXPECT_TRUE(saw_mark);
  EXPECT_EQ(check()->status, "ok");
}

// A sampled oracle (a large kernel's: every k-th output) knows nothing of the others, but the
// worker's poison still shows one the candidate never wrote. Here the oracle samples the even
// elements and V:skips, the fastest, leaves odd element 77 alone: it is wrong, not the winner.
TEST_F(TuneCheck, ACandidateThatNeverWritesAnUnsampledElementIsWrong) {
  space.variants.push_back({"skips", "for (int i = 0; i < 256; i++) if (i != 77) out[i] = in[i] * 2.0f;"});
  const auto expect = target.expect;
  target.expect = [expect](const std::vector<HostBuffer>& buffers) {
    Expected e = expect(buffers);
    for (size_t i = 1; i < e.bound.size(); i += 2) e.bound[i] = NAN;
    return e;
  };
  const TuneResult r = tune_once();
  EXPECT_EQ(r.opts, "V:a");
  bool seen = false;
  for (const results::CandidateRow& c : db->history(db->resolve_kernel("synthetic0002")))
    if (c.opts == "V:skips") {
      seen = true;
      EXPECT_EQ(c.status, results::CandidateStatus::wrong);
      EXPECT_NE(c.error.find("element 77 was never written"), std::string::npos) << c.error;
    }
  EXPECT_TRUE(seen);
}

TEST_F(TuneCheck, ACrossCheckThatCannotTakeTheKernelLeavesTheOracleAlone) {
  target.cross_check = [](auto&, auto&) { return std::optional<std::string>(); };
  EXPECT_EQ(tune_once().not_tuned, "");
  EXPECT_EQ(check()->oracle, "ast-interpreter");
  EXPECT_EQ(check()->status, "ok");
}

TEST_F(TuneCheck, AStoredWinnerThatHasGoneWrongIsDemotedWithItsReasonAndTheKernelTunedAgain) {
  ASSERT_EQ(tune_once().opts, "V:a");
  const std::optional<results::BestEntry> before = stored();
  ASSERT_TRUE(before.has_value());
  // The winner now computes something else (a compiler change, say): every variant goes wrong.
  for (Variant& v : space.variants) v.body = "for (int i = 0; i < 256; i++) out[i] = in[i] * 3.0f;";
  const TuneResult again = tune_once();
  EXPECT_FALSE(again.cache_hit);
  EXPECT_NE(again.demoted.find("re-verification: wrong: wrong output: element 0"), std::string::npos)
      << again.demoted;
  EXPECT_EQ(db->demotion_reason(before->candidate_id), again.demoted);
  EXPECT_EQ(again.opts, "");  // the root is the only correct state left, and it wins
  ASSERT_TRUE(stored().has_value());
  EXPECT_NE(stored()->candidate_id, before->candidate_id);
}

}  // namespace
}  // namespace tunebed::search::test
