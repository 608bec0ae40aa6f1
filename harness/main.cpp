// tunebed: one program for tuning, fuzzing and reports. Subcommands register themselves (cli.hpp).
#include <algorithm>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "harness/cli.hpp"

namespace {

void print_usage(std::ostream& out) {
  out << "usage: tunebed [--help] [--version] <command> [args...]\n\ncommands:\n";
  std::size_t width = 0;
  for (const auto& [name, cmd] : tunebed::cli::commands()) width = std::max(width, name.size());
  for (const auto& [name, cmd] : tunebed::cli::commands()) {
    out << "  " << name << std::string(width - name.size() + 2, ' ') << cmd.summary << "\n";
  }
  out << "\n`tunebed <command> --help` describes one command.\n"
         "exit codes: 0 ok, 1 the run failed, 2 bad usage or input\n"
         "environment variables (TUNEBED_WORKERS, TUNEBED_CACHE_DIR, ...): docs/ENVIRONMENT.md\n";
}

int dispatch(const std::vector<std::string>& args) {
  using tunebed::cli::UsageError;
  if (args.empty()) throw UsageError("no command given (try tunebed --help)");
  const std::string& first = args[0];
  if (first == "--help" || first == "-h") {
    print_usage(std::cout);
    return 0;
  }
  if (first == "--version") return tunebed::cli::commands().at("version").run({});
  const auto& commands = tunebed::cli::commands();
  auto it = commands.find(first);
  if (it == commands.end()) {
    if (first.starts_with("-")) throw UsageError("unknown option '" + first + "' (try tunebed --help)");
    throw UsageError("unknown command '" + first + "' (try tunebed --help)");
  }
  return it->second.run(std::vector<std::string>(args.begin() + 1, args.end()));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return dispatch(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const tunebed::cli::UsageError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
