#include "harness/db_cli.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>

namespace tunebed::cli {

void add_db_option(CommandLine& cl) {
  cl.options.add_options()("db", po::value<std::string>()->default_value(kDefaultDb)->value_name("FILE"),
                           "the tuning database");
}

void add_output_options(CommandLine& cl) {
  cl.options.add_options()("format", po::value<std::string>()->default_value("table")->value_name("F"),
                           "table (aligned, for people), csv (RFC 4180) or json (an array of objects)")(
      "verbose,v", "tables show whole hashes, uuids, opts and messages")(
      "quiet,q", "no table header and no notes: only the rows");
}

Output output_options(const po::variables_map& vm) {
  Output out;
  out.format = parse_format(vm["format"].as<std::string>());
  bool verbose = vm.count("verbose") != 0, quiet = vm.count("quiet") != 0;
  if (verbose && quiet) throw UsageError("-v and -q contradict each other; give one");
  out.verbosity = verbose ? Verbosity::verbose : quiet ? Verbosity::quiet : Verbosity::normal;
  return out;
}

namespace {
// A database the user named that is not there is bad input, whichever command names it.
void require_database(const std::string& path) {
  if (!std::filesystem::exists(path)) throw UsageError("no tuning database at " + path);
}
}  // namespace

results::TuningDb open_for_reading(const std::string& path) {
  require_database(path);
  return results::TuningDb::open_read_only(path);
}

results::TuningDb open_for_writing(const std::string& path) {
  require_database(path);
  return results::TuningDb::open(path, results::TuningDb::Mode::existing);
}

namespace {

void list_subcommands(std::string_view parent, const std::vector<Subcommand>& subs, std::ostream& out) {
  out << "usage: tunebed " << parent << " <subcommand> [options]\n\n";
  std::size_t width = 0;
  for (const auto& sub : subs) width = std::max(width, sub.name.size());
  for (const auto& sub : subs)
    out << "  " << sub.name << std::string(width - sub.name.size() + 2, ' ') << sub.summary << "\n";
  out << "\n`tunebed " << parent
      << " <name> --help` describes one, with examples.\n"
         "exit codes: 0 ok, 1 a problem found, 2 bad usage or input\n";
}

}  // namespace

int run_subcommand(std::string_view parent, const std::vector<Subcommand>& subs,
                   const std::vector<std::string>& args) {
  std::string names;
  for (const auto& sub : subs) names += (names.empty() ? "" : ", ") + sub.name;
  if (args.empty()) throw UsageError("tunebed " + std::string(parent) + " needs one of: " + names);
  if (args[0] == "--help" || args[0] == "-h") {
    list_subcommands(parent, subs, std::cout);
    return 0;
  }
  auto it = std::find_if(subs.begin(), subs.end(), [&](const Subcommand& s) { return s.name == args[0]; });
  if (it == subs.end()) {
    throw UsageError("unknown " + std::string(parent) + " subcommand '" + args[0] + "' (expected " + names +
                     ")");
  }
  try {
    return it->run(std::vector<std::string>(args.begin() + 1, args.end()));
  } catch (const results::DbError& e) {
    throw UsageError(e.what());
  }
}

}  // namespace tunebed::cli
