// The tuning database: one SQLite file that records every device, kernel, tuning run and measured
// candidate, the best candidate per (kernel, device, action-space version), and the candidates
// quarantined for crashing or hanging. results/README.md documents the schema and the views.
//
// Several processes may tune into one file at once: the file is in WAL mode, every write is an
// IMMEDIATE transaction, and a writer waits (busy_timeout) for another to commit instead of
// failing. A process killed at any moment loses only its uncommitted batch.
//
// results/ knows nothing of core/: a kernel arrives as its canonical AST text and hash, opts as
// their canonical string, and the caller says which tunebed version and git revision it is.
//
// The implementation is split by concern: tuning_db.cpp (open, checks, maintenance),
// writes.cpp, queries.cpp, transfer.cpp (merge, export, import); candidate_writer.hpp batches.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "results/findings.hpp"
#include "results/records.hpp"
#include "results/sqlite.hpp"

namespace tunebed::results {

// A tuning database that cannot be opened, or a request it cannot honour (unknown run, ...).
class DbError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class TuningDb {
 public:
  enum class Mode {
    create,    // create the file if missing; open and migrate it if it is a tuning database
    existing,  // the file must exist and be a tuning database; it is migrated if older
  };
  // Validates an existing file read-only before writing anything: a missing file (existing mode),
  // a file that is not SQLite, one that fails PRAGMA quick_check, another application's database
  // or one newer than this tunebed is an error naming the file, and the file is left untouched.
  static TuningDb open(const std::string& path, Mode mode);
  // Opens PATH read-only for merge inputs and queries that must not migrate or write: it must be
  // a valid tuning database at exactly the current schema version. (Like any SQLite reader of a
  // WAL database, it may leave empty -wal and -shm files beside it.)
  static TuningDb open_read_only(const std::string& path);

  const std::string& path() const { return db_.path(); }
  // The fuzzing findings kept in this database (findings.hpp).
  Findings findings() { return Findings(db_); }
  int schema_version();

  // --- writes (writes.cpp) ---
  // Returns the id of the row with this fingerprint / hash, inserting it if new. A hash already
  // stored with a different AST text is an error: the canonical form or the hash is broken. A
  // kernel stored without its FLOPs or bytes (0: an import, a plan written before costing) takes
  // them from the first upsert that knows them.
  int64_t upsert_device(const Device& device);
  int64_t upsert_kernel(const Kernel& kernel);
  Run begin_run(const RunSpec& spec);
  void finish_run(int64_t run_id, RunStatus status);  // completed or failed; stamps ended_at
  void mark_interrupted(int64_t run_id);
  // Puts an interrupted (or killed: still 'running') run back to running, for --resume.
  Run resume_run(int64_t run_id);
  // Ends a kernel's search in RUN_ID: each RETIMED candidate (by seq) takes the re-timing's
  // samples and median as its final measurement, and WINNER_SEQ becomes the stored best of its
  // kernel, device and action-space version even where another candidate's stored median is
  // lower: the declared winner of the latest search, not the lowest figure ever seen, is what
  // the cache serves. One transaction.
  // CONFIDENCE, when given, is kept with the winner (confidence()).
  void declare_winner(int64_t run_id, int64_t winner_seq, const std::vector<RetimedCandidate>& retimed,
                      const std::optional<Confidence>& confidence = std::nullopt);
  // Quarantines opts for a kernel on a device (crashes and timeouts are quarantined on insert).
  void quarantine(int64_t kernel_id, int64_t device_id, std::string_view opts, std::string_view reason);

