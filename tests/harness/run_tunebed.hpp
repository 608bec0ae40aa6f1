// Running the real `tunebed` program from a test: its exit code, stdout and stderr apart.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace tunebed::testing {

struct Result {
  int exit_code;
  std::string out;
  std::string err;
};

// Runs `tunebed ARGS` through the shell, stderr captured separately.
inline Result tunebed(const std::string& args) {
  char err_path[] = "/tmp/tunebed-e2e-XXXXXX";
  int fd = mkstemp(err_path);
  EXPECT_NE(fd, -1);
  close(fd);
  std::string command = std::string(TUNEBED_EXE) + " " + args + " 2>" + err_path + " </dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  EXPECT_NE(pipe, nullptr);
  Result result{-1, "", ""};
  char buffer[4096];
  std::size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.out.append(buffer, n);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_path);
  result.err.assign(std::istreambuf_iterator<char>(err), std::istreambuf_iterator<char>());
  std::filesystem::remove(err_path);
  return result;
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The number of times NEEDLE occurs in HAYSTACK.
}  // namespace tunebed::testing
