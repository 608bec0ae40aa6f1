// The tuning driver: one kernel, one device, one strategy, every candidate recorded.
//
//   1. check    the independent check, once per call: TuneTarget::expect computes what a correct
//               output is on inputs drawn from `input_seed` (exact values with error bounds, from
//               the AST interpreter for real kernels: core/engine/check.hpp), and the unoptimized
//               kernel (the root state), run in a worker meanwhile, must match it. The outcome is
//               recorded on the kernel (TuningDb::record_check). A kernel whose root is wrong, or
//               whose oracle a second one disagrees with (TuneTarget::cross_check, run on a third
//               thread: the Eigen reference, for a workload's kernel), is not tuned:
//               TuneResult::not_tuned says why. Every candidate is then verified against the same
//               expectation;
//   2. cache    the tuning database's winner for (kernel hash, device fingerprint, action-space
//               version) is re-verified in a worker and reused, unless `retune`. A winner that
//               fails re-verification is demoted (TuningDb::demote, with the reason) and the
//               kernel is tuned again;
//   3. search   the baseline (step 4) is measured first, outside the budget: its time sets the
//               early-stop bar (measure.hpp) from the first proposal on, so a candidate far
//               slower than the default opts gets one launch; a proposal of the baseline's opts
//               gets its row's cost. Then the strategy proposes states; each batch is rendered, compiled in parallel and
//               measured one at a time by the worker pool, and every result goes to the
//               database through a CandidateWriter. Quarantined opts (crashed or hung before on
//               this kernel and device) are never run again, nor is a candidate whose source an
//               earlier one of this kernel rendered (the same kernel by another order of opts:
//               it costs +inf to the strategy and is not recorded; TuneResult::skipped_duplicate;
//               step 4 knows it by its twin's row, so a baseline that is a twin is still timed). A resumed run answers committed
//               candidates from the database, so the same seed replays the same proposals
//               without redoing them;
//   4. winner   the top-k correct candidates, the baseline (TuneTarget::baseline: for real
//               kernels the default opts, what runs when nobody searched) and the winner stored
//               before this run (on a retune) are re-timed interleaved in one worker, each
//               measured as one more candidate of the run if the search did not reach it. A test
//               on their samples decides (decide.hpp): the incumbent (the stored winner, else the
//               baseline) keeps the title unless a candidate is faster beyond the noise. So the
//               tuned and the default times come from one measurement, the winner is not slower
//               than the default opts in it, and the decision's confidence is stored with it. The re-timed medians replace the search's
//               in the database and the winner becomes the stored best (TuningDb::declare_winner):
//               the database serves what tune() declared, not the lowest quick-look median.
//
// Runs. By default tune() begins a run of its own and finishes it. A batch (`tunebed tune` over
// many kernels) is one run: the caller begins or resumes it, passes TuneOptions::run_id, and
// finishes it. Either way the run's committed candidates for this kernel are answered from the
// database, and a kernel that has some is resumed rather than served from the cache.
//
// Stopping. TuneOptions::stop (set by a SIGINT handler, say) is read at every candidate
// boundary: no new candidate starts, the ones already running finish and are committed, the
// winner is not declared, and the result says `interrupted`; a run tune() owns is then marked
// interrupted. Resuming it replays the same proposals from the database (step 3).
//
// The driver knows kernels only through TuneTarget: a search space whose state keys are the
// canonical opts strings, and a render function from a state to C / OpenCL / CUDA source. For
// real kernels those come from core/opt (search/kernel_space.hpp) and core/codegen; the tests
// drive it with hand-written kernels.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "results/tuning_db.hpp"
#include "search/decide.hpp"
#include "search/job.hpp"
#include "search/strategy.hpp"
#include "search/worker_pool.hpp"

