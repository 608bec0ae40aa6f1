// Read-only queries. Where a view exists (v_best, v_failures, v_convergence) the query reads the
// view, so the C++ API and a person at the sqlite3 prompt see the same rows.
#include <array>
#include <map>

#include "results/json_lines.hpp"
#include "results/tuning_db.hpp"

namespace tunebed::results {
namespace {

// The WHERE clause shared by the filtered views; ?1 kernel hash prefix, ?2 device id (NULL: any),
// ?3 workload (kernel source) prefix.
constexpr std::string_view kFilterWhere =
    " WHERE substr(kernel_hash, 1, length(?1)) = ?1 AND (?2 IS NULL OR device_id = ?2)"
    " AND substr(kernel_source, 1, length(?3)) = ?3";

Run read_run(const Statement& st) {
  Run r;
  r.id = st.column_int(0);
  r.uuid = st.column_text(1);
  r.strategy = st.column_text(2);
  r.params = st.column_text(3);
  r.seed = st.column_int(4);
  r.budget_candidates = st.column_opt<int64_t>(5);
  r.budget_seconds = st.column_opt<double>(6);
  r.action_space_version = st.column_text(7);
  r.tunebed_version = st.column_text(8);
  r.git_rev = st.column_text(9);
  r.host = st.column_text(10);
  r.started_at = st.column_text(11);
  r.ended_at = st.column_text(12);
  r.status = parse_run_status(st.column_text(13));
  r.imported_from = st.column_text(14);
  return r;
}

constexpr std::string_view kRunColumns =
    "SELECT id, uuid, strategy, params, seed, budget_candidates, budget_seconds, action_space_version, "
    "tunebed_version, git_rev, host, started_at, ended_at, status, imported_from FROM runs";

// Resolves what a person typed with SQL that returns (id, label, exact) rows: an exact match
// (a row id) wins, otherwise the match (a name, a hash or uuid prefix) must be unique.
int64_t resolve(Db& db, std::string_view what, std::string_view spec, std::string_view sql) {
  Statement st = db.prepare(sql);
  st.bind_all(spec);
  std::vector<std::pair<int64_t, std::string>> found;
  while (st.step() && found.size() < 6) {
    if (st.column_int(2) != 0) return st.column_int(0);
    found.emplace_back(st.column_int(0), st.column_text(1));
  }
  if (found.empty())
    throw DbError("no " + std::string(what) + " matches '" + std::string(spec) + "' in " + db.path());
  if (found.size() > 1) {
    std::string list;
    for (const auto& [id, name] : found)
      list += (list.empty() ? "" : ", ") + name + " (id " + std::to_string(id) + ")";
    throw DbError(std::string(what) + " '" + std::string(spec) + "' is ambiguous: " + list);
  }
  return found[0].first;
}

BestRow read_best(const Statement& st) {
  BestRow b;
  b.kernel_hash = st.column_text(0);
  b.kernel_shape = st.column_text(1);
  b.kernel_source = st.column_text(2);
  b.device_id = st.column_int(3);
  b.device = st.column_text(4);
  b.arch = st.column_text(5);
  b.driver = st.column_text(6);
  b.compiler = st.column_text(7);
  b.compiler_version = st.column_text(8);
  b.action_space_version = st.column_text(9);
  b.opts = st.column_text(10);
  b.median_us = st.column_double(11);
  b.gflops = st.column_opt<double>(12);
  b.gbytes_per_s = st.column_opt<double>(13);
  b.run_uuid = st.column_text(14);
  b.candidate_id = st.column_int(15);
  b.created_at = st.column_text(16);
  return b;
}

// Pairs the winners in A_ROWS and B_ROWS by kernel, and also by device fingerprint and
// action-space version when BY_FINGERPRINT. Where one side has several winners for a key (several
// versions, when not by fingerprint), the fastest stands for it.
std::vector<Comparison> pair_winners(const std::vector<BestRow>& a_rows, const std::vector<BestRow>& b_rows,
                                     bool by_fingerprint) {
  std::map<std::array<std::string, 7>, Comparison> paired;
  auto add = [&](const std::vector<BestRow>& rows, std::optional<Winner> Comparison::*side) {
    for (const BestRow& row : rows) {
      std::array<std::string, 7> key{row.kernel_hash};
      if (by_fingerprint) {
        key = {row.kernel_hash,         row.device, row.arch, row.driver, row.compiler, row.compiler_version,
               row.action_space_version};
      }
      Comparison& c = paired[key];
      c.kernel_hash = row.kernel_hash;
      c.kernel_shape = row.kernel_shape;
      c.kernel_source = row.kernel_source;
      if (by_fingerprint) {
        c.device = row.device;
        c.action_space_version = row.action_space_version;
      }
      auto& w = c.*side;
      if (!w || row.median_us < w->median_us) w = Winner{row.opts, row.median_us};
    }
  };
  add(a_rows, &Comparison::a);
  add(b_rows, &Comparison::b);
  std::vector<Comparison> out;
  out.reserve(paired.size());
  for (auto& [key, c] : paired) out.push_back(std::move(c));
  return out;
}

}  // namespace

bool TuningDb::is_quarantined(int64_t kernel_id, int64_t device_id, std::string_view opts) {
  Statement st = db_.prepare("SELECT 1 FROM quarantine WHERE kernel_id = ? AND device_id = ? AND opts = ?");
  return st.bind_all(kernel_id, device_id, opts).step();
}

std::vector<std::string> TuningDb::quarantined_opts(int64_t kernel_id, int64_t device_id) {
  Statement st =
      db_.prepare("SELECT opts FROM quarantine WHERE kernel_id = ? AND device_id = ? ORDER BY opts");
  st.bind_all(kernel_id, device_id);
  std::vector<std::string> out;
  while (st.step()) out.push_back(st.column_text(0));
  return out;
}

std::optional<KernelCheck> TuningDb::kernel_check(int64_t kernel_id, int64_t device_id) {
  Statement st = db_.prepare(R"sql(
      SELECT oracle, status, max_error, worst_ratio, unverified, message, checked_at
      FROM kernel_checks WHERE kernel_id = ? AND device_id = ?)sql");
  if (!st.bind_all(kernel_id, device_id).step()) return std::nullopt;
  return KernelCheck{kernel_id,
                     device_id,
                     st.column_text(0),
                     st.column_text(1),
                     st.column_opt<double>(2),
                     st.column_opt<double>(3),
                     st.column_int(4),
                     st.column_text(5),
                     st.column_text(6)};
}

std::optional<std::string> TuningDb::demotion_reason(int64_t candidate_id) {
  Statement st = db_.prepare("SELECT reason FROM demotions WHERE candidate_id = ?");
  if (!st.bind_all(candidate_id).step()) return std::nullopt;
  return st.column_text(0);
}

std::optional<BestEntry> TuningDb::cached_best(int64_t kernel_id, int64_t device_id,
                                               std::string_view action_space_version) {
  Statement st = db_.prepare(R"sql(
      SELECT c.id, r.uuid, c.opts, c.source_hash, c.created_at, c.median_us
      FROM best b JOIN candidates c ON c.id = b.candidate_id JOIN runs r ON r.id = c.run_id
      WHERE b.kernel_id = ? AND b.device_id = ? AND b.action_space_version = ?)sql");
  if (!st.bind_all(kernel_id, device_id, action_space_version).step()) return std::nullopt;
  return BestEntry{st.column_int(0),  st.column_text(1), st.column_text(2),
                   st.column_text(3), st.column_text(4), st.column_double(5)};
}

std::optional<Confidence> TuningDb::confidence(int64_t candidate_id) {
  Statement st = db_.prepare(R"sql(
      SELECT challenger_opts, incumbent_opts, kept_incumbent, p_value, speedup, speedup_low, speedup_high, rounds,
             level
      FROM winner_confidence WHERE candidate_id = ?)sql");
  if (!st.bind_all(candidate_id).step()) return std::nullopt;
  return Confidence{st.column_opt<std::string>(0), st.column_opt<std::string>(1), st.column_int(2) != 0,
                    st.column_double(3), st.column_double(4), st.column_double(5),
                    st.column_double(6), st.column_int(7),    st.column_double(8)};
}

StoredWinner TuningDb::stored_winner(std::string_view kernel_hash, const Device& device,
                                     std::string_view action_space_version) {
  Statement st = db_.prepare(R"sql(
      SELECT b.kernel_id, b.device_id, b.action_space_version
      FROM best b JOIN kernels k ON k.id = b.kernel_id JOIN devices d ON d.id = b.device_id
      WHERE k.hash = ? AND d.name = ? AND d.arch = ? AND d.driver = ? AND d.compiler = ?
        AND d.compiler_version = ?
      ORDER BY b.action_space_version)sql");
  st.bind_all(kernel_hash, device.name, device.arch, device.driver, device.compiler, device.compiler_version);
  StoredWinner out;
  while (st.step()) {
    const std::string version = st.column_text(2);
    if (version == action_space_version)
      out.winner = cached_best(st.column_int(0), st.column_int(1), version);
    else
      out.other_versions.push_back(version);
  }
  return out;
}

std::vector<CommittedCandidate> TuningDb::candidates_of_run(int64_t run_id) {
  Statement st = db_.prepare(
      "SELECT seq, kernel_id, device_id, opts, status, median_us, source_hash FROM candidates WHERE run_id = ? "
      "ORDER BY seq");
  st.bind_all(run_id);
  std::vector<CommittedCandidate> out;
  while (st.step()) {
    out.push_back({st.column_int(0), st.column_int(1), st.column_int(2), st.column_text(3),
                   parse_candidate_status(st.column_text(4)), st.column_opt<double>(5), st.column_text(6)});
  }
  return out;
}

Run TuningDb::run(int64_t run_id) {
  Statement st = db_.prepare(std::string(kRunColumns) + " WHERE id = ?");
  if (!st.bind_all(run_id).step())
    throw DbError("no run with id " + std::to_string(run_id) + " in " + path());
  return read_run(st);
}

std::vector<Run> TuningDb::runs() {
  Statement st = db_.prepare(std::string(kRunColumns) + " ORDER BY started_at, id");
  std::vector<Run> out;
  while (st.step()) out.push_back(read_run(st));
  return out;
}

std::vector<BestRow> TuningDb::best(const Filter& f) {
  Statement st = db_.prepare(
      "SELECT kernel_hash, kernel_shape, kernel_source, device_id, device, arch, driver, compiler, "
      "compiler_version, action_space_version, opts, median_us, gflops, gbytes_per_s, run_uuid, "
      "candidate_id, "
      "created_at FROM v_best" +
      std::string(kFilterWhere) + " ORDER BY kernel_hash, device, device_id, action_space_version");
  st.bind_all(f.kernel, f.device_id, f.workload);
  std::vector<BestRow> out;
  while (st.step()) out.push_back(read_best(st));
  return out;
}

std::vector<CandidateRow> TuningDb::history(int64_t kernel_id) {
  Statement st = db_.prepare(R"sql(
      SELECT c.id, r.uuid, c.seq, c.device_id, d.name, c.opts, c.source_hash, c.compile_ms, c.samples_us,
             c.median_us, c.status, c.error, c.max_error, c.created_at
      FROM candidates c JOIN runs r ON r.id = c.run_id JOIN devices d ON d.id = c.device_id
      WHERE c.kernel_id = ? ORDER BY c.created_at, c.run_id, c.seq)sql");
  st.bind_all(kernel_id);
  std::vector<CandidateRow> out;
  while (st.step()) {
    out.push_back({st.column_int(0), st.column_text(1), st.column_int(2), st.column_int(3), st.column_text(4),
                   st.column_text(5), st.column_text(6), st.column_opt<double>(7),
                   parse_json_numbers(st.column_text(8)), st.column_opt<double>(9),
                   parse_candidate_status(st.column_text(10)), st.column_text(11), st.column_opt<double>(12),
                   st.column_text(13)});
  }
  return out;
}

std::vector<FailureRow> TuningDb::failures(const Filter& f) {
  Statement st = db_.prepare(
      "SELECT candidate_id, run_uuid, seq, kernel_hash, kernel_source, device, opts, status, error, "
      "max_error, "
      "created_at, quarantined FROM v_failures" +
      std::string(kFilterWhere) + " ORDER BY created_at, candidate_id");
  st.bind_all(f.kernel, f.device_id, f.workload);
  std::vector<FailureRow> out;
  while (st.step()) {
    out.push_back({st.column_int(0), st.column_text(1), st.column_int(2), st.column_text(3),
                   st.column_text(4), st.column_text(5), st.column_text(6),
                   parse_candidate_status(st.column_text(7)), st.column_text(8), st.column_opt<double>(9),
                   st.column_text(10), st.column_int(11) != 0});
  }
  return out;
}

std::vector<ConvergencePoint> TuningDb::convergence(int64_t run_id) {
  Statement st = db_.prepare(R"sql(
      SELECT run_uuid, kernel_hash, device, seq, candidate_index, elapsed_s, status, median_us, best_so_far_us
      FROM v_convergence WHERE run_id = ? ORDER BY kernel_hash, device_id, seq)sql");
  st.bind_all(run_id);
  std::vector<ConvergencePoint> out;
  while (st.step()) {
    out.push_back({st.column_text(0), st.column_text(1), st.column_text(2), st.column_int(3),
                   st.column_int(4), st.column_double(5), parse_candidate_status(st.column_text(6)),
                   st.column_opt<double>(7), st.column_opt<double>(8)});
  }
  return out;
}

std::vector<Comparison> TuningDb::compare(int64_t device_a, int64_t device_b) {
  return pair_winners(best({.device_id = device_a}), best({.device_id = device_b}), false);
}

std::vector<Comparison> TuningDb::diff(TuningDb& other) { return pair_winners(best(), other.best(), true); }

int64_t TuningDb::resolve_device(std::string_view spec) {
  return resolve(
      db_, "device", spec,
      "SELECT id, name || ' ' || arch || ' ' || compiler || ' ' || compiler_version, "
      "CAST(id AS TEXT) = ?1 AS exact FROM devices WHERE exact OR name = ?1 ORDER BY exact DESC, id");
}

int64_t TuningDb::resolve_kernel(std::string_view spec) {
  if (spec.empty()) throw DbError("empty kernel hash");
  return resolve(db_, "kernel", spec,
                 "SELECT id, hash, hash = ?1 AS exact FROM kernels WHERE substr(hash, 1, length(?1)) = ?1 "
                 "ORDER BY exact DESC, hash");
}

namespace {

std::optional<Kernel> kernel_where(Db& db, const char* condition, const auto& key) {
  Statement st =
      db.prepare(std::string("SELECT id, hash, ast, shape, flops, bytes, source FROM kernels WHERE ") + condition);
  st.bind_all(key);
  if (!st.step()) return std::nullopt;
  return Kernel{.id = st.column_int(0),
                .hash = st.column_text(1),
                .ast = st.column_text(2),
                .shape = st.column_text(3),
                .flops = st.column_int(4),
                .bytes = st.column_int(5),
                .source = st.column_text(6)};
}

}  // namespace

Kernel TuningDb::kernel(int64_t id) {
  std::optional<Kernel> k = kernel_where(db_, "id = ?", id);
  if (!k) throw DbError("no kernel " + std::to_string(id) + " in " + path());
  return *k;
}

std::optional<Kernel> TuningDb::kernel(std::string_view hash) { return kernel_where(db_, "hash = ?", hash); }

int64_t TuningDb::resolve_run(std::string_view spec) {
  if (spec.empty()) throw DbError("empty run id");
  return resolve(db_, "run", spec,
                 "SELECT id, uuid, CAST(id AS TEXT) = ?1 OR uuid = ?1 AS exact FROM runs "
                 "WHERE exact OR substr(uuid, 1, length(?1)) = ?1 ORDER BY exact DESC, id");
}

std::vector<std::pair<std::string, int64_t>> TuningDb::table_counts() {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const char* table : {"devices", "kernels", "runs", "candidates", "best", "quarantine"}) {
    out.emplace_back(table, db_.query_int(std::string("SELECT count(*) FROM ") + table));
  }
  return out;
}

}  // namespace tunebed::results
