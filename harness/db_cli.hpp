// What the database-facing commands (`tunebed query`, `tunebed db`, `tunebed report`) share:
//   - the --db option (default results/tuning.db) and the output options --format, -v, -q;
//   - opening a database: a missing, damaged or foreign file is bad input (exit 2) and is never
//     created or changed; results/ already refuses such files with a message naming the file;
//   - commands made of subcommands (`tunebed query best`, `tunebed db prune`), each with its own
//     options and --help.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "harness/cli.hpp"
#include "harness/table_format.hpp"
#include "results/tuning_db.hpp"

namespace tunebed::cli {

inline constexpr const char* kDefaultDb = "results/tuning.db";

void add_db_option(CommandLine& cl);       // --db FILE
void add_output_options(CommandLine& cl);  // --format, -v/--verbose, -q/--quiet

struct Output {
  Format format = Format::table;
  Verbosity verbosity = Verbosity::normal;
};
// Reads the options add_output_options declared; -v with -q is a UsageError.
Output output_options(const po::variables_map& vm);

// Opens an existing tuning database for queries: nothing is created, migrated or written. A path
// with no file is a UsageError (exit 2), for every command alike.
results::TuningDb open_for_reading(const std::string& path);
// Opens an existing tuning database for maintenance (migrating it if it is older); the same.
results::TuningDb open_for_writing(const std::string& path);

struct Subcommand {
  std::string name;
  std::string summary;
  RunFn run;
};

// Runs `tunebed PARENT NAME ARGS...`: NAME picks one of SUBS, which gets the remaining arguments.
// No name, or --help, lists the subcommands. An unknown name is a UsageError that lists them.
// A results::DbError (unknown kernel, unopenable file) becomes a UsageError: the user named
// something that is not there.
int run_subcommand(std::string_view parent, const std::vector<Subcommand>& subs,
                   const std::vector<std::string>& args);

}  // namespace tunebed::cli
