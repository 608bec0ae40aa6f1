// CandidateWriter: the way measured candidates enter the tuning database.
//
// One transaction per candidate would cost a commit each (see bench/bench_results.cpp), so the
// writer queues candidates and commits them in batches: when BATCH_ROWS are queued, when the
// oldest queued candidate has waited MAX_DELAY (a background thread watches the clock, so a slow
// search still commits promptly), on flush(), and on destruction. A batch is one transaction:
// a process killed mid-batch loses that batch whole and nothing else, and a resumed run sees
// exactly the committed candidates through TuningDb::candidates_of_run.
//
// The writer numbers its run's candidates 1, 2, 3, ... (seq), continuing after the last committed
// one when a run resumes; (run uuid, seq) identifies a candidate across merged databases. One
// writer per run at a time. The writer has its own connection, so the owner's TuningDb stays
// free for queries while a batch commits.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "results/records.hpp"
#include "results/sqlite.hpp"
#include "results/tuning_db.hpp"

namespace tunebed::results {

struct WriterOptions {
  int batch_rows = 64;
  std::chrono::milliseconds max_delay{500};
};

class CandidateWriter {
 public:
  CandidateWriter(const TuningDb& db, int64_t run_id, WriterOptions options = {});
  // Commits what is queued; an error there can only be reported on stderr, so call close()
  // to see it as an exception.
  ~CandidateWriter();
  CandidateWriter(const CandidateWriter&) = delete;
  CandidateWriter& operator=(const CandidateWriter&) = delete;

  // Queues C (stamping created_at if empty) and returns its seq. If a background commit failed,
  // throws its error instead and C is not queued; the failed rows stay queued for the next try.
  int64_t add(Candidate c);
  void flush();
  // Flushes and stops the background thread; later adds are an error.
  void close();

  int64_t committed() const { return committed_; }  // rows this writer has committed
  int64_t run_id() const { return run_id_; }

 private:
  struct Queued {
    int64_t seq;
    Candidate candidate;
  };
  void commit_queued();  // the batch write, under write_mu_
  void watch_clock();    // the background thread

  Db db_;
  Statement insert_;
  const int64_t run_id_;
  const WriterOptions options_;

  std::mutex queue_mu_;  // guards the fields below, up to error_
  std::condition_variable wake_;
  std::vector<Queued> queue_;
  std::chrono::steady_clock::time_point oldest_;
  int64_t next_seq_ = 1;
  bool closing_ = false;
  std::exception_ptr error_;  // a failed background commit, rethrown by the next add

  std::mutex write_mu_;  // one batch write at a time
  std::atomic<int64_t> committed_ = 0;
  std::thread clock_;
};

}  // namespace tunebed::results
