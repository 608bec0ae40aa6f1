// WorkerPool: candidate isolation. Candidates compile and run in worker processes, never in the
// process that searches, so a candidate that segfaults, loops forever or corrupts memory takes
// down one worker and nothing else.
//
// The workers are a Supervisor's children (supervisor.hpp: process groups, PR_SET_PDEATHSIG,
// deadlines, replacement), one per core by default, each running worker.hpp's serve_jobs. A job
// goes:
//
//   parent --data--> worker         the kernel's buffers and expected output, once per worker
//   parent --job--> worker          compiles, within the job's compile timeout
//   parent <--compiled-- worker     waits for its turn
//   parent --go--> worker           runs, verifies, times, within the job's run timeout
//   parent <--launching-- worker    with a stop line: the verification launch starts ...
//   parent <--launched-- worker     ... and ends within it
//   parent <--result-- worker
//
// Compiles overlap (that is where the time goes). By default timing is exclusive: a worker gets
// `go` only while no other worker compiles or runs, and no compile starts while one runs, so a
// timing is never taken while the tuner's own work competes for the cores and the memory bus.
// A worker that dies mid-job makes the job a `crash` named by how it died ("worker killed by
// signal SIGSEGV (Segmentation fault)"); one past its deadline is killed and the job is a
// `timeout`; one whose verification launch passes the job's stop line (TimingParams::stop_s) is
// killed too, and the job is `stopped`: slow, not broken. Either way a fresh worker takes its place and
// the remaining jobs go on.
//
// The parent must not run kernels itself, and the pool belongs to one thread, which must outlive
// it (supervisor.hpp says why).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "search/job.hpp"
#include "search/supervisor.hpp"

namespace tunebed::search {

struct PoolOptions {
  int workers = 0;               // 0: one per core (std::thread::hardware_concurrency)
  bool exclusive_timing = true;  // one worker at a time runs and times, with no compile beside it
  // The device the jobs will name, opened once in this process before the workers fork: what it
  // learns once per process (the CPU device's compiler probe: three processes, 0.25 s on this
  // project's machine) is then theirs too, and no worker's first job waits for it.
  std::optional<std::string> device;
};

struct PoolStats {
  int64_t jobs = 0;
  int64_t workers_replaced = 0;  // after a crash, a timeout or a stop
  int64_t data_sent = 0;         // JobData messages: one per worker and kernel (a replacement inherits the last sent)
};

class WorkerPool {
 public:
  explicit WorkerPool(PoolOptions options = {});

  int size() const { return workers_.size(); }
  PoolStats stats() const { return {jobs_, workers_.replaced(), data_sent_}; }
  pid_t worker_pid(int worker) const { return workers_.pid(worker); }  // for tests that kill one

  // Runs every job, up to size() at once, and returns their results in job order. ON_RESULT,
  // if given, hears each result as it arrives (job index, result), so the caller can commit it
  // before the slowest job of the batch is done. Never throws for what a candidate does; only
  // for a worker that cannot be forked at all (or what ON_RESULT throws).
  std::vector<JobResult> run(const std::vector<Job>& jobs,
                             const std::function<void(int, const JobResult&)>& on_result = {});

  // Re-times verified candidates interleaved in one worker (see job.hpp's RetimeJob).
  RetimeResult retime(const RetimeJob& job);

 private:
  uint64_t inherited_id() const;  // what a worker forked now holds (0: nothing)

  enum class Phase { idle, compiling, compiled, running };
  struct Slot {  // what the parent knows of one worker
    Phase phase = Phase::idle;
    int job = -1;
    std::optional<double> compile_ms;
    bool launching = false;  // in its verification launch, under the job's stop line
  };

  PoolOptions options_;
  // The data sent last: a worker forked from now on (a replacement) is born holding it. Declared
  // before workers_, whose constructor forks the first workers.
  std::shared_ptr<const JobData> inherited_;
  Supervisor workers_;
  std::vector<Slot> slots_;
  std::vector<uint64_t> held_;  // per worker: the id of the JobData it was sent last (0: none)
  int64_t jobs_ = 0, data_sent_ = 0;
};

}  // namespace tunebed::search
