#include "results/schema.hpp"

#include <sqlite3.h>

#include <string>

namespace tunebed::results {
namespace {

// Version 1: the tables and the two invariant triggers.
constexpr std::string_view kTables = R"sql(
PRAGMA application_id = 1953853029;

-- A device fingerprint: two results are comparable only when all five fields agree.
CREATE TABLE devices (
  id               INTEGER PRIMARY KEY,
  name             TEXT NOT NULL,
  arch             TEXT NOT NULL,
  driver           TEXT NOT NULL,
  compiler         TEXT NOT NULL,
  compiler_version TEXT NOT NULL,
  UNIQUE (name, arch, driver, compiler, compiler_version)
);

-- A kernel is its canonical AST text; hash is the hash of that text and keys the cache.
CREATE TABLE kernels (
  id     INTEGER PRIMARY KEY,
  hash   TEXT NOT NULL UNIQUE,
  ast    TEXT NOT NULL,
  shape  TEXT NOT NULL DEFAULT '',
  flops  INTEGER NOT NULL DEFAULT 0 CHECK (flops >= 0),
  bytes  INTEGER NOT NULL DEFAULT 0 CHECK (bytes >= 0),
  source TEXT NOT NULL DEFAULT ''
);

CREATE TABLE runs (
  id                   INTEGER PRIMARY KEY,
  strategy             TEXT NOT NULL,
  params               TEXT NOT NULL DEFAULT '{}',
  seed                 INTEGER NOT NULL DEFAULT 0,
  budget_candidates    INTEGER,
  budget_seconds       REAL,
  action_space_version TEXT NOT NULL,
  tunebed_version      TEXT NOT NULL,
  git_rev              TEXT NOT NULL,
  host                 TEXT NOT NULL,
  started_at           TEXT NOT NULL,
  ended_at             TEXT,
  status               TEXT NOT NULL DEFAULT 'running'
                       CHECK (status IN ('running', 'completed', 'interrupted', 'failed'))
);

CREATE TABLE candidates (
  id          INTEGER PRIMARY KEY,
  run_id      INTEGER NOT NULL REFERENCES runs(id),
  seq         INTEGER NOT NULL,
  kernel_id   INTEGER NOT NULL REFERENCES kernels(id),
  device_id   INTEGER NOT NULL REFERENCES devices(id),
  opts        TEXT NOT NULL,
  source_hash TEXT NOT NULL DEFAULT '',
  compile_ms  REAL,
  samples_us  TEXT NOT NULL DEFAULT '[]',
  median_us   REAL,
  status      TEXT NOT NULL CHECK (status IN ('ok', 'compile_error', 'crash', 'timeout', 'wrong')),
  error       TEXT NOT NULL DEFAULT '',
  max_error   REAL,
  created_at  TEXT NOT NULL,
  UNIQUE (run_id, seq),
  CHECK (status != 'ok' OR median_us IS NOT NULL)
);
CREATE INDEX candidates_by_kernel_device ON candidates(kernel_id, device_id, median_us);

CREATE TABLE best (
  kernel_id            INTEGER NOT NULL REFERENCES kernels(id),
  device_id            INTEGER NOT NULL REFERENCES devices(id),
  action_space_version TEXT NOT NULL,
  candidate_id         INTEGER NOT NULL REFERENCES candidates(id),
  PRIMARY KEY (kernel_id, device_id, action_space_version)
) WITHOUT ROWID;

CREATE TABLE quarantine (
  kernel_id    INTEGER NOT NULL REFERENCES kernels(id),
  device_id    INTEGER NOT NULL REFERENCES devices(id),
  opts         TEXT NOT NULL,
  reason       TEXT NOT NULL,
  candidate_id INTEGER REFERENCES candidates(id) ON DELETE SET NULL,
  created_at   TEXT NOT NULL,
  PRIMARY KEY (kernel_id, device_id, opts)
) WITHOUT ROWID;

CREATE TRIGGER candidates_update_best AFTER INSERT ON candidates WHEN NEW.status = 'ok'
BEGIN
  INSERT INTO best (kernel_id, device_id, action_space_version, candidate_id)
    SELECT NEW.kernel_id, NEW.device_id, r.action_space_version, NEW.id FROM runs r WHERE r.id = NEW.run_id
  ON CONFLICT (kernel_id, device_id, action_space_version) DO UPDATE SET candidate_id = excluded.candidate_id
    WHERE NEW.median_us < (SELECT c.median_us FROM candidates c WHERE c.id = best.candidate_id);
END;

CREATE TRIGGER candidates_quarantine AFTER INSERT ON candidates WHEN NEW.status IN ('crash', 'timeout')
BEGIN
  INSERT INTO quarantine (kernel_id, device_id, opts, reason, candidate_id, created_at)
    VALUES (NEW.kernel_id, NEW.device_id, NEW.opts, NEW.status, NEW.id, NEW.created_at)
  ON CONFLICT DO NOTHING;
END;
)sql";

// Version 2: runs get a uuid at creation, so that a run keeps its identity when databases are
// merged (a candidate is identified by run uuid + seq), and imported runs record where from.
constexpr std::string_view kRunIdentity = R"sql(
ALTER TABLE runs ADD COLUMN uuid TEXT;
ALTER TABLE runs ADD COLUMN imported_from TEXT;
UPDATE runs SET uuid = lower(hex(randomblob(16))) WHERE uuid IS NULL;
CREATE UNIQUE INDEX runs_by_uuid ON runs(uuid);
CREATE TRIGGER runs_require_uuid BEFORE INSERT ON runs WHEN NEW.uuid IS NULL
BEGIN
  SELECT RAISE(ABORT, 'runs.uuid is required');
END;
)sql";

