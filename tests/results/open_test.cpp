// Opening a tuning database: creation, schema version, migration of an old file, and refusal of
// files that are missing, not SQLite, damaged, another application's or too new, each with an
// error naming the file and the file left byte for byte as it was.
#include <sqlite3.h>

#include <random>
#include <regex>

#include "results/schema.hpp"
#include "support.hpp"

namespace tunebed::results::testing {
namespace {

class OpenTest : public DbTest {
 protected:
  // Expects opening PATH in both modes to fail with a message containing PATH and WHAT, and the
  // directory (the file's bytes and its siblings) to be unchanged.
  void expect_refused(const std::string& path, const std::string& what) {
    std::string before = read_bytes(path);
    auto listing = [&] {
      std::vector<std::string> names;
      for (const auto& e : std::filesystem::directory_iterator(dir_)) names.push_back(e.path().filename());
      std::sort(names.begin(), names.end());
      return names;
    };
    auto files_before = listing();
    for (auto mode : {TuningDb::Mode::existing, TuningDb::Mode::create}) {
      try {
        TuningDb::open(path, mode);
        ADD_FAILURE() << "opening " << path << " succeeded";
      } catch (const DbError& e) {
        EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
      }
    }
    EXPECT_EQ(read_bytes(path), before) << "the file was modified";
    EXPECT_EQ(listing(), files_before) << "files were created beside it";
  }
};

TEST_F(OpenTest, CreateMakesTheCurrentSchemaInWalMode) {
  TuningDb db = TuningDb::open(file("t.db"), TuningDb::Mode::create);
  EXPECT_EQ(db.schema_version(), current_schema_version());
  EXPECT_EQ(results::raw_connection(db).query_int("PRAGMA application_id"), kApplicationId);
  EXPECT_EQ(results::raw_connection(db).query_text("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(results::raw_connection(db).query_int("PRAGMA foreign_keys"), 1);
  for (const char* name : {"devices", "kernels", "runs", "candidates", "best", "quarantine", "v_best",
                           "v_failures", "v_convergence"}) {
    Statement st = results::raw_connection(db).prepare("SELECT count(*) FROM sqlite_schema WHERE name = ?");
    st.bind_all(name).step();
    EXPECT_EQ(st.column_int(0), 1) << name;
  }
  EXPECT_TRUE(db.integrity_check().empty());
}

TEST_F(OpenTest, MigrationVersionsAreConsecutive) {
  int expected = 1;
  for (const Migration& m : migrations()) EXPECT_EQ(m.version, expected++) << m.name;
  EXPECT_EQ(current_schema_version(), expected - 1);
}

TEST_F(OpenTest, ReopeningKeepsRowsAndVersion) {
  int64_t device;
  {
    TuningDb db = TuningDb::open(file("t.db"), TuningDb::Mode::create);
    device = db.upsert_device(cpu());
  }
  for (auto mode : {TuningDb::Mode::existing, TuningDb::Mode::create}) {
    TuningDb db = TuningDb::open(file("t.db"), mode);
    EXPECT_EQ(db.schema_version(), current_schema_version());
    EXPECT_EQ(db.upsert_device(cpu()), device);
    EXPECT_EQ(count(db, "SELECT count(*) FROM devices"), 1);
  }
}

// A file made by the first schema version, with rows, is migrated in place: the rows survive,
// old runs get uuids, and the views see them.
TEST_F(OpenTest, VersionOneFileMigratesToCurrent) {
  {
    Db raw = Db::open(file("v1.db"), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    migrate(raw, 1);
    ASSERT_EQ(schema_version(raw), 1);
    raw.exec(R"sql(
      INSERT INTO devices VALUES (1, 'cpu0', 'x86_64', 'none', 'clang', '15');
      INSERT INTO kernels (id, hash, ast) VALUES (1, 'h1', 'SINK()');
      INSERT INTO runs (id, strategy, action_space_version, tunebed_version, git_rev, host, started_at, status)
        VALUES (1, 'beam', 'as1', '0.0.1', 'old', 'h', '2025-01-01T00:00:00.000Z', 'completed'),
               (2, 'random', 'as1', '0.0.1', 'old', 'h', '2025-01-02T00:00:00.000Z', 'completed');
      INSERT INTO candidates (run_id, seq, kernel_id, device_id, opts, median_us, status, created_at)
        VALUES (1, 1, 1, 1, 'a', 20.0, 'ok', '2025-01-01T00:00:01.000Z'),
               (1, 2, 1, 1, 'b', 10.0, 'ok', '2025-01-01T00:00:02.000Z'),
               (2, 1, 1, 1, 'c', 15.0, 'ok', '2025-01-02T00:00:01.000Z');
    )sql");
  }
  TuningDb db = TuningDb::open(file("v1.db"), TuningDb::Mode::existing);
  EXPECT_EQ(db.schema_version(), current_schema_version());
  std::vector<results::Run> runs = db.runs();
  ASSERT_EQ(runs.size(), 2u);
  const std::regex uuid("[0-9a-f]{32}");
  EXPECT_TRUE(std::regex_match(runs[0].uuid, uuid)) << runs[0].uuid;
  EXPECT_TRUE(std::regex_match(runs[1].uuid, uuid)) << runs[1].uuid;
  EXPECT_NE(runs[0].uuid, runs[1].uuid);
  std::vector<BestRow> best = db.best();
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].opts, "b");
  EXPECT_EQ(best[0].run_uuid, runs[0].uuid);
  EXPECT_EQ(count(db, "SELECT count(*) FROM candidates"), 3);
  EXPECT_TRUE(db.integrity_check().empty());
}

// Migration 7 widens the candidates' status CHECK in place: a file of version 6 keeps its rows,
// then takes a `stopped` candidate, which neither quarantines its opts nor counts as a failure.
TEST_F(OpenTest, VersionSixFileTakesStoppedCandidatesAfterMigrating) {
  constexpr std::string_view rows = R"sql(
    INSERT INTO devices VALUES (1, 'cpu0', 'x86_64', 'none', 'clang', '15');
    INSERT INTO kernels (id, hash, ast) VALUES (1, 'h1', 'SINK()');
    INSERT INTO runs (id, strategy, action_space_version, tunebed_version, git_rev, host, started_at, status, uuid)
      VALUES (1, 'beam', 'as1', '0.0.1', 'old', 'h', '2025-01-01T00:00:00.000Z', 'completed', 'u1');
    INSERT INTO candidates (run_id, seq, kernel_id, device_id, opts, median_us, status, created_at)
      VALUES (1, 1, 1, 1, 'a', 20.0, 'ok', '2025-01-01T00:00:01.000Z'),
             (1, 2, 1, 1, 'b', NULL, 'timeout', '2025-01-01T00:00:02.000Z');
  )sql";
  constexpr std::string_view stopped = R"sql(
    INSERT INTO candidates (run_id, seq, kernel_id, device_id, opts, status, error, created_at)
      VALUES (1, 3, 1, 1, 'c', 'stopped', 'past its stop line', '2025-01-01T00:00:03.000Z');
  )sql";
  {
    Db raw = Db::open(file("v6.db"), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    migrate(raw, 6);
    raw.exec(rows);
    EXPECT_THROW(raw.exec(stopped), SqliteError);  // version 6 has no such status
  }
  TuningDb db = TuningDb::open(file("v6.db"), TuningDb::Mode::existing);
  EXPECT_EQ(db.schema_version(), current_schema_version());
  Db& raw = results::raw_connection(db);
  raw.exec(stopped);
  EXPECT_EQ(count(db, "SELECT count(*) FROM candidates"), 3);
  EXPECT_EQ(raw.query_text("SELECT group_concat(opts) FROM v_failures"), "b");
  EXPECT_EQ(raw.query_text("SELECT group_concat(opts) FROM quarantine"), "b");
  EXPECT_EQ(db.best()[0].opts, "a");
  EXPECT_THROW(raw.exec("UPDATE candidates SET status = 'slow' WHERE seq = 3"), SqliteError);  // still checked
  EXPECT_TRUE(db.integrity_check().empty());
}

// A fresh database takes the same path: the status CHECK it ends with names `stopped`.
TEST_F(OpenTest, AFreshDatabaseAllowsStoppedCandidates) {
  TuningDb db = TuningDb::open(file("t.db"), TuningDb::Mode::create);
  EXPECT_NE(results::raw_connection(db)
                .query_text("SELECT sql FROM sqlite_schema WHERE name = 'candidates'")
                .find("'wrong', 'stopped')"),
            std::string::npos);
}

TEST_F(OpenTest, MissingFileInExistingModeIsAnErrorAndCreatesNothing) {
  std::string path = file("absent.db");
  try {
    TuningDb::open(path, TuningDb::Mode::existing);
    FAIL() << "opened a missing file";
  } catch (const DbError& e) {
    EXPECT_EQ(std::string(e.what()), "no tuning database at " + path);
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(std::filesystem::is_empty(dir_));
}

TEST_F(OpenTest, RandomBytesAreRefusedAndLeftUntouched) {
  std::mt19937 rng(20261130);
  std::string noise(16384, '\0');
  for (char& c : noise) c = static_cast<char>(rng());
  std::ofstream(file("noise.db"), std::ios::binary) << noise;
  expect_refused(file("noise.db"), "not a tuning database");
}

TEST_F(OpenTest, DamagedDatabaseFailsQuickCheckAndIsLeftUntouched) {
  {
    TuningDb db = TuningDb::open(file("t.db"), TuningDb::Mode::create);
    int64_t d = db.upsert_device(cpu());
    for (int i = 0; i < 200; ++i) db.upsert_kernel(kernel("k" + std::to_string(i)));
    (void)d;
  }
  // Scribble over the middle of the file, past the header page, where the b-tree pages live.
  std::string bytes = read_bytes(file("t.db"));
  ASSERT_GT(bytes.size(), 16384u);
  for (size_t i = 4096; i < 12288; ++i) bytes[i] = static_cast<char>(0xA5);
  std::ofstream(file("t.db"), std::ios::binary | std::ios::trunc) << bytes;
  expect_refused(file("t.db"), "");
}

TEST_F(OpenTest, AnotherApplicationsDatabaseIsRefused) {
  {
    Db raw = Db::open(file("other.db"), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    raw.exec("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine')");
  }
  expect_refused(file("other.db"), "another application");
}

TEST_F(OpenTest, NewerSchemaIsRefused) {
  { TuningDb::open(file("t.db"), TuningDb::Mode::create); }
  {
    Db raw = Db::open(file("t.db"), SQLITE_OPEN_READWRITE);
    raw.exec("PRAGMA user_version = " + std::to_string(current_schema_version() + 1));
  }
  expect_refused(file("t.db"), "newer than this tunebed");
}

TEST_F(OpenTest, EmptyFileIsRefusedWhenExistingIsRequiredAndInitialisedOnCreate) {
  std::ofstream(file("empty.db")).close();
  EXPECT_THROW(TuningDb::open(file("empty.db"), TuningDb::Mode::existing), DbError);
  EXPECT_EQ(std::filesystem::file_size(file("empty.db")), 0u);
  TuningDb db = TuningDb::open(file("empty.db"), TuningDb::Mode::create);
  EXPECT_EQ(db.schema_version(), current_schema_version());
}

TEST_F(OpenTest, ReadOnlyOpenRefusesAnOldSchemaInsteadOfMigrating) {
  {
    Db raw = Db::open(file("v1.db"), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    migrate(raw, 1);
  }
  std::string before = read_bytes(file("v1.db"));
  EXPECT_THROW(TuningDb::open_read_only(file("v1.db")), DbError);
  EXPECT_EQ(read_bytes(file("v1.db")), before);
}

}  // namespace
}  // namespace tunebed::results::testing
