// The `tunebed` command-line skeleton: a registry of subcommands and the helpers they share.
//
// Each subcommand lives in its own harness/cmd_<name>.cpp and registers itself:
//
//   static const tunebed::cli::Registrar reg{"version", "print version, git revision and compiler", run};
//
// This works because harness sources compile straight into the executable; in a static library the
// linker would drop the unreferenced registrar objects.
//
// Exit codes: 0 ok; 1 the run failed (a finding, a wrong result, an internal error); 2 bad usage
// or bad input. main() prints every error as one line, `error: <message>`, on stderr.
#pragma once

#include <boost/program_options.hpp>
#include <iosfwd>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tunebed::cli {

namespace po = boost::program_options;

// Bad command line or unusable input (a file that does not parse, an unknown workload): exit 2.
// Commands turn parse failures of their inputs into a UsageError that names the input.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using RunFn = int (*)(const std::vector<std::string>& args);

struct Command {
  std::string name;
  std::string summary;  // one line, shown by `tunebed --help`
  RunFn run;
};

// All registered commands, sorted by name.
const std::map<std::string, Command>& commands();

struct Registrar {
  Registrar(std::string name, std::string summary, RunFn run);
};

// What `tunebed <cmd> --help` shows, and what parse() accepts. --help/-h is added by parse().
struct CommandLine {
  std::string synopsis;     // "tunebed version [FIELD]"
  std::string description;  // a paragraph
  po::options_description options{"options"};
  po::positional_options_description positional;
  std::vector<std::string> examples;
};

// Parses a subcommand's arguments. Returns nullopt after printing help to `out` for --help.
// Throws UsageError with a one-line message for unknown options, missing or bad values, and
// surplus positional arguments.
std::optional<po::variables_map> parse(CommandLine& cl, const std::vector<std::string>& args,
                                       std::ostream& out);
std::optional<po::variables_map> parse(CommandLine& cl, const std::vector<std::string>& args);

void print_help(const CommandLine& cl, std::ostream& out);

}  // namespace tunebed::cli
