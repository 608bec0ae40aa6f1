// Several processes and sudden death: two processes writing one database at once lose nothing,
// and a process killed with SIGKILL in the middle of a batch leaves every committed row exactly
// once and nothing of the batch it was writing.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "support.hpp"

namespace tunebed::results::testing {
namespace {

// Runs BODY in a child process; the child exits 0 when BODY returns, 1 when it throws.
template <class Body>
pid_t spawn(Body body) {
  pid_t pid = fork();
  if (pid == 0) {
    int code = 0;
    try {
      body();
    } catch (const std::exception& e) {
      fprintf(stderr, "child %d: %s\n", getpid(), e.what());
      code = 1;
    }
    _exit(code);
  }
  return pid;
}

int exit_code(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

class ProcessTest : public DbTest {};

TEST_F(ProcessTest, TwoProcessesWriteDifferentKernelsConcurrently) {
  constexpr int kRows = 3000;
  std::string path = file("shared.db");
  { TuningDb::open(path, TuningDb::Mode::create).upsert_device(cpu()); }  // no connection crosses fork

  int go[2];
  ASSERT_EQ(pipe(go), 0);
  auto tuner = [&](const std::string& name) {
    return spawn([&, name] {
      close(go[1]);
      char c;
      if (read(go[0], &c, 1) != 0) throw std::runtime_error("start signal");  // EOF: both are ready
      TuningDb db = TuningDb::open(path, TuningDb::Mode::existing);
      int64_t device = db.upsert_device(cpu());
      int64_t k = db.upsert_kernel(kernel(name));
      results::Run run = db.begin_run(spec());
      CandidateWriter w(db, run.id, {.batch_rows = 50, .max_delay = std::chrono::milliseconds(5)});
      for (int i = 0; i < kRows; ++i) w.add(ok(k, device, name + "-" + std::to_string(i), 1000.0 - i % 997));
      w.close();
      db.finish_run(run.id, RunStatus::completed);
    });
  };
  pid_t a = tuner("left"), b = tuner("right");
  close(go[0]);
  close(go[1]);  // both children start now
  EXPECT_EQ(exit_code(a), 0);
  EXPECT_EQ(exit_code(b), 0);

  TuningDb db = TuningDb::open(path, TuningDb::Mode::existing);
  EXPECT_TRUE(db.integrity_check().empty());
  Statement per_kernel = results::raw_connection(db).prepare(R"sql(
      SELECT k.hash, count(*), count(DISTINCT c.seq), min(c.seq), max(c.seq), count(DISTINCT c.run_id)
      FROM candidates c JOIN kernels k ON k.id = c.kernel_id GROUP BY k.hash ORDER BY k.hash)sql");
  for (const char* name : {"h-left", "h-right"}) {
    ASSERT_TRUE(per_kernel.step());
    EXPECT_EQ(per_kernel.column_text(0), name);
    EXPECT_EQ(per_kernel.column_int(1), kRows);
    EXPECT_EQ(per_kernel.column_int(2), kRows);
    EXPECT_EQ(per_kernel.column_int(3), 1);
    EXPECT_EQ(per_kernel.column_int(4), kRows);
    EXPECT_EQ(per_kernel.column_int(5), 1);
  }
  EXPECT_FALSE(per_kernel.step());
  EXPECT_EQ(count(db, "SELECT count(*) FROM devices"), 1);
  EXPECT_EQ(count(db, "SELECT count(*) FROM runs WHERE status = 'completed'"), 2);
  EXPECT_EQ(count(db, "SELECT count(*) FROM best"), 2);
}

TEST_F(ProcessTest, KillMidBatchKeepsEveryCommittedRowExactlyOnce) {
  constexpr int kBatch = 100;
  std::string path = file("killed.db");
  int64_t device, k, run_id;
  {
    TuningDb db = TuningDb::open(path, TuningDb::Mode::create);
    device = db.upsert_device(cpu());
    k = db.upsert_kernel(kernel("victim"));
    run_id = db.begin_run(spec()).id;
  }
  // The child writes forever and reports, after each commit, how many rows it has committed.
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  pid_t child = spawn([&] {
    close(report[0]);
    TuningDb db = TuningDb::open(path, TuningDb::Mode::existing);
    CandidateWriter w(db, run_id, {.batch_rows = kBatch, .max_delay = std::chrono::hours(1)});
    int64_t reported = 0;
    for (int i = 0;; ++i) {
      w.add(ok(k, device, "o" + std::to_string(i), 100.0 + i % 37));
      if (int64_t n = w.committed(); n != reported) {
        reported = n;
        if (write(report[1], &n, sizeof n) != sizeof n) throw std::runtime_error("report pipe");
      }
    }
  });
  close(report[1]);
  int64_t acknowledged = 0, n = 0;
  while (acknowledged < 30 * kBatch && read(report[0], &n, sizeof n) == sizeof n) acknowledged = n;
  ASSERT_GE(acknowledged, 30 * kBatch) << "the child stopped reporting";
  std::this_thread::sleep_for(std::chrono::microseconds(1500));  // let it get into the next batches
  kill(child, SIGKILL);
  EXPECT_EQ(exit_code(child), 128 + SIGKILL);
  while (read(report[0], &n, sizeof n) == sizeof n) acknowledged = n;  // reports sent before death
  close(report[0]);

  TuningDb db = TuningDb::open(path, TuningDb::Mode::existing);
  EXPECT_TRUE(db.integrity_check().empty());
  std::vector<CommittedCandidate> rows = db.candidates_of_run(run_id);
  int64_t stored = static_cast<int64_t>(rows.size());
  EXPECT_GE(stored, acknowledged) << "a committed row was lost";
  EXPECT_EQ(stored % kBatch, 0) << "part of a batch was committed";
  for (int64_t i = 0; i < stored; ++i) {
    ASSERT_EQ(rows[i].seq, i + 1) << "sequence has a gap or a duplicate";
    ASSERT_EQ(rows[i].opts, "o" + std::to_string(i));
  }
  EXPECT_EQ(db.run(run_id).status, RunStatus::running) << "nobody finished the killed run";
  db.resume_run(run_id);
  CandidateWriter resumed(db, run_id);
  EXPECT_EQ(resumed.add(ok(k, device, "after", 1.0)), stored + 1);
}

}  // namespace
}  // namespace tunebed::results::testing
