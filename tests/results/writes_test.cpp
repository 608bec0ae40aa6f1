// Writing into a tuning database: devices and kernels by identity, the run lifecycle, batched
// candidates, the best-candidate and quarantine invariants, the cache and resume.
#include <chrono>
#include <regex>
#include <thread>

#include "support.hpp"

namespace tunebed::results::testing {
namespace {

class WritesTest : public DbTest {
 protected:
  void SetUp() override {
    DbTest::SetUp();
    db_.emplace(TuningDb::open(file("t.db"), TuningDb::Mode::create));
    device_ = db_->upsert_device(cpu());
    kernel_ = db_->upsert_kernel(kernel("matmul"));
    run_ = db_->begin_run(spec());
  }
  // Rows visible to a separate connection, that is, committed.
  int64_t committed_rows() {
    TuningDb other = TuningDb::open(file("t.db"), TuningDb::Mode::existing);
    return count(other, "SELECT count(*) FROM candidates");
  }
  std::optional<TuningDb> db_;
  int64_t device_ = 0, kernel_ = 0;
  results::Run run_;
};

TEST_F(WritesTest, DevicesAndKernelsAreIdentifiedByFingerprintAndHash) {
  EXPECT_EQ(db_->upsert_device(cpu()), device_);
  Device newer_compiler = cpu();
  newer_compiler.compiler_version = "17.0.0";
  EXPECT_NE(db_->upsert_device(newer_compiler), device_);
  EXPECT_EQ(db_->upsert_kernel(kernel("matmul")), kernel_);
  Kernel collision = kernel("matmul");
  collision.ast = "SINK(other)";
  EXPECT_THROW(db_->upsert_kernel(collision), DbError);
  EXPECT_EQ(count(*db_, "SELECT count(*) FROM kernels"), 1);
}

TEST_F(WritesTest, RunLifecycle) {
  EXPECT_TRUE(std::regex_match(run_.uuid, std::regex("[0-9a-f]{32}")));
  EXPECT_EQ(run_.status, RunStatus::running);
  EXPECT_EQ(run_.host, "testhost");
  EXPECT_EQ(run_.params, R"({"width":4})");
  EXPECT_TRUE(run_.ended_at.empty());
  db_->mark_interrupted(run_.id);
  EXPECT_EQ(db_->run(run_.id).status, RunStatus::interrupted);
  EXPECT_EQ(db_->resume_run(run_.id).status, RunStatus::running);
  db_->finish_run(run_.id, RunStatus::completed);
  results::Run done = db_->run(run_.id);
  EXPECT_EQ(done.status, RunStatus::completed);
  EXPECT_FALSE(done.ended_at.empty());
  db_->mark_interrupted(run_.id);  // too late: a completed run stays completed
  EXPECT_EQ(db_->run(run_.id).status, RunStatus::completed);
  EXPECT_THROW(db_->resume_run(run_.id), DbError);
  EXPECT_THROW(db_->finish_run(run_.id, RunStatus::running), DbError);
  EXPECT_THROW(db_->run(9999), DbError);
  EXPECT_NE(db_->begin_run(spec()).uuid, run_.uuid);
}

TEST_F(WritesTest, BatchIsCommittedWhenFull) {
  CandidateWriter w(*db_, run_.id, {.batch_rows = 10, .max_delay = std::chrono::hours(1)});
  for (int i = 0; i < 9; ++i) w.add(ok(kernel_, device_, "o" + std::to_string(i), 10 + i));
  EXPECT_EQ(committed_rows(), 0);
  EXPECT_EQ(w.committed(), 0);
  w.add(ok(kernel_, device_, "o9", 19));
  EXPECT_EQ(committed_rows(), 10);
  EXPECT_EQ(w.committed(), 10);
  w.add(ok(kernel_, device_, "o10", 20));
  w.flush();
  EXPECT_EQ(committed_rows(), 11);
}

TEST_F(WritesTest, QuietQueueIsCommittedAfterMaxDelay) {
  CandidateWriter w(*db_, run_.id, {.batch_rows = 1000, .max_delay = std::chrono::milliseconds(50)});
  for (int i = 0; i < 3; ++i) w.add(ok(kernel_, device_, "o" + std::to_string(i), 10 + i));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (committed_rows() < 3 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(committed_rows(), 3) << "the background commit did not happen";
  EXPECT_EQ(w.committed(), 3);
}

TEST_F(WritesTest, DestructionCommitsTheQueue) {
  {
    CandidateWriter w(*db_, run_.id, {.batch_rows = 1000, .max_delay = std::chrono::hours(1)});
    for (int i = 0; i < 5; ++i) w.add(ok(kernel_, device_, "o" + std::to_string(i), 10 + i));
  }
  EXPECT_EQ(committed_rows(), 5);
}

TEST_F(WritesTest, InvalidCandidateIsRejectedAtAddAndTheBatchGoesOn) {
  CandidateWriter w(*db_, run_.id, {.batch_rows = 2});
  EXPECT_THROW(w.add(failed(kernel_, device_, "no-median", CandidateStatus::ok)), DbError);
  EXPECT_THROW(w.add(ok(0, device_, "no-kernel", 1.0)), DbError);
  EXPECT_EQ(w.add(ok(kernel_, device_, "a", 1.0)), 1);
  EXPECT_EQ(w.add(ok(kernel_, device_, "b", 2.0)), 2);
  EXPECT_EQ(committed_rows(), 2);
  w.close();
  EXPECT_THROW(w.add(ok(kernel_, device_, "c", 3.0)), DbError);
}

TEST_F(WritesTest, FailedBackgroundCommitIsReportedByTheNextAddAndKeepsItsRows) {
  CandidateWriter w(*db_, run_.id, {.batch_rows = 1000, .max_delay = std::chrono::milliseconds(10)});
  w.add(ok(kernel_ + 100, device_, "unknown-kernel", 1.0));  // violates a foreign key at commit
  std::string error;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (error.empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    try {
      w.add(ok(kernel_, device_, "fine", 2.0));
    } catch (const SqliteError& e) {
      error = e.what();
    }
  }
  EXPECT_NE(error.find("FOREIGN KEY constraint failed"), std::string::npos) << error;
  EXPECT_NE(error.find("INSERT INTO candidates"), std::string::npos) << "the error names its SQL: " << error;
  EXPECT_EQ(committed_rows(), 0) << "the batch is all or nothing";
  EXPECT_THROW(w.close(), SqliteError) << "the failed rows are still queued";
}

TEST_F(WritesTest, BestIsReplacedOnlyByAStrictlyFasterOkCandidate) {
  auto best_opts = [&] { return db_->cached_best(kernel_, device_, "as1").value().opts; };
  CandidateWriter w(*db_, run_.id, {.batch_rows = 1});
  EXPECT_FALSE(db_->cached_best(kernel_, device_, "as1"));
  w.add(ok(kernel_, device_, "first", 100));
  EXPECT_EQ(best_opts(), "first");
  w.add(ok(kernel_, device_, "slower", 150));
  EXPECT_EQ(best_opts(), "first");
  w.add(failed(kernel_, device_, "fast-but-wrong", CandidateStatus::wrong, 1.0));
  w.add(failed(kernel_, device_, "crashed", CandidateStatus::crash, 0.5));
  w.add(failed(kernel_, device_, "hung", CandidateStatus::timeout));
  EXPECT_EQ(best_opts(), "first");
  w.add(ok(kernel_, device_, "faster", 80));
  EXPECT_EQ(best_opts(), "faster");
  w.add(ok(kernel_, device_, "tie", 80));
  EXPECT_EQ(best_opts(), "faster") << "a tie keeps the earlier winner";
  EXPECT_DOUBLE_EQ(db_->cached_best(kernel_, device_, "as1")->median_us, 80);
  EXPECT_EQ(db_->cached_best(kernel_, device_, "as1")->run_uuid, run_.uuid);
}

TEST_F(WritesTest, CacheIsKeyedByDeviceAndActionSpaceVersion) {
  int64_t gpu = db_->upsert_device(cpu("gpu0"));
  results::Run run2 = db_->begin_run(spec("as2"));
  {
    CandidateWriter w(*db_, run_.id, {.batch_rows = 1});
    w.add(ok(kernel_, device_, "cpu-as1", 50));
  }
  EXPECT_TRUE(db_->cached_best(kernel_, device_, "as1"));
  EXPECT_FALSE(db_->cached_best(kernel_, gpu, "as1"));
  EXPECT_FALSE(db_->cached_best(kernel_, device_, "as2"));
  {
    CandidateWriter w(*db_, run2.id, {.batch_rows = 1});
    w.add(ok(kernel_, device_, "cpu-as2", 70));  // slower, but the only winner under as2
  }
  EXPECT_EQ(db_->cached_best(kernel_, device_, "as2")->opts, "cpu-as2");
  EXPECT_EQ(db_->cached_best(kernel_, device_, "as1")->opts, "cpu-as1");
}

TEST_F(WritesTest, AWinnerIsDeclaredWithItsConfidence) {
  {
    CandidateWriter w(*db_, run_.id, {.batch_rows = 1});
    w.add(ok(kernel_, device_, "a", 50));
    w.add(ok(kernel_, device_, "b", 52));
  }
  const Confidence c{.challenger_opts = "b",
                     .incumbent_opts = "b",
                     .kept_incumbent = false,
                     .p_value = 0.001,
                     .speedup = 1.04,
                     .speedup_low = 1.01,
                     .speedup_high = 1.07,
                     .rounds = 25,
                     .level = 0.007};
  db_->declare_winner(run_.id, 1, {}, c);
  const std::optional<BestEntry> best = db_->cached_best(kernel_, device_, "as1");
  ASSERT_TRUE(best);
  EXPECT_EQ(best->opts, "a");
  const std::optional<Confidence> back = db_->confidence(best->candidate_id);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->challenger_opts, "b");
  EXPECT_EQ(back->incumbent_opts, "b");
  EXPECT_FALSE(back->kept_incumbent);
  EXPECT_EQ(back->p_value, 0.001);
  EXPECT_EQ(back->speedup_low, 1.01);
  EXPECT_EQ(back->speedup_high, 1.07);
  EXPECT_EQ(back->rounds, 25);
  EXPECT_EQ(back->level, 0.007);
  EXPECT_FALSE(db_->confidence(best->candidate_id + 1));  // b was not declared
}

// stored_winner: what `tunebed run --db` and the tuned backend look up, by hash and fingerprint.
TEST_F(WritesTest, StoredWinnerIsFoundByHashFingerprintAndVersionAndNamesOtherVersions) {
  results::Run run2 = db_->begin_run(spec("as2"));
  {
    CandidateWriter w(*db_, run_.id, {.batch_rows = 1});
    w.add(ok(kernel_, device_, "cpu-as1", 50));
  }
  {
    CandidateWriter w(*db_, run2.id, {.batch_rows = 1});
    w.add(ok(kernel_, device_, "cpu-as2", 70));
  }
  const StoredWinner as1 = db_->stored_winner("h-matmul", cpu(), "as1");
  ASSERT_TRUE(as1.winner);
  EXPECT_EQ(as1.winner->opts, "cpu-as1");
  EXPECT_EQ(as1.winner->median_us, 50);
  EXPECT_EQ(as1.other_versions, std::vector<std::string>{"as2"});
  const StoredWinner as3 = db_->stored_winner("h-matmul", cpu(), "as3");  // stale: only as1 and as2
  EXPECT_FALSE(as3.winner);
  EXPECT_EQ(as3.other_versions, (std::vector<std::string>{"as1", "as2"}));
  Device other_compiler = cpu();
  other_compiler.compiler_version = "17.0.0";  // the same name, another fingerprint
  EXPECT_FALSE(db_->stored_winner("h-matmul", other_compiler, "as1").winner);
  EXPECT_TRUE(db_->stored_winner("h-matmul", other_compiler, "as1").other_versions.empty());
  EXPECT_FALSE(db_->stored_winner("h-unknown", cpu(), "as1").winner);
}

TEST_F(WritesTest, CrashesAndTimeoutsAreQuarantinedForTheirKernelAndDevice) {
  int64_t other_kernel = db_->upsert_kernel(kernel("conv"));
  int64_t gpu = db_->upsert_device(cpu("gpu0"));
  {
    CandidateWriter w(*db_, run_.id);
    w.add(failed(kernel_, device_, "segv", CandidateStatus::crash));
    w.add(failed(kernel_, device_, "loop", CandidateStatus::timeout));
    w.add(failed(kernel_, device_, "bad-src", CandidateStatus::compile_error));
    w.add(failed(kernel_, device_, "off-by-one", CandidateStatus::wrong));
  }
  EXPECT_TRUE(db_->is_quarantined(kernel_, device_, "segv"));
  EXPECT_TRUE(db_->is_quarantined(kernel_, device_, "loop"));
  EXPECT_FALSE(db_->is_quarantined(kernel_, device_, "bad-src"));
  EXPECT_FALSE(db_->is_quarantined(kernel_, device_, "off-by-one"));
  EXPECT_FALSE(db_->is_quarantined(other_kernel, device_, "segv"));
  EXPECT_FALSE(db_->is_quarantined(kernel_, gpu, "segv"));
  db_->quarantine(kernel_, gpu, "segv", "crash seen elsewhere");
  EXPECT_TRUE(db_->is_quarantined(kernel_, gpu, "segv"));
  EXPECT_EQ(db_->quarantined_opts(kernel_, device_), (std::vector<std::string>{"loop", "segv"}));
}

TEST_F(WritesTest, ResumeSeesCommittedCandidatesAndContinuesTheSequence) {
  {
    CandidateWriter w(*db_, run_.id, {.batch_rows = 2, .max_delay = std::chrono::hours(1)});
    w.add(ok(kernel_, device_, "a", 30));
    w.add(failed(kernel_, device_, "b", CandidateStatus::crash));
    w.add(ok(kernel_, device_, "c", 20));
  }
  db_->mark_interrupted(run_.id);
  db_->resume_run(run_.id);
  std::vector<CommittedCandidate> done = db_->candidates_of_run(run_.id);
  ASSERT_EQ(done.size(), 3u);
  EXPECT_EQ(done[0].opts, "a");
  EXPECT_EQ(done[1].status, CandidateStatus::crash);
  EXPECT_EQ(done[2].seq, 3);
  EXPECT_EQ(done[2].median_us, 20);
  CandidateWriter resumed(*db_, run_.id);
  EXPECT_EQ(resumed.add(ok(kernel_, device_, "d", 25)), 4);
}

TEST_F(WritesTest, ResolveFindsWhatAPersonTypes) {
  EXPECT_EQ(db_->resolve_device("cpu0"), device_);
  EXPECT_EQ(db_->resolve_device(std::to_string(device_)), device_);
  Device other = cpu();
  other.compiler_version = "99";
  db_->upsert_device(other);
  EXPECT_THROW(db_->resolve_device("cpu0"), DbError) << "two fingerprints share the name";
  EXPECT_THROW(db_->resolve_device("tpu"), DbError);
  EXPECT_EQ(db_->resolve_kernel("h-mat"), kernel_);
  db_->upsert_kernel(kernel("mattress"));
  EXPECT_THROW(db_->resolve_kernel("h-mat"), DbError);
  EXPECT_EQ(db_->resolve_kernel("h-matmul"), kernel_);
  EXPECT_EQ(db_->resolve_run(run_.uuid.substr(0, 8)), run_.id);
  EXPECT_EQ(db_->resolve_run(std::to_string(run_.id)), run_.id);
}

TEST_F(WritesTest, AKernelIsReadBackByIdOrByItsFullHash) {
  const Kernel by_id = db_->kernel(kernel_);
  EXPECT_EQ(by_id.id, kernel_);
  EXPECT_EQ(by_id.hash, "h-matmul");
  EXPECT_EQ(by_id.ast, "SINK(matmul)");
  EXPECT_EQ(by_id.flops, 2 * 64 * 64 * 64);
  EXPECT_EQ(by_id.source, "workload:matmul");
  const std::optional<Kernel> by_hash = db_->kernel(std::string_view("h-matmul"));
  ASSERT_TRUE(by_hash);
  EXPECT_EQ(by_hash->id, kernel_);
  EXPECT_FALSE(db_->kernel(std::string_view("h-mat")));  // a prefix is resolve_kernel's job
  EXPECT_THROW(db_->kernel(kernel_ + 100), DbError);
}

}  // namespace
}  // namespace tunebed::results::testing
