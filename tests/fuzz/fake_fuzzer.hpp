// Fake fuzz targets for the campaign runner's tests: shell scripts that behave as a replay-only
// fuzz binary does (no libFuzzer usage for -help=1) and fail on inputs containing the byte 'X'
// with a target's own finding report, so tests need neither a sanitizer build nor a real bug.
#pragma once

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace tunebed::testing {

// A fresh folder with fuzz_fake in it.
inline std::filesystem::path make_fake_fuzzers(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("tunebed-fuzz-test-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::filesystem::path exe = dir / "fuzz_fake";
  std::ofstream(exe) << R"sh(#!/bin/sh
for a; do last=$a; done
[ "$1" = "-help=1" ] && { echo "error: no such file or directory '-help=1'" >&2; exit 2; }
if grep -q X "$last"; then
  echo "tunebed-finding: wrong: fake check failed at element $(wc -c < "$last")" >&2
  echo "max_error: 0.5" >&2
  exit 134
fi
exit 0
)sh";
  chmod(exe.c_str(), 0755);
  return dir;
}

}  // namespace tunebed::testing
