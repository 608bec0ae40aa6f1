// The tuning database's schema as an ordered list of migrations.
//
// A database records the number of the last migration applied to it in PRAGMA user_version, and
// carries tunebed's PRAGMA application_id so that other SQLite files are told apart from it.
// Opening a database applies, in order and each in its own transaction, every migration past its
// version; so a file written by any older tunebed opens in a newer one, while a file newer than
// this tunebed is refused rather than guessed at. A migration is never edited once released:
// a change to the schema, views included, is a new migration at the end of the list.
//
// Two invariants live in the schema itself, as triggers, so that every path that inserts a
// candidate (the CandidateWriter, merge, import) keeps them without help:
//   - best: an inserted `ok` candidate replaces the (kernel, device, action-space version) winner
//     only when its median is strictly smaller; wrong, crashed or failed candidates never touch it.
//   - quarantine: an inserted `crash` or `timeout` candidate quarantines its opts for that kernel
//     and device, so it is never run again there. A `stopped` one (its launch passed the search's
//     stop line, search/measure.hpp) is not: it was slow, not broken.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "results/sqlite.hpp"

namespace tunebed::results {

struct Migration {
  int version;  // user_version after this migration; versions are 1, 2, 3, ... in list order
  std::string_view name;
  std::string_view sql;
  // Run after SQL, in the same transaction: a step plain SQL cannot say (migration 7 edits a
  // table's CHECK in place, which needs the schema's own version number bumped).
  void (*step)(Db&) = nullptr;
};

// 'tune' in ASCII: PRAGMA application_id of every tuning database.
constexpr int64_t kApplicationId = 0x74756e65;

const std::vector<Migration>& migrations();
int current_schema_version();

// SQL for a fresh run uuid: 32 lowercase hex digits, 128 random bits. Migration 2 gave the runs
// that predate uuids the same form.
constexpr std::string_view kNewUuidSql = "lower(hex(randomblob(16)))";

// Applies each migration past the database's user_version up to TARGET, each in a transaction.
// Safe against several processes migrating at once: each re-reads the version under the write
// lock and skips what another already applied.
void migrate(Db& db, int target = current_schema_version());

int schema_version(Db& db);

}  // namespace tunebed::results