  // --- queries (queries.cpp) ---
  bool is_quarantined(int64_t kernel_id, int64_t device_id, std::string_view opts);
  std::vector<std::string> quarantined_opts(int64_t kernel_id, int64_t device_id);
  // The independent check of KERNEL on DEVICE: replaces the last one.
  void record_check(const KernelCheck& check);
  std::optional<KernelCheck> kernel_check(int64_t kernel_id, int64_t device_id);
  // A stored winner that re-verification found wrong leaves `best`; REASON is kept.
  void demote(int64_t candidate_id, std::string_view reason);
  std::optional<std::string> demotion_reason(int64_t candidate_id);
  // The confidence its run declared CANDIDATE_ID the winner with, if it was declared with one.
  std::optional<Confidence> confidence(int64_t candidate_id);
  std::optional<BestEntry> cached_best(int64_t kernel_id, int64_t device_id,
                                       std::string_view action_space_version);
  // The winner a later run of KERNEL_HASH on DEVICE (a fingerprint; its id is ignored) should
  // use, without writing anything: nothing when the kernel or the device is not stored.
  StoredWinner stored_winner(std::string_view kernel_hash, const Device& device,
                             std::string_view action_space_version);
  std::vector<CommittedCandidate> candidates_of_run(int64_t run_id);
  Run run(int64_t run_id);
  std::vector<Run> runs();
  std::vector<BestRow> best(const Filter& filter = {});
  std::vector<CandidateRow> history(int64_t kernel_id);
  std::vector<FailureRow> failures(const Filter& filter = {});
  std::vector<ConvergencePoint> convergence(int64_t run_id);
  // Per kernel, the fastest stored winner on device A and on device B (a and b).
  std::vector<Comparison> compare(int64_t device_a, int64_t device_b);
  // Per (kernel, device fingerprint, action-space version), this database's winner (a) and
  // OTHER's (b), matched by kernel hash and fingerprint, not by local ids.
  std::vector<Comparison> diff(TuningDb& other);
  // Resolve what a person types: a device id or name (must be unambiguous), a kernel hash prefix,
  // a run id or uuid prefix. Unknown or ambiguous input is a DbError that says which.
  int64_t resolve_device(std::string_view spec);
  int64_t resolve_kernel(std::string_view spec);
  int64_t resolve_run(std::string_view spec);
  // A stored kernel by id (a DbError if there is none) or by its full hash (nullopt if none).
  Kernel kernel(int64_t id);
  std::optional<Kernel> kernel(std::string_view hash);
  // Row count of each table, in schema order.
  std::vector<std::pair<std::string, int64_t>> table_counts();

  // --- maintenance (tuning_db.cpp) ---
  // PRAGMA integrity_check and foreign_key_check: the problems found, empty when all is well.
  std::vector<std::string> integrity_check();
  // Keeps the K fastest ok candidates per (kernel, device) and every stored winner; deletes the
  // other candidates of finished runs (a running run keeps all, so it can still resume).
  // Returns the number of candidates deleted.
  int64_t prune(int keep_top_k);
  void vacuum();

  // --- transfer (transfer.cpp) ---
  // One JSON object per line, {"table": ..., column: value, ...}, parents before children.
  void export_jsonl(std::ostream& out);
  // Reads what export_jsonl writes; rows already present (same hash, fingerprint, run uuid +
  // seq) are skipped. SOURCE names the input in errors and in runs.imported_from.
  TransferStats import_jsonl(std::istream& in, const std::string& source);

 private:
  friend Db& raw_connection(TuningDb& db);
  explicit TuningDb(Db db) : db_(std::move(db)) {}
  Db db_;
};

// Raw SQL on the database's connection, for the tests and benchmarks of the storage itself.
// Programs read and write through TuningDb's API and the views (results/README.md), with bound
// parameters; nothing in harness/, search/ or fuzz/ calls this.
Db& raw_connection(TuningDb& db);

// Merges the tuning databases INPUTS into OUT (created if missing) without duplicates: devices by
// fingerprint, kernels by hash, runs by uuid, candidates by run uuid + seq. Each imported run
// records the input it came from (runs.imported_from; runs.host says which machine ran it).
TransferStats merge(const std::string& out, const std::vector<std::string>& inputs);

// Opens another connection to a tuning database already opened (and so validated and migrated)
// by a TuningDb: WAL, foreign keys and busy_timeout set, as every connection of tunebed's.
Db connect(const std::string& path);

// UTC now as ISO 8601 with milliseconds, "2026-11-30T11:02:35.123Z": every stored timestamp.
std::string utc_now();

}  // namespace tunebed::results
