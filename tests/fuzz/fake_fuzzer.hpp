// Fake fuzz targets for the campaign runner's tests: shell scripts that behave as a replay-only
// fuzz binary does (no libFuzzer usage for -help=1) and fail on inputs containing the byte 'X'
// with a target's own finding report, so tests need neither a sanitizer build nor a real bug.
#pragma once

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/temp_dir.hpp"

namespace tunebed::testing {

// A fresh folder with fuzz_fake in it, removed with the object.
class FakeFuzzers {
 public:
  explicit FakeFuzzers(const std::string& name) : dir_("tunebed-fuzz-test-" + name) {
    const std::filesystem::path exe = path() / "fuzz_fake";
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
  }
  const std::filesystem::path& path() const { return dir_.path(); }

 private:
  TempDir dir_;
};

}  // namespace tunebed::testing