// Version 3: the views of results/README.md, a stable contract for people and scripts.
constexpr std::string_view kViews = R"sql(
CREATE VIEW v_best AS
SELECT k.hash AS kernel_hash, k.shape AS kernel_shape, k.source AS kernel_source,
       d.name AS device, d.arch, d.driver, d.compiler, d.compiler_version,
       b.action_space_version, c.opts, c.median_us,
       CASE WHEN c.median_us > 0 THEN k.flops / c.median_us / 1e3 END AS gflops,
       CASE WHEN c.median_us > 0 THEN k.bytes / c.median_us / 1e3 END AS gbytes_per_s,
       r.uuid AS run_uuid, c.id AS candidate_id, c.created_at,
       k.id AS kernel_id, d.id AS device_id
FROM best b
JOIN candidates c ON c.id = b.candidate_id
JOIN kernels k ON k.id = b.kernel_id
JOIN devices d ON d.id = b.device_id
JOIN runs r ON r.id = c.run_id;

CREATE VIEW v_failures AS
SELECT c.id AS candidate_id, r.uuid AS run_uuid, c.seq,
       k.hash AS kernel_hash, k.source AS kernel_source, d.name AS device,
       c.opts, c.status, c.error, c.max_error, c.created_at,
       EXISTS (SELECT 1 FROM quarantine q
               WHERE q.kernel_id = c.kernel_id AND q.device_id = c.device_id AND q.opts = c.opts)
         AS quarantined,
       k.id AS kernel_id, d.id AS device_id
FROM candidates c
JOIN runs r ON r.id = c.run_id
JOIN kernels k ON k.id = c.kernel_id
JOIN devices d ON d.id = c.device_id
WHERE c.status != 'ok';

CREATE VIEW v_convergence AS
SELECT r.uuid AS run_uuid, k.hash AS kernel_hash, d.name AS device, c.seq,
       ROW_NUMBER() OVER w AS candidate_index,
       (julianday(c.created_at) - julianday(r.started_at)) * 86400.0 AS elapsed_s,
       c.status, c.median_us,
       MIN(CASE WHEN c.status = 'ok' THEN c.median_us END) OVER w AS best_so_far_us,
       r.id AS run_id, k.id AS kernel_id, d.id AS device_id
FROM candidates c
JOIN runs r ON r.id = c.run_id
JOIN kernels k ON k.id = c.kernel_id
JOIN devices d ON d.id = c.device_id
WINDOW w AS (PARTITION BY c.run_id, c.kernel_id, c.device_id ORDER BY c.seq ROWS UNBOUNDED PRECEDING);
)sql";

// Version 4: fuzz findings (results/findings.hpp). One row per (target, kind, signature); the
// input is the smallest reproducer seen, as hex.
constexpr std::string_view kFindings = R"sql(
CREATE TABLE findings (
  id         INTEGER PRIMARY KEY,
  target     TEXT NOT NULL,
  kind       TEXT NOT NULL CHECK (kind IN ('crash', 'wrong', 'timeout', 'leak')),
  signature  TEXT NOT NULL,
  input      TEXT NOT NULL,
  detail     TEXT NOT NULL DEFAULT '',
  max_error  REAL,
  first_seen TEXT NOT NULL,
  last_seen  TEXT NOT NULL,
  count      INTEGER NOT NULL DEFAULT 1 CHECK (count >= 1),
  minimized  INTEGER NOT NULL DEFAULT 0 CHECK (minimized IN (0, 1)),
  UNIQUE (target, kind, signature)
);
)sql";

// Version 5: the independent check of each kernel on each device (search/tune.hpp, step 2): its
// unoptimized kernel against the AST interpreter's exact run, and that against the Eigen reference
// where the kernel came from a workload. And winners demoted because re-verification found them
// wrong: they leave `best`, with the reason kept here.
constexpr std::string_view kChecks = R"sql(
CREATE TABLE kernel_checks (
  kernel_id   INTEGER NOT NULL REFERENCES kernels(id),
  device_id   INTEGER NOT NULL REFERENCES devices(id),
  oracle      TEXT NOT NULL,
  status      TEXT NOT NULL CHECK (status IN ('ok', 'wrong', 'failed')),
  max_error   REAL,
  worst_ratio REAL,
  unverified  INTEGER NOT NULL DEFAULT 0,
  message     TEXT NOT NULL DEFAULT '',
  checked_at  TEXT NOT NULL,
  PRIMARY KEY (kernel_id, device_id)
) WITHOUT ROWID;

