// Running an external compiler: argv as given (no shell, so no quoting problems), stdin from a
// file, stdout and stderr captured together.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace tunebed {

struct ProcessResult {
  int exit_code = 0;   // the program's exit status; 128 + N when killed by signal N
  std::string output;  // stdout and stderr, interleaved as written
};

// Throws DeviceError when the program cannot be started at all (not found, not executable).
ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::filesystem::path& stdin_path = "/dev/null");

}  // namespace tunebed
