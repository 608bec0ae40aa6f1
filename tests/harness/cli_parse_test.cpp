// cli::parse turns every Boost.Program_options failure into a one-line UsageError.
#include <gtest/gtest.h>

#include <sstream>

#include "harness/cli.hpp"

namespace tunebed::cli {
namespace {

CommandLine example() {
  CommandLine cl{.synopsis = "tunebed demo [FILE]", .description = "A demo."};
  cl.options.add_options()("count,n", po::value<int>()->default_value(3), "how many")(
      "file", po::value<std::string>(), "input file");
  cl.positional.add("file", 1);
  cl.examples = {"tunebed demo -n 4 x.txt"};
  return cl;
}

std::string usage_error(const std::vector<std::string>& args) {
  CommandLine cl = example();
  std::ostringstream out;
  try {
    parse(cl, args, out);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CliParse, ReadsOptionsAndPositionals) {
  CommandLine cl = example();
  std::ostringstream out;
  auto vm = parse(cl, {"-n", "7", "in.txt"}, out);
  ASSERT_TRUE(vm);
  EXPECT_EQ((*vm)["count"].as<int>(), 7);
  EXPECT_EQ((*vm)["file"].as<std::string>(), "in.txt");
  EXPECT_EQ(out.str(), "");
}

TEST(CliParse, DefaultsApplyWhenAbsent) {
  CommandLine cl = example();
  std::ostringstream out;
  auto vm = parse(cl, {}, out);
  ASSERT_TRUE(vm);
  EXPECT_EQ((*vm)["count"].as<int>(), 3);
}

TEST(CliParse, HelpPrintsUsageAndReturnsNothing) {
  CommandLine cl = example();
  std::ostringstream out;
  EXPECT_FALSE(parse(cl, {"--help"}, out));
  EXPECT_EQ(out.str().rfind("usage: tunebed demo [FILE]\n\nA demo.\n", 0), 0u) << out.str();
  EXPECT_NE(out.str().find("--count"), std::string::npos);
  EXPECT_NE(out.str().find("examples:\n  tunebed demo -n 4 x.txt\n"), std::string::npos);
}

TEST(CliParse, BadInputBecomesOneLineUsageError) {
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"--nope"}, {"-n"}, {"-n", "many"}, {"a.txt", "b.txt"}}) {
    std::string message = usage_error(args);
    EXPECT_NE(message, "(no error)") << args[0];
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  EXPECT_NE(usage_error({"--nope"}).find("--nope"), std::string::npos);
}

}  // namespace
}  // namespace tunebed::cli