CREATE TABLE demotions (
  candidate_id INTEGER PRIMARY KEY REFERENCES candidates(id) ON DELETE CASCADE,
  reason       TEXT NOT NULL,
  demoted_at   TEXT NOT NULL
);
)sql";

// Version 6: how sure each declared winner is (search/decide.hpp): the deciding comparison of the
// interleaved re-timing, its p-value and the speedup's bootstrap interval.
constexpr std::string_view kConfidence = R"sql(
CREATE TABLE winner_confidence (
  candidate_id    INTEGER PRIMARY KEY REFERENCES candidates(id) ON DELETE CASCADE,
  challenger_opts TEXT,
  incumbent_opts  TEXT,
  kept_incumbent  INTEGER NOT NULL CHECK (kept_incumbent IN (0, 1)),
  p_value         REAL NOT NULL,
  speedup         REAL NOT NULL,
  speedup_low     REAL NOT NULL,
  speedup_high    REAL NOT NULL,
  rounds          INTEGER NOT NULL,
  level           REAL NOT NULL,
  decided_at      TEXT NOT NULL
);
)sql";

// Version 7: a candidate may be `stopped`: the search killed its verification launch once it
// passed the stop line (search/measure.hpp), so it has no time, only "slower than that". It is no
// failure: v_failures leaves it out. SQLite cannot alter a CHECK; widening one is the in-place
// edit its documentation gives for a constraint every stored row still meets (ALTER TABLE,
// "Making Other Kinds Of Table Schema Changes"): rewrite the table's text, bump schema_version.
constexpr std::string_view kStopped = R"sql(
DROP VIEW v_failures;
CREATE VIEW v_failures AS
SELECT c.id AS candidate_id, r.uuid AS run_uuid, c.seq,
       k.hash AS kernel_hash, k.source AS kernel_source, d.name AS device,
       c.opts, c.status, c.error, c.max_error, c.created_at,
       EXISTS (SELECT 1 FROM quarantine q
               WHERE q.kernel_id = c.kernel_id AND q.device_id = c.device_id AND q.opts = c.opts)
         AS quarantined,
       k.id AS kernel_id, d.id AS device_id
FROM candidates c
JOIN runs r ON r.id = c.run_id
JOIN kernels k ON k.id = c.kernel_id
JOIN devices d ON d.id = c.device_id
WHERE c.status NOT IN ('ok', 'stopped');
)sql";

void allow_stopped_candidates(Db& db) {
  constexpr std::string_view before = "'timeout', 'wrong')", after = "'timeout', 'wrong', 'stopped')";
  const int64_t version = db.query_int("PRAGMA schema_version");
  db.exec("PRAGMA writable_schema = ON");
  Statement edit(db, "UPDATE sqlite_schema SET sql = replace(sql, ?, ?) WHERE type = 'table' AND name = 'candidates'");
  edit.bind_all(before, after).run();
  db.exec("PRAGMA schema_version = " + std::to_string(version + 1));
  db.exec("PRAGMA writable_schema = OFF");
  Statement check(db, "SELECT count(*) FROM sqlite_schema WHERE name = 'candidates' AND instr(sql, ?) > 0");
  check.bind_all(after);
  if (!check.step() || check.column_int(0) != 1)
    throw SqliteError(SQLITE_CORRUPT, "the candidates table is not the one tunebed created: its status CHECK differs", "");
}

}  // namespace

const std::vector<Migration>& migrations() {
  static const std::vector<Migration> list = {
      {1, "tables", kTables},          {2, "run-uuid-and-provenance", kRunIdentity}, {3, "views", kViews},
      {4, "fuzz-findings", kFindings}, {5, "kernel-checks-and-demotions", kChecks},
      {6, "winner-confidence", kConfidence},
      {7, "stopped-candidates", kStopped, allow_stopped_candidates},
  };
  return list;
}

int current_schema_version() { return migrations().back().version; }

int schema_version(Db& db) { return static_cast<int>(db.query_int("PRAGMA user_version")); }

void migrate(Db& db, int target) {
  for (const Migration& m : migrations()) {
    if (m.version > target) break;
    Transaction tx(db);
    if (schema_version(db) >= m.version) continue;  // applied already, perhaps by another process
    try {
      db.exec(m.sql);
      if (m.step) m.step(db);
      db.exec("PRAGMA user_version = " + std::to_string(m.version));
    } catch (const SqliteError& e) {
      throw SqliteError(e.code,
                        "migration " + std::to_string(m.version) + " (" + std::string(m.name) +
                            ") failed on " + db.path() + ": " + e.what(),
                        "");
    }
    tx.commit();
  }
}

}  // namespace tunebed::results
