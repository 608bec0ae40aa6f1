// `tunebed db`: looking after tuning databases: what is in one, bringing it to the current schema,
// compacting and pruning it, checking it, and moving its rows between files (JSON lines, merge).
// results/README.md describes the operations themselves; this file is their command line.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "harness/db_cli.hpp"

namespace tunebed::cli {
namespace {

void add_quiet_option(CommandLine& cl) { cl.options.add_options()("quiet,q", "print nothing on success"); }

bool quiet(const po::variables_map& vm) { return vm.count("quiet") != 0; }

std::string db_path(const po::variables_map& vm) { return vm["db"].as<std::string>(); }

int64_t file_bytes(const std::string& path) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<int64_t>(size);
}

int info(const std::vector<std::string>& args) {
  CommandLine cl{.synopsis = "tunebed db info [--db FILE] [options]",
                 .description = "The file, its schema version and size, and the rows of each table."};
  add_db_option(cl);
  add_output_options(cl);
  cl.examples = {"tunebed db info", "tunebed db info --db shard3.db --format json"};
  auto vm = parse(cl, args);
  if (!vm) return 0;
  Output out = output_options(*vm);
  auto db = open_for_reading(db_path(*vm));
  Table t{{{"item"}, {"value"}}};
  t.add_row({"file", db.path()});
  t.add_row({"schema_version", static_cast<int64_t>(db.schema_version())});
  t.add_row({"bytes", file_bytes(db.path())});
  for (const auto& [table, rows] : db.table_counts()) t.add_row({table, rows});
  write_table(t, out.format, out.verbosity, std::cout);
  return 0;
}

// The schema version in the file's header (user_version: 4 bytes, big-endian, at offset 60), read
// without SQLite so that it neither creates -wal/-shm files nor migrates. A database at rest has
// every commit in the main file (the last connection checkpoints on close).
int header_schema_version(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char bytes[4] = {};
  in.seekg(60);
  in.read(reinterpret_cast<char*>(bytes), 4);
  return (bytes[0] << 24) | (bytes[1] << 16) | (bytes[2] << 8) | bytes[3];
}

int migrate(const std::vector<std::string>& args) {
  CommandLine cl{.synopsis = "tunebed db migrate [--db FILE] [-q]",
                 .description =
                     "Brings a database written by an older tunebed to this tunebed's schema, one\n"
                     "transaction per step. Any command that writes does this too; migrate does only that."};
  add_db_option(cl);
  add_quiet_option(cl);
  cl.examples = {"tunebed db migrate --db old-results.db"};
  auto vm = parse(cl, args);
  if (!vm) return 0;
  const std::string path = db_path(*vm);
  int before = std::filesystem::exists(path) ? header_schema_version(path) : 0;
  auto db = open_for_writing(path);
  int after = db.schema_version();
  if (quiet(*vm)) return 0;
  if (before == after) {
    std::cout << path << ": schema version " << after << ", current; nothing to do\n";
  } else {
    std::cout << path << ": migrated from schema version " << before << " to " << after << "\n";
  }
  return 0;
}

int vacuum(const std::vector<std::string>& args) {
  CommandLine cl{
      .synopsis = "tunebed db vacuum [--db FILE] [-q]",
      .description = "Rebuilds the file without its free pages (SQLite's VACUUM), e.g. after prune."};
  add_db_option(cl);
  add_quiet_option(cl);
  cl.examples = {"tunebed db prune --keep-top 5 && tunebed db vacuum"};
  auto vm = parse(cl, args);
  if (!vm) return 0;
  auto db = open_for_writing(db_path(*vm));
  int64_t before = file_bytes(db.path());
  db.vacuum();
  if (!quiet(*vm))
    std::cout << db.path() << ": " << before << " bytes before, " << file_bytes(db.path()) << " after\n";
  return 0;
}

int prune(const std::vector<std::string>& args) {
  CommandLine cl{
      .synopsis = "tunebed db prune --keep-top K [--db FILE] [-q]",
      .description =
          "Keeps the K fastest verified candidates of each kernel and device, and every winner, and\n"
          "deletes the other candidates of finished runs (a running run keeps all, so it can resume).\n"
          "Quarantine entries stay. Run `tunebed db vacuum` afterwards to shrink the file."};
  add_db_option(cl);
  cl.options.add_options()("keep-top", po::value<int>()->required()->value_name("K"),
                           "how many candidates to keep per kernel and device (at least 1)");
  add_quiet_option(cl);
  cl.examples = {"tunebed db prune --keep-top 10", "tunebed db prune --keep-top 1 --db archive.db"};
  auto vm = parse(cl, args);
  if (!vm) return 0;
  int keep = (*vm)["keep-top"].as<int>();
  if (keep < 1) throw UsageError("--keep-top must be at least 1, not " + std::to_string(keep));
  auto db = open_for_writing(db_path(*vm));
  int64_t deleted = db.prune(keep);
  if (!quiet(*vm))
    std::cout << db.path() << ": deleted " << deleted << " candidate(s), kept the top " << keep << "\n";
  return 0;
}

int export_rows(const std::vector<std::string>& args) {
  CommandLine cl{.synopsis = "tunebed db export [FILE] [--db FILE]",
                 .description =
                     "Writes every row as JSON lines, one object per line with a \"table\" field, parents\n"
                     "first, to FILE (written whole or not at all) or to standard output."};
  add_db_option(cl);
  cl.options.add_options()("file", po::value<std::string>()->value_name("FILE"),
                           "where to write (default: stdout)");
  cl.positional.add("file", 1);
  cl.examples = {"tunebed db export results.jsonl", "tunebed db export | gzip > results.jsonl.gz"};
  auto vm = parse(cl, args);
  if (!vm) return 0;
  auto db = open_for_reading(db_path(*vm));
  if (!vm->count("file")) {
    db.export_jsonl(std::cout);
    return 0;
  }
  // Written beside FILE and renamed over it, so a failed export leaves no half file behind.
  const std::string file = (*vm)["file"].as<std::string>(), partial = file + ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    if (!out) throw UsageError("cannot write " + partial);
    db.export_jsonl(out);
    out.flush();
    if (!out) throw std::runtime_error("writing " + partial + " failed");
  }
  std::filesystem::rename(partial, file);
  return 0;
}

