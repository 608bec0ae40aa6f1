// `tunebed db` through the real program, on the fixture database (db_fixture.hpp).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <string>

#include "results/schema.hpp"
#include "tests/harness/db_fixture.hpp"

namespace tunebed::testing {
namespace {

class DbE2E : public DbFixture {};

TEST_F(DbE2E, InfoCountsTheRowsOfEachTable) {
  Result r = tunebed("db info --format json --db " + db_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string version =
      R"({"item":"schema_version","value":)" + std::to_string(results::current_schema_version()) + "}";
  for (const std::string& row : {version, std::string(R"({"item":"devices","value":2})"),
                                  std::string(R"({"item":"kernels","value":3})"),
                                  std::string(R"({"item":"runs","value":3})"),
                                  std::string(R"({"item":"candidates","value":20})"),
                                  std::string(R"({"item":"best","value":4})"),
                                  std::string(R"({"item":"quarantine","value":2})")}) {
    EXPECT_NE(r.out.find(row), std::string::npos) << row << "\n" << r.out;
  }
}

TEST_F(DbE2E, CheckPassesASoundFile) {
  Result r = tunebed("db check --db " + db_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, db_ + ": ok\n");
  EXPECT_EQ(tunebed("db check -q --db " + db_).out, "");
}

TEST_F(DbE2E, CheckFindsCorruptionExits1AndChangesNothing) {
  std::string bytes = read_file(db_);
  for (std::size_t i = 4096; i < bytes.size() - 1024; i += 5) bytes[i] = '\0';
  std::ofstream(db_, std::ios::binary | std::ios::trunc) << bytes;
  Result r = tunebed("db check --db " + db_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out.rfind(db_ + ": " + db_ + " is ", 0), 0u) << r.out;  // corrupt, or malformed past its header
  EXPECT_EQ(count(r.out, "\n"), 1) << r.out;
  EXPECT_EQ(read_file(db_), bytes);
}

TEST_F(DbE2E, CheckOfAMissingFileIsBadInput) {
  Result r = tunebed("db check --db " + path("absent.db"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: no tuning database at " + path("absent.db") + "\n");
  EXPECT_FALSE(std::filesystem::exists(path("absent.db")));
}

TEST_F(DbE2E, PruneKeepsTheTopKAndEveryWinner) {
  std::string winners = tunebed("query best --format csv --db " + db_).out;
  Result r = tunebed("db prune --keep-top 1 --db " + db_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // 20 candidates: the running-run rule does not apply (all finished); kept: one ok per (kernel,
  // device) = 4 (the winners); the quarantined crash and timeout candidates go too.
  EXPECT_EQ(r.out, db_ + ": deleted 16 candidate(s), kept the top 1\n");
  EXPECT_EQ(tunebed("query best --format csv --db " + db_).out, winners);
  EXPECT_EQ(tunebed("query history 7b1e -q --db " + db_).out.find("GROUPTOP:0:16"), std::string::npos);
}

TEST_F(DbE2E, PruneRejectsABadKAndLeavesTheFileAlone) {
  std::string before = read_file(db_);
  for (const char* k : {"0", "-3", "many", "2.5"}) {
    Result r = tunebed(std::string("db prune --keep-top ") + k + " --db " + db_);
    EXPECT_EQ(r.exit_code, 2) << k;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    EXPECT_EQ(count(r.err, "\n"), 1) << r.err;
  }
  EXPECT_EQ(tunebed("db prune --keep-top 0 --db " + db_).err,
            "error: --keep-top must be at least 1, not 0\n");
  EXPECT_EQ(tunebed("db prune --db " + db_).err, "error: the option '--keep-top' is required but missing\n");
  EXPECT_EQ(read_file(db_), before);
}

TEST_F(DbE2E, ExportThenImportReproducesTheDatabase) {
  std::string jsonl = path("all.jsonl"), copy = path("copy.db");
  ASSERT_EQ(tunebed("db export " + jsonl + " --db " + db_).exit_code, 0);
  EXPECT_EQ(tunebed("db export --db " + db_).out, read_file(jsonl));  // stdout and file agree
  EXPECT_EQ(count(read_file(jsonl), "{\"table\":\"candidates\""), 20);
  Result first = tunebed("db import " + jsonl + " --format csv --db " + copy);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("candidates,20,0\r\n"), std::string::npos) << first.out;
  Result again = tunebed("db import " + jsonl + " --format csv --db " + copy);
  EXPECT_NE(again.out.find("candidates,0,20\r\n"), std::string::npos) << again.out;
  for (const char* q : {"best", "failures", "history 3f2a"}) {
    EXPECT_EQ(tunebed(std::string("query ") + q + " --format csv --db " + copy).out,
              tunebed(std::string("query ") + q + " --format csv --db " + db_).out)
        << q;
  }
}

TEST_F(DbE2E, ImportOfAMalformedLineNamesIt) {
  std::string bad = path("bad.jsonl");
  std::ofstream(bad) << "{\"table\":\"devices\",\"id\":1,\"name\":\"cpu0\"\n";
  Result r = tunebed("db import " + bad + " --db " + path("new.db"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("error: " + bad + ":1: ", 0), 0u) << r.err;  // FILE:LINE: what is wrong
  Result missing = tunebed("db import " + path("absent.jsonl") + " --db " + path("new.db"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err, "error: cannot read " + path("absent.jsonl") + "\n");
}

TEST_F(DbE2E, MergeAddsNoDuplicates) {
  std::string newer = path("newer.db"), out = path("merged.db");
  build(newer, true);
  Result r = tunebed("db merge " + out + " " + db_ + " " + newer + " --format csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The two fixtures share their first three runs (same uuids): the second adds only its fourth.
  EXPECT_NE(r.out.find("runs,4,3\r\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("candidates,22,20\r\n"), std::string::npos) << r.out;
  Result again = tunebed("db merge " + out + " " + newer + " --format csv");
  EXPECT_NE(again.out.find("candidates,0,22\r\n"), std::string::npos) << again.out;
  EXPECT_EQ(tunebed("query best --format csv --db " + out).out,
            tunebed("query best --format csv --db " + newer).out);
}

TEST_F(DbE2E, MigrateBringsAnOlderSchemaUpToDate) {
  EXPECT_EQ(tunebed("db migrate --db " + db_).out, db_ + ": schema version " +
                                                       std::to_string(results::current_schema_version()) +
                                                       ", current; nothing to do\n");
  std::string old = path("old.db");
  {
    auto db = results::Db::open(old, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    results::migrate(db, 2);
  }
  EXPECT_NE(tunebed("query runs --db " + old).exit_code, 0);  // queries do not migrate
  Result r = tunebed("db migrate --db " + old);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, old + ": migrated from schema version 2 to " +
                       std::to_string(results::current_schema_version()) + "\n");
  EXPECT_EQ(tunebed("query runs --db " + old).exit_code, 0);
}

TEST_F(DbE2E, VacuumKeepsTheRows) {
  std::string before = tunebed("query history 3f2a --format csv --db " + db_).out;
  Result r = tunebed("db vacuum --db " + db_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind(db_ + ": ", 0), 0u) << r.out;
  EXPECT_EQ(tunebed("query history 3f2a --format csv --db " + db_).out, before);
}

TEST_F(DbE2E, BadUsageExits2) {
  Result unknown = tunebed("db frobnicate");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.err,
            "error: unknown db subcommand 'frobnicate' (expected check, export, import, info, merge, "
            "migrate, prune, vacuum)\n");
  Result flag = tunebed("db info --bogus");
  EXPECT_EQ(flag.exit_code, 2);
  EXPECT_EQ(flag.err, "error: unrecognised option '--bogus'\n");
  Result missing = tunebed("db vacuum --db " + path("absent.db"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(path("absent.db")));
  for (const char* sub : {"info", "migrate", "vacuum", "prune", "export", "import", "merge", "check"}) {
    Result help = tunebed(std::string("db ") + sub + " --help");
    EXPECT_EQ(help.exit_code, 0) << sub;
    EXPECT_NE(help.out.find("\nexamples:\n  "), std::string::npos) << help.out;
  }
}

}  // namespace
}  // namespace tunebed::testing
