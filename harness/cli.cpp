#include "harness/cli.hpp"

#include <cstdlib>
#include <iostream>
#include <utility>

namespace tunebed::cli {

namespace {
// A function-local static, so registrars in other files can run before or after this one.
std::map<std::string, Command>& registry() {
  static std::map<std::string, Command> commands;
  return commands;
}
}  // namespace

const std::map<std::string, Command>& commands() { return registry(); }

Registrar::Registrar(std::string name, std::string summary, RunFn run) {
  auto [it, inserted] = registry().emplace(name, Command{name, std::move(summary), run});
  if (!inserted) {
    std::cerr << "tunebed: two subcommands named '" << it->first << "'\n";
    std::abort();
  }
}

void print_help(const CommandLine& cl, std::ostream& out) {
  out << "usage: " << cl.synopsis << "\n\n" << cl.description << "\n\n" << cl.options;
  if (!cl.examples.empty()) {
    out << "\nexamples:\n";
    for (const auto& example : cl.examples) out << "  " << example << "\n";
  }
}

std::optional<po::variables_map> parse(CommandLine& cl, const std::vector<std::string>& args,
                                       std::ostream& out) {
  if (cl.options.find_nothrow("help", false) == nullptr) {
    cl.options.add_options()("help,h", "show this help");
  }
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(cl.options).positional(cl.positional).run(), vm);
    if (vm.count("help")) {
      print_help(cl, out);
      return std::nullopt;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  return vm;
}

std::optional<po::variables_map> parse(CommandLine& cl, const std::vector<std::string>& args) {
  return parse(cl, args, std::cout);
}

}  // namespace tunebed::cli
