// Which build this is: stored with every tuning run, so a figure can be traced to its build.
// Defined in cmd_version.cpp, the one file the build gives the configure-time strings.
#pragma once

#include <string>

namespace tunebed::cli {

std::string build_version();   // "0.1.0"
std::string build_git_rev();   // "3170c6d", or "unknown"
std::string build_compiler();  // "Clang 14.0.6"

}  // namespace tunebed::cli