namespace tunebed::search {

struct TuneTarget {
  results::Kernel kernel;  // hash, canonical AST text, shape summary, FLOPs, bytes, source
  SearchSpace* space = nullptr;
  std::string action_space_version;
  // The source of a state; throws (any std::exception) for a state that cannot be rendered,
  // which is recorded as a compile_error.
  std::function<KernelSource(const Path&)> render;
  // The state a stored opts string names, for re-verifying a cached winner; nullopt when the
  // opts are not in this space any more.
  std::function<std::optional<Path>(const std::string& opts)> parse;
  // Step 1's oracle: what a correct run leaves in `output` when started from BUFFERS, by code that
  // shares nothing with `render` (kernel_target.hpp: the AST interpreter's exact run). ORACLE
  // names it as the database records it.
  std::function<Expected(const std::vector<HostBuffer>& buffers)> expect;
  std::string oracle = "ast-interpreter";
  // The caller's check of the oracle against a second one (cmd_tune: the Eigen reference), started
  // on a thread of its own beside step 1's exact run (EXPECT, on another). It is given the inputs
  // and the exact run's answer to come: a check on those inputs waits for it and redoes none of
  // it (a one-kernel workload: Eigen on the kernel's own buffers); one of a whole schedule runs
  // it on its own inputs meanwhile. It answers nullopt when it cannot take the kernel, "" when
  // the two agree, else why not; when it answers, the record names the oracle
  // ORACLE+CROSS_ORACLE.
  std::function<std::optional<std::string>(const std::vector<HostBuffer>& buffers,
                                           const std::shared_future<Expected>& expected)>
      cross_check;
  std::string cross_oracle = "eigen";
  std::vector<HostBuffer> buffers;  // dtypes and sizes; contents are drawn from input_seed
  int output = 0;
  std::vector<int32_t> vars;
  // The state the kernel runs in untuned (KernelTarget::default_opts), timed beside the winner so
  // that the speedup over it is measured, not estimated; none when not in the space.
  std::optional<Path> baseline;
};

struct TuneResult;

// What tune() reports as it goes, in this order: kernel_start; candidate (each candidate tried,
// measured or answered from a resumed run), each followed by new_best when it is the fastest
// correct one so far; kernel_done (also after a cache hit or an interruption).
struct TuneEvent {
  enum class Kind { kernel_start, candidate, new_best, kernel_done };
  Kind kind = Kind::kernel_start;
  const TuneTarget* target = nullptr;
  // candidate, new_best: the candidate's opts, status and median.
  std::string opts;
  CandidateStatus status = CandidateStatus::ok;
  std::optional<double> median_s;
  bool reused = false;                 // answered from the database (a resumed run)
  int64_t tried = 0;                   // candidates of this kernel so far, this one included
  std::optional<double> best_s;        // the fastest correct median so far
  const TuneResult* result = nullptr;  // kernel_done only; valid during the callback only
};

struct TuneOptions {
  std::string device = "cpu";
  Budget budget;
  TimingParams timing;
  int top_k = 3;  // re-timed interleaved before the winner is declared
  DecisionPolicy decision;  // how they are re-timed and decided between (decide.hpp)
  bool retune = false;
  uint64_t seed = 0;                  // the strategy's seed, as stored with the run
  uint64_t input_seed = 0;            // the inputs every candidate runs on
  std::optional<int64_t> resume_run;  // continue this interrupted run instead of starting one
  std::optional<int64_t> run_id;      // record into this run, begun and finished by the caller
  std::function<void(const TuneEvent&)> on_event;
  const std::atomic<bool>* stop = nullptr;  // when set, stop at the next candidate boundary
};

struct TuneResult {
  bool cache_hit = false;
  bool interrupted = false;            // stopped through TuneOptions::stop; no winner declared
  std::string opts;                    // the winner's
  double median_s = 0;                 // the winner's, from re-timing (or re-verification on a cache hit)
  // How sure the decision was (decide.hpp); none when fewer than two candidates were re-timed.
  std::optional<results::Confidence> confidence;
  std::string baseline_opts;         // the baseline's, when the target has one
  std::optional<double> baseline_s;  // timed with the winner; none if it failed or is absent
  int64_t run_id = 0;                  // 0 on a cache hit
  int64_t measured = 0;                // candidates run in workers by this call
  int64_t reused = 0;                  // committed candidates of a resumed run, answered from the database
  int64_t skipped_quarantined = 0;
  // Candidates whose source was another candidate's (the same kernel by another order of opts):
  // not run again, and +inf to the strategy, which already has the twin.
  int64_t skipped_duplicate = 0;
  std::string not_tuned;  // step 1 failed: why (the kernel was not tuned; no run was begun)
  std::string demoted;    // the stored winner failed re-verification and was demoted: why
};

// Throws results::DbError for database trouble, and whatever TuneTarget::expect throws (an AST
// the interpreter cannot run). A run tune() owns is marked failed when the search throws; the
// caller's run (run_id) is left for the caller to finish.
TuneResult tune(TuneTarget& target, Strategy& strategy, WorkerPool& pool, results::TuningDb& db,
                const TuneOptions& options);

// STATES of TARGET re-timed interleaved in one worker, as step 4 re-times its finalists, and
// decided between (decide.hpp) with INCUMBENT holding the title, on inputs drawn from
// options.input_seed. Nothing is verified or recorded: for states that ran correctly before
// (`tunebed replay --confirm` re-times two stored ones head to head). nullopt if re-timing failed.
std::optional<Decision> retime_states(TuneTarget& target, WorkerPool& pool, const TuneOptions& options,
                                      const std::vector<Path>& states, std::optional<int> incumbent);

// The device's fingerprint as the database stores it. Opens the device in this process only
// long enough to read it: it must be closed again before a worker is forked (worker_pool.hpp).
results::Device fingerprint_of(const std::string& device_spec);
results::Device fingerprint_of(const Device& device);  // of a device already open

}  // namespace tunebed::search
