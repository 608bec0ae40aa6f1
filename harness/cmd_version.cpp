// `tunebed version`: which tunebed, from which commit, built by which compiler. Stored results
// carry the same three strings, so a figure can be traced to the build that made it.
#include <iostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/cli.hpp"
#include "tunebed/build_info.hpp"

namespace tunebed::cli {

namespace {

const std::vector<std::pair<std::string_view, std::string_view>> kFields = {
    {"version", build::kVersion},
    {"git", build::kGitRev},
    {"compiler", build::kCompiler},
};

int run(const std::vector<std::string>& args) {
  CommandLine cl{
      .synopsis = "tunebed version [FIELD]",
      .description =
          "Print the tunebed version, the git revision it was configured from and the\n"
          "compiler that built it, one per line; or only FIELD (version, git or compiler).",
  };
  cl.options.add_options()("field", po::value<std::string>(), "print only this field");
  cl.positional.add("field", 1);
  cl.examples = {"tunebed version", "tunebed version git"};
  auto vm = parse(cl, args);
  if (!vm) return 0;

  if (vm->count("field")) {
    const auto& want = (*vm)["field"].as<std::string>();
    for (const auto& [name, value] : kFields) {
      if (name == want) {
        std::cout << value << "\n";
        return 0;
      }
    }
    throw UsageError("unknown field '" + want + "' (expected version, git or compiler)");
  }
  for (const auto& [name, value] : kFields) std::cout << name << " " << value << "\n";
  return 0;
}

const Registrar reg{"version", "print the tunebed version, git revision and compiler", run};

}  // namespace
}  // namespace tunebed::cli
