// Writes other than candidates (those go through CandidateWriter): devices, kernels, the run
// lifecycle and manual quarantine. Each is one short IMMEDIATE transaction.
#include <unistd.h>

#include <climits>

#include "results/json_lines.hpp"
#include "results/schema.hpp"
#include "results/tuning_db.hpp"

namespace tunebed::results {
namespace {

std::string host_name() {
  char buf[HOST_NAME_MAX + 1] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

}  // namespace

int64_t TuningDb::upsert_device(const Device& d) {
  Transaction tx(db_);
  db_.prepare(R"sql(
      INSERT INTO devices (name, arch, driver, compiler, compiler_version) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT DO NOTHING)sql")
      .bind_all(d.name, d.arch, d.driver, d.compiler, d.compiler_version)
      .run();
  Statement find = db_.prepare(R"sql(
      SELECT id FROM devices
      WHERE name = ? AND arch = ? AND driver = ? AND compiler = ? AND compiler_version = ?)sql");
  find.bind_all(d.name, d.arch, d.driver, d.compiler, d.compiler_version).step();
  int64_t id = find.column_int(0);
  tx.commit();
  return id;
}

int64_t TuningDb::upsert_kernel(const Kernel& k) {
  if (k.hash.empty()) throw DbError("upsert_kernel: the kernel hash is empty");
  Transaction tx(db_);
  db_.prepare(R"sql(
      INSERT INTO kernels (hash, ast, shape, flops, bytes, source) VALUES (?, ?, ?, ?, ?, ?)
      ON CONFLICT (hash) DO UPDATE SET
        flops = CASE WHEN kernels.flops = 0 THEN excluded.flops ELSE kernels.flops END,
        bytes = CASE WHEN kernels.bytes = 0 THEN excluded.bytes ELSE kernels.bytes END)sql")
      .bind_all(k.hash, k.ast, k.shape, k.flops, k.bytes, k.source)
      .run();
  Statement find = db_.prepare("SELECT id, ast FROM kernels WHERE hash = ?");
  find.bind_all(k.hash).step();
  if (find.column_text(1) != k.ast) {
    throw DbError("kernel hash " + k.hash + " is already stored in " + path() +
                  " with a different AST text: the canonical form or its hash is not canonical");
  }
  int64_t id = find.column_int(0);
  tx.commit();
  return id;
}

Run TuningDb::begin_run(const RunSpec& spec) {
  Transaction tx(db_);
  Statement insert = db_.prepare(
      "INSERT INTO runs (uuid, strategy, params, seed, budget_candidates, budget_seconds, "
      "action_space_version, "
      "tunebed_version, git_rev, host, started_at, status) "
      "VALUES (" +
      std::string(kNewUuidSql) + ", ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running')");
  insert
      .bind_all(spec.strategy, spec.params, spec.seed, spec.budget_candidates, spec.budget_seconds,
                spec.action_space_version, spec.tunebed_version, spec.git_rev,
                spec.host.empty() ? host_name() : spec.host, utc_now())
      .run();
  int64_t id = db_.last_insert_rowid();
  tx.commit();
  return run(id);
}

void TuningDb::finish_run(int64_t run_id, RunStatus status) {
  if (status != RunStatus::completed && status != RunStatus::failed) {
    throw DbError("finish_run: a run finishes as completed or failed, not " + std::string(to_string(status)));
  }
  run(run_id);  // throws for an unknown run
  db_.prepare("UPDATE runs SET status = ?, ended_at = ? WHERE id = ?")
      .bind_all(to_string(status), utc_now(), run_id)
      .run();
}

// Only a running run is interrupted; a finished one keeps its status, so calling this from a
// signal path after the run completed is harmless.
void TuningDb::mark_interrupted(int64_t run_id) {
  run(run_id);
  db_.prepare("UPDATE runs SET status = 'interrupted', ended_at = ? WHERE id = ? AND status = 'running'")
      .bind_all(utc_now(), run_id)
      .run();
}

Run TuningDb::resume_run(int64_t run_id) {
  Run r = run(run_id);
  if (r.status == RunStatus::completed) {
    throw DbError("run " + r.uuid + " has completed; there is nothing to resume");
  }
  db_.prepare("UPDATE runs SET status = 'running', ended_at = NULL WHERE id = ?").bind_all(run_id).run();
  return run(run_id);
}

void TuningDb::declare_winner(int64_t run_id, int64_t winner_seq, const std::vector<RetimedCandidate>& retimed,
                              const std::optional<Confidence>& confidence) {
  Transaction tx(db_);
  for (const RetimedCandidate& r : retimed) {
    db_.prepare(R"sql(
        UPDATE candidates SET samples_us = ?, median_us = ?
        WHERE run_id = ? AND seq = ? AND status = 'ok')sql")
        .bind_all(json_numbers(r.samples_us), r.median_us, run_id, r.seq)
        .run();
  }
  db_.prepare(R"sql(
      INSERT INTO best (kernel_id, device_id, action_space_version, candidate_id)
        SELECT c.kernel_id, c.device_id, r.action_space_version, c.id
        FROM candidates c JOIN runs r ON r.id = c.run_id
        WHERE c.run_id = ? AND c.seq = ? AND c.status = 'ok'
      ON CONFLICT (kernel_id, device_id, action_space_version)
        DO UPDATE SET candidate_id = excluded.candidate_id)sql")
      .bind_all(run_id, winner_seq)
      .run();
  if (db_.changes() != 1)
    throw DbError("declare_winner: run " + std::to_string(run_id) + " has no ok candidate " +
                  std::to_string(winner_seq));
  if (confidence) {
    const Confidence& c = *confidence;
    db_.prepare(R"sql(
        INSERT INTO winner_confidence (candidate_id, challenger_opts, incumbent_opts, kept_incumbent, p_value,
                                       speedup, speedup_low, speedup_high, rounds, level, decided_at)
          SELECT id, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM candidates WHERE run_id = ? AND seq = ?
        ON CONFLICT (candidate_id) DO UPDATE SET challenger_opts = excluded.challenger_opts,
          incumbent_opts = excluded.incumbent_opts, kept_incumbent = excluded.kept_incumbent,
          p_value = excluded.p_value, speedup = excluded.speedup, speedup_low = excluded.speedup_low,
          speedup_high = excluded.speedup_high, rounds = excluded.rounds, level = excluded.level,
          decided_at = excluded.decided_at)sql")
        .bind_all(c.challenger_opts, c.incumbent_opts, static_cast<int64_t>(c.kept_incumbent), c.p_value, c.speedup,
                  c.speedup_low, c.speedup_high, c.rounds, c.level, utc_now(), run_id, winner_seq)
        .run();
  }
  tx.commit();
}

void TuningDb::quarantine(int64_t kernel_id, int64_t device_id, std::string_view opts,
                          std::string_view reason) {
  db_.prepare(R"sql(
      INSERT INTO quarantine (kernel_id, device_id, opts, reason, created_at) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT DO NOTHING)sql")
      .bind_all(kernel_id, device_id, opts, reason, utc_now())
      .run();
}

void TuningDb::record_check(const KernelCheck& c) {
  db_.prepare(R"sql(
      INSERT INTO kernel_checks (kernel_id, device_id, oracle, status, max_error, worst_ratio, unverified,
                                 message, checked_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (kernel_id, device_id) DO UPDATE SET oracle = excluded.oracle, status = excluded.status,
        max_error = excluded.max_error, worst_ratio = excluded.worst_ratio, unverified = excluded.unverified,
        message = excluded.message, checked_at = excluded.checked_at)sql")
      .bind_all(c.kernel_id, c.device_id, c.oracle, c.status, c.max_error, c.worst_ratio, c.unverified,
                c.message, utc_now())
      .run();
}

void TuningDb::demote(int64_t candidate_id, std::string_view reason) {
  Transaction tx(db_);
  db_.prepare("DELETE FROM best WHERE candidate_id = ?").bind_all(candidate_id).run();
  db_.prepare(R"sql(
      INSERT INTO demotions (candidate_id, reason, demoted_at) VALUES (?, ?, ?)
      ON CONFLICT (candidate_id) DO UPDATE SET reason = excluded.reason, demoted_at = excluded.demoted_at)sql")
      .bind_all(candidate_id, reason, utc_now())
      .run();
  tx.commit();
}

}  // namespace tunebed::results