// Rows added and skipped per table, tables in the order the transfer first reported them.
Table transfer_table(const results::TransferStats& stats) {
  std::vector<std::string> tables;
  for (const auto* side : {&stats.added, &stats.skipped}) {
    for (const auto& [table, n] : *side) {
      if (std::find(tables.begin(), tables.end(), table) == tables.end()) tables.push_back(table);
    }
  }
  Table t{{{"table"}, {"added"}, {"skipped"}}};
  for (const auto& table : tables) t.add_row({table, stats.added_to(table), stats.skipped_in(table)});
  return t;
}

int import_rows(const std::vector<std::string>& args) {
  CommandLine cl{.synopsis = "tunebed db import FILE [--db FILE] [options]",
                 .description =
                     "Adds the rows of a JSON-lines export to the database (created if missing); rows\n"
                     "already present (same fingerprint, hash, run uuid and seq) are skipped, so\n"
                     "importing twice adds nothing. Prints the rows added and skipped per table."};
  add_db_option(cl);
  cl.options.add_options()("file", po::value<std::string>()->required()->value_name("FILE"),
                           "the export to read");
  cl.positional.add("file", 1);
  add_output_options(cl);
  cl.examples = {"tunebed db import results.jsonl",
                 "gunzip -c results.jsonl.gz | tunebed db import /dev/stdin"};
  auto vm = parse(cl, args);
  if (!vm) return 0;
  Output out = output_options(*vm);
  const std::string file = (*vm)["file"].as<std::string>();
  std::ifstream in(file, std::ios::binary);
  if (!in) throw UsageError("cannot read " + file);
  auto db = results::TuningDb::open(db_path(*vm), results::TuningDb::Mode::create);
  write_table(transfer_table(db.import_jsonl(in, file)), out.format, out.verbosity, std::cout);
  return 0;
}

int merge(const std::vector<std::string>& args) {
  CommandLine cl{.synopsis = "tunebed db merge OUT IN... [options]",
                 .description =
                     "Merges the tuning databases IN... into OUT (created if missing) without duplicates:\n"
                     "devices by fingerprint, kernels by hash, runs by uuid, candidates by run and seq.\n"
                     "Each merged run records the file it came from. For the shards of a campaign."};
  cl.options.add_options()("out", po::value<std::string>()->required()->value_name("OUT"),
                           "the merged database")(
      "in", po::value<std::vector<std::string>>()->required()->value_name("IN"), "databases to merge");
  cl.positional.add("out", 1).add("in", -1);
  add_output_options(cl);
  cl.examples = {"tunebed db merge results/tuning.db shard-*.db"};
  auto vm = parse(cl, args);
  if (!vm) return 0;
  Output out = output_options(*vm);
  auto stats = results::merge((*vm)["out"].as<std::string>(), (*vm)["in"].as<std::vector<std::string>>());
  write_table(transfer_table(stats), out.format, out.verbosity, std::cout);
  return 0;
}

int check(const std::vector<std::string>& args) {
  CommandLine cl{.synopsis = "tunebed db check [--db FILE] [-q]",
                 .description =
                     "Checks the whole file: SQLite's integrity_check and foreign_key_check. Exit 0 and\n"
                     "'ok' when it is sound; exit 1 and one line per problem when it is not (a file that\n"
                     "is damaged, or is not a tuning database, is such a problem)."};
  add_db_option(cl);
  add_quiet_option(cl);
  cl.examples = {"tunebed db check", "tunebed db check --db shard3.db || echo damaged"};
  auto vm = parse(cl, args);
  if (!vm) return 0;
  const std::string path = db_path(*vm);
  std::vector<std::string> problems;
  try {
    problems = open_for_reading(path).integrity_check();  // a missing file is a UsageError
  } catch (const results::DbError& e) {
    problems.push_back(e.what());  // the file cannot even be opened: that is what check found
  }
  for (const auto& p : problems) std::cout << path << ": " << p << "\n";
  if (problems.empty() && !quiet(*vm)) std::cout << path << ": ok\n";
  return problems.empty() ? 0 : 1;
}

const std::vector<Subcommand> kCommands = {
    {"check", "check the whole file for damage (exit 1 if found)", check},
    {"export", "write every row as JSON lines", export_rows},
    {"import", "add the rows of a JSON-lines export", import_rows},
    {"info", "schema version, size and rows per table", info},
    {"merge", "merge databases without duplicates (shards of a campaign)", merge},
    {"migrate", "bring an older database to the current schema", migrate},
    {"prune", "keep only the K fastest candidates per kernel and device", prune},
    {"vacuum", "compact the file", vacuum},
};

int run(const std::vector<std::string>& args) { return run_subcommand("db", kCommands, args); }

const Registrar reg{
    "db", "look after tuning databases: info, check, migrate, vacuum, prune, export, import, merge", run};

}  // namespace
}  // namespace tunebed::cli
