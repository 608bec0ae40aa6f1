// Runs the built `tunebed` program and checks what a user sees: output, `error:` lines, exit codes.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "tests/harness/run_tunebed.hpp"

namespace {

using tunebed::testing::Result;
using tunebed::testing::tunebed;

TEST(CliE2E, HelpListsVersionCommand) {
  Result r = tunebed("--help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("usage: tunebed"), std::string::npos) << r.out;
  // Summaries are aligned to the longest command name, so only the line's start and end are fixed.
  std::size_t line = r.out.find("\n  version ");
  ASSERT_NE(line, std::string::npos) << r.out;
  std::string rest = r.out.substr(line + 1, r.out.find('\n', line + 1) - line - 1);
  EXPECT_NE(rest.find(" print the tunebed version, git revision and compiler"), std::string::npos) << rest;
  EXPECT_EQ(r.err, "");
}

TEST(CliE2E, UnknownCommandExits2WithErrorLine) {
  Result r = tunebed("frobnicate");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: unknown command 'frobnicate' (try tunebed --help)\n");
  EXPECT_EQ(r.out, "");
}

TEST(CliE2E, NoCommandExits2) {
  Result r = tunebed("");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
}

TEST(CliE2E, VersionPrintsThreeFields) {
  Result r = tunebed("version");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("version 0.", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\ngit "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\ncompiler "), std::string::npos) << r.out;
}

TEST(CliE2E, VersionFlagMatchesVersionCommand) {
  EXPECT_EQ(tunebed("--version").out, tunebed("version").out);
}

TEST(CliE2E, VersionFieldPrintsOneValue) {
  Result r = tunebed("version compiler");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << r.out;
}

TEST(CliE2E, VersionUnknownFieldExits2) {
  Result r = tunebed("version colour");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: unknown field 'colour' (expected version, git or compiler)\n");
}

TEST(CliE2E, VersionHelpShowsUsageAndExamples) {
  Result r = tunebed("version --help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("usage: tunebed version [FIELD]", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("examples:\n  tunebed version\n"), std::string::npos) << r.out;
}

TEST(CliE2E, UnknownFlagExits2WithOneLine) {
  Result r = tunebed("version --bogus");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("--bogus"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

}  // namespace
