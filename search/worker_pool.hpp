// WorkerPool: candidate isolation. Candidates compile and run in worker processes, never in the
// process that searches, so a candidate that segfaults, loops forever or corrupts memory takes
// down one worker and nothing else.
//
// The pool forks N workers (one per core by default), each joined to the parent by a socketpair
// carrying job.hpp's frames, each in its own process group (so a kill reaches the compiler it may
// be running) and killed if the parent dies (PR_SET_PDEATHSIG). A job goes:
//
//   parent --job--> worker          compiles, within the job's compile timeout
//   parent <--compiled-- worker     waits for its turn
//   parent --go--> worker           runs, verifies, times, within the job's run timeout
//   parent <--result-- worker
//
// Compiles overlap (that is where the time goes); by default only one worker at a time holds
// `go`, so timings are not taken while other candidates compete for the cores and the memory bus.
// A worker whose socket closes mid-job died: waitpid says how ("killed by signal SIGSEGV
// (Segmentation fault)"), the job is a `crash`. A worker past its deadline is killed: `timeout`.
// Either way the worker is replaced by a fresh fork and the remaining jobs go on.
//
// Forking copies only the calling thread. The child touches no lock another parent thread could
// hold except malloc's, which glibc makes safe across fork, and it opens its own devices: the
// parent must not run kernels itself (a CPU device opened in the parent would hand a child a
// thread pool whose threads do not exist in it). The pool belongs to one thread, which must
// outlive it (PR_SET_PDEATHSIG fires when the forking thread exits).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "search/job.hpp"

namespace tunebed::search {

struct PoolOptions {
  int workers = 0;               // 0: one per core (std::thread::hardware_concurrency)
  bool exclusive_timing = true;  // one worker at a time runs and times; compiles still overlap
};

struct PoolStats {
  int64_t jobs = 0;
  int64_t workers_replaced = 0;  // after a crash or a timeout
};

class WorkerPool {
 public:
  explicit WorkerPool(PoolOptions options = {});
  ~WorkerPool();  // kills the workers and reaps them
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()); }
  const PoolStats& stats() const { return stats_; }

  // Runs every job, up to size() at once, and returns their results in job order. ON_RESULT,
  // if given, hears each result as it arrives (job index, result), so the caller can commit it
  // before the slowest job of the batch is done. Never throws for what a candidate does; only
  // for a worker that cannot be forked at all (or what ON_RESULT throws).
  std::vector<JobResult> run(const std::vector<Job>& jobs,
                             const std::function<void(int, const JobResult&)>& on_result = {});

  // Re-times verified candidates interleaved in one worker (see job.hpp's RetimeJob).
  RetimeResult retime(const RetimeJob& job);

 private:
  enum class Phase { idle, compiling, compiled, running };
  struct Worker {
    pid_t pid = -1;
    int fd = -1;
    Phase phase = Phase::idle;
    int job = -1;
    std::optional<std::chrono::steady_clock::time_point> deadline;
    std::optional<double> compile_ms;
  };

  void spawn(Worker& w);
  // Kills (when still alive) and reaps W, then forks its replacement; returns how it ended.
  std::string replace(Worker& w, bool kill_first);
  void start(Worker& w, int job, const std::vector<std::byte>& payload, double timeout_s);
  void give_turn(Worker& w, double timeout_s);

  PoolOptions options_;
  std::vector<Worker> workers_;
  PoolStats stats_;
};

// "SIGSEGV (Segmentation fault)", for messages about a process a signal ended.
std::string signal_description(int sig);

}  // namespace tunebed::search
