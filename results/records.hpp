// The plain structs that go into and come out of a tuning database. Ids are the database's own
// row ids (int64); they are local to one file, while hashes, fingerprints and run uuids are
// what identify the same thing across files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <string_view>
#include <utility>
#include <vector>

namespace tunebed::results {

// A device fingerprint. Timings are comparable only between identical fingerprints.
struct Device {
  int64_t id = 0;  // ignored by upsert_device
  std::string name, arch, driver, compiler, compiler_version;
};

// One device by its fingerprint (every field but the id, which is one database's row number):
// measurements of the two may be pooled and compared.
inline bool same_fingerprint(const Device& a, const Device& b) {
  return std::tie(a.name, a.arch, a.driver, a.compiler, a.compiler_version) ==
         std::tie(b.name, b.arch, b.driver, b.compiler, b.compiler_version);
}

struct Kernel {
  int64_t id = 0;     // ignored by upsert_kernel
  std::string hash;   // hash of the canonical AST text: the cache key
  std::string ast;    // canonical AST text
  std::string shape;  // short shape summary, e.g. "512x512x512 f32"
  int64_t flops = 0;
  int64_t bytes = 0;
  std::string source;  // where it came from: a workload name or file:line
};

enum class RunStatus { running, completed, interrupted, failed };
// stopped: its verification launch passed the search's stop line and was killed (search/measure.hpp):
// slower than that, unverified, not broken.
enum class CandidateStatus { ok, compile_error, crash, timeout, wrong, stopped };

std::string_view to_string(RunStatus s);
std::string_view to_string(CandidateStatus s);
RunStatus parse_run_status(std::string_view s);              // throws std::invalid_argument
CandidateStatus parse_candidate_status(std::string_view s);  // throws std::invalid_argument

// What a run is asked to do; the database adds its identity and lifetime (Run).
struct RunSpec {
  std::string strategy;       // "beam", "random", ...
  std::string params = "{}";  // the strategy's parameters, a JSON object
  int64_t seed = 0;
  std::optional<int64_t> budget_candidates;
  std::optional<double> budget_seconds;
  std::string action_space_version;
  std::string tunebed_version;
  std::string git_rev;
  std::string host;  // empty: this machine's host name
};

struct Run : RunSpec {
  int64_t id = 0;
  std::string uuid;                  // 32 hex digits, unique across databases
  std::string started_at, ended_at;  // UTC ISO 8601; ended_at empty while running
  RunStatus status = RunStatus::running;
  std::string imported_from;  // empty unless merged or imported from elsewhere
};

// One measured candidate, as the search hands it to a CandidateWriter.
struct Candidate {
  int64_t kernel_id = 0, device_id = 0;
  std::string opts;         // canonical opts string
  std::string source_hash;  // hash of the rendered source
  std::optional<double> compile_ms;
  std::vector<double> samples_us;   // every timing sample, in order
  std::optional<double> median_us;  // required when status is ok
  CandidateStatus status = CandidateStatus::ok;
  std::string error;                // compiler output, signal, timeout, ...
  std::optional<double> max_error;  // against the reference output
  std::string created_at;           // empty: stamped when handed to the writer
};

// A candidate already committed to a run: what a resumed run must not redo.
struct CommittedCandidate {
  int64_t seq = 0, kernel_id = 0, device_id = 0;
  std::string opts;
  CandidateStatus status = CandidateStatus::ok;
  std::optional<double> median_us;
  std::string source_hash;  // "" where it never rendered
};

// A candidate of a run measured again at the end of its kernel's search (the interleaved
// re-timing of search/tune.hpp): its samples and median replace the search's.
struct RetimedCandidate {
  int64_t seq = 0;
  std::vector<double> samples_us;
  double median_us = 0;
};

// How sure a tuning run was of the winner it declared (search/decide.hpp): the interleaved
// re-timing's deciding comparison. Either the winner against the runner-up (the next median), or,
// when the fastest median did not beat the incumbent (the winner stored before, else the default
// opts) beyond the noise, that candidate against the incumbent, which kept the title.
struct Confidence {
  std::optional<std::string> challenger_opts;  // what the winner was tested against; none alone
  std::optional<std::string> incumbent_opts;   // none when there was none
  bool kept_incumbent = false;
  double p_value = 1;  // one-sided Mann-Whitney U: the faster of the pair is not faster
  double speedup = 1, speedup_low = 1, speedup_high = 1;  // faster over slower, medians; 95% bootstrap
  int64_t rounds = 0;  // interleaved rounds, at most, per candidate
  double level = 0;    // what p_value was compared with: alpha split over looks and challengers
};

// The independent check of a kernel on a device (search/tune.hpp, step 2).
struct KernelCheck {
  int64_t kernel_id = 0, device_id = 0;
  std::string oracle;  // "ast-interpreter", or "ast-interpreter+eigen" for a workload's kernel
  std::string status;  // "ok", "wrong" (the unoptimized kernel disagrees), "failed" (it did not run)
  std::optional<double> max_error, worst_ratio;
  int64_t unverified = 0;
  std::string message, checked_at;
};

// The stored winner for one (kernel, device, action-space version): the tuning cache entry.
struct BestEntry {
  int64_t candidate_id = 0;
  std::string run_uuid, opts, source_hash, created_at;
  double median_us = 0;
};

// What the database holds for a kernel on a device, looked up by the tuner's own keys: the
// kernel hash, the device fingerprint (all five strings) and the action-space version.
struct StoredWinner {
  std::optional<BestEntry> winner;          // under the version asked for
  std::vector<std::string> other_versions;  // versions with a winner for this kernel and device
};

// One row of v_best.
struct BestRow {
  std::string kernel_hash, kernel_shape, kernel_source;
  int64_t device_id = 0;
  std::string device, arch, driver, compiler, compiler_version;
  std::string action_space_version, opts;
  double median_us = 0;
  std::optional<double> gflops, gbytes_per_s;
  std::string run_uuid;
  int64_t candidate_id = 0;
  std::string created_at;
};

// One candidate of a kernel's history, as stored.
struct CandidateRow {
  int64_t id = 0;
  std::string run_uuid;
  int64_t seq = 0;
  int64_t device_id = 0;  // devices of one name may differ (two machines' merged data)
  std::string device, opts, source_hash;
  std::optional<double> compile_ms;
  std::vector<double> samples_us;
  std::optional<double> median_us;
  CandidateStatus status = CandidateStatus::ok;
  std::string error;
  std::optional<double> max_error;
  std::string created_at;
};

// One row of v_failures.
struct FailureRow {
  int64_t candidate_id = 0;
  std::string run_uuid;
  int64_t seq = 0;
  std::string kernel_hash, kernel_source, device, opts;
  CandidateStatus status = CandidateStatus::wrong;
  std::string error;
  std::optional<double> max_error;
  std::string created_at;
  bool quarantined = false;
};

// One row of v_convergence.
struct ConvergencePoint {
  std::string run_uuid, kernel_hash, device;
  int64_t seq = 0, candidate_index = 0;
  double elapsed_s = 0;
  CandidateStatus status = CandidateStatus::ok;
  std::optional<double> median_us, best_so_far_us;
};

// A kernel's winner on two sides: two devices (compare) or two databases (diff).
struct Winner {
  std::string opts;
  double median_us = 0;
};
struct Comparison {
  std::string kernel_hash, kernel_shape, kernel_source;
  std::string device, action_space_version;  // diff only: which fingerprint name and version
  std::optional<Winner> a, b;
  // How many times faster b is than a (a.median / b.median); empty unless both sides exist.
  std::optional<double> speedup() const;
};

// Which rows a query returns; an empty field matches everything.
struct Filter {
  std::string kernel;  // kernel hash prefix
  std::optional<int64_t> device_id;
  std::string workload;  // kernel source prefix (a workload name or a file)
};

// Rows added and rows already present (skipped), per table, by merge or import.
struct TransferStats {
  std::vector<std::pair<std::string, int64_t>> added, skipped;
  int64_t added_to(std::string_view table) const;
  int64_t skipped_in(std::string_view table) const;
};

}  // namespace tunebed::results
