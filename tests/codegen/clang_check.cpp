#include "tests/codegen/clang_check.hpp"

#include <cstdlib>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/runtime/subprocess.hpp"

namespace tunebed::testing {

std::string clang_warnings(const std::vector<std::string>& sources) {
  const char* clang = std::getenv("TUNEBED_CLANG");
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("tunebed_codegen_warnings_" + std::to_string(::getpid()) + "_" +
       std::to_string(std::hash<std::string>{}(sources.empty() ? "" : sources[0])));
  std::filesystem::create_directories(dir);
  std::vector<std::string> argv{clang && *clang ? clang : "clang", "-Wall", "-Werror", "-fsyntax-only"};
  for (size_t i = 0; i < sources.size(); i++) {
    argv.push_back((dir / ("kernel" + std::to_string(i) + ".c")).string());
    std::ofstream(argv.back()) << sources[i];
  }
  ProcessResult r = run_process(argv);
  std::filesystem::remove_all(dir);
  return r.exit_code == 0 ? "" : r.output;
}

}  // namespace tunebed::testing
