// Opening a tuning database safely, and the maintenance operations (checks, prune, vacuum).
#include "results/tuning_db.hpp"

#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "results/schema.hpp"

namespace tunebed::results {
namespace {

// Long enough for another process to commit a large batch or finish a migration.
constexpr int kBusyTimeoutMs = 30000;

enum class FileState { missing, empty, tuning_db };

// PATH as an SQLite URI filename, for query parameters.
std::string uri(const std::string& path, std::string_view query) {
  std::string out = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "?" + std::string(query);
}

// Inspects PATH through a read-only connection and throws unless it is absent, an empty SQLite
// file, or a tuning database this tunebed can read. Even a read-only connection creates the -wal
// and -shm files of a WAL database that has none; so when there is no -wal file (no process has
// the database open) it reads the file as immutable, which creates nothing. Should a writer
// start meanwhile, the worst outcome is a spurious refusal, never a changed file.
FileState inspect(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return FileState::missing;
  try {
    bool idle = !std::filesystem::exists(path + "-wal", ec);
    Db ro = Db::open(uri(path, idle ? "mode=ro&immutable=1" : "mode=ro"), SQLITE_OPEN_READONLY);
    sqlite3_busy_timeout(ro.handle(), kBusyTimeoutMs);
    std::vector<std::string> problems;
    try {
      Statement check = ro.prepare("PRAGMA quick_check");
      while (check.step() && problems.size() < 5) problems.push_back(check.column_text(0));
    } catch (const SqliteError& e) {
      throw DbError(path + " is not a tuning database: " + e.message);
    }
    if (problems != std::vector<std::string>{"ok"}) {
      std::string list;
      for (const auto& p : problems) list += (list.empty() ? "" : "; ") + p;
      throw DbError(path + " is corrupt (PRAGMA quick_check: " + list + ")");
    }
    int version = schema_version(ro);
    int64_t app = ro.query_int("PRAGMA application_id");
    if (version == 0 && ro.query_int("SELECT count(*) FROM sqlite_schema") == 0) return FileState::empty;
    if (app != kApplicationId) {
      throw DbError(path +
                    " is an SQLite database of another application, not a tuning database (application_id " +
                    std::to_string(app) + ")");
    }
    if (version > current_schema_version()) {
      throw DbError(path + " has schema version " + std::to_string(version) +
                    ", newer than this tunebed knows (" + std::to_string(current_schema_version()) +
                    "); open it with a newer tunebed");
    }
    return FileState::tuning_db;
  } catch (const SqliteError& e) {
    throw DbError("cannot read tuning database " + path + ": " + e.message);
  }
}

void configure(Db& db) {
  sqlite3_busy_timeout(db.handle(), kBusyTimeoutMs);
  db.exec("PRAGMA foreign_keys = ON");
}

Db open_connection(const std::string& path, int flags) {
  Db db = Db::open(path, flags);
  configure(db);
  // WAL lets readers run beside one writer; synchronous=NORMAL keeps every commit across a
  // killed process (only a power loss can undo the last commits), at a fraction of FULL's cost.
  if (std::string mode = db.query_text("PRAGMA journal_mode = WAL"); mode != "wal") {
    throw DbError("cannot put " + path + " in WAL mode (journal_mode stays '" + mode + "')");
  }
  db.exec("PRAGMA synchronous = NORMAL");
  return db;
}

// Throws unless STATE is that of a tuning database.
void require_tuning_db(const std::string& path, FileState state) {
  if (state == FileState::missing) throw DbError("no tuning database at " + path);
  if (state == FileState::empty) throw DbError(path + " is an empty file, not a tuning database");
}

}  // namespace

Db connect(const std::string& path) { return open_connection(path, SQLITE_OPEN_READWRITE); }

Db& raw_connection(TuningDb& db) { return db.db_; }

TuningDb TuningDb::open(const std::string& path, Mode mode) {
  FileState state = inspect(path);
  if (mode == Mode::existing) require_tuning_db(path, state);
  try {
    int create = state == FileState::missing ? SQLITE_OPEN_CREATE : 0;
    TuningDb db(open_connection(path, SQLITE_OPEN_READWRITE | create));
    migrate(db.db_);
    return db;
  } catch (const SqliteError& e) {
    throw DbError("cannot open tuning database " + path + ": " + e.message);
  }
}

TuningDb TuningDb::open_read_only(const std::string& path) {
  require_tuning_db(path, inspect(path));
  Db db = Db::open(path, SQLITE_OPEN_READONLY);
  configure(db);
  if (int version = results::schema_version(db); version != current_schema_version()) {
    throw DbError(path + " has schema version " + std::to_string(version) + ", not " +
                  std::to_string(current_schema_version()) + "; migrate it first (tunebed db migrate " +
                  path + ")");
  }
  return TuningDb(std::move(db));
}

int TuningDb::schema_version() { return results::schema_version(db_); }

std::string utc_now() {
  using namespace std::chrono;
  auto now = system_clock::now();
  std::time_t secs = system_clock::to_time_t(now);
  auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(ms));
  return out;
}

std::vector<std::string> TuningDb::integrity_check() {
  std::vector<std::string> problems;
  Statement integrity = db_.prepare("PRAGMA integrity_check");
  while (integrity.step()) {
    if (std::string line = integrity.column_text(0); line != "ok") problems.push_back(line);
  }
  Statement fk = db_.prepare("PRAGMA foreign_key_check");
  while (fk.step()) {
    problems.push_back("foreign key: " + fk.column_text(0) + " row " + fk.column_text(1) +
                       " refers to a missing " + fk.column_text(2) + " row");
  }
  return problems;
}

int64_t TuningDb::prune(int keep_top_k) {
  if (keep_top_k < 1)
    throw DbError("prune: keep_top_k must be at least 1, not " + std::to_string(keep_top_k));
  Transaction tx(db_);
  Statement del = db_.prepare(R"sql(
    WITH kept AS (
      SELECT id FROM (
        SELECT id, ROW_NUMBER() OVER (PARTITION BY kernel_id, device_id ORDER BY median_us, id) AS rank
        FROM candidates WHERE status = 'ok')
      WHERE rank <= ?1)
    DELETE FROM candidates
    WHERE run_id IN (SELECT id FROM runs WHERE status != 'running')
      AND id NOT IN (SELECT id FROM kept)
      AND id NOT IN (SELECT candidate_id FROM best))sql");
  del.bind_all(keep_top_k).run();
  int64_t deleted = db_.changes();
  tx.commit();
  return deleted;
}

void TuningDb::vacuum() { db_.exec("VACUUM"); }

}  // namespace tunebed::results
