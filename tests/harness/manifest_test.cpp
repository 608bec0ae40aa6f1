// The manifest format and --shard, parsed directly (the e2e tests run them through tunebed).
#include "harness/manifest.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>

#include "harness/cli.hpp"

namespace tunebed::cli {
namespace {

using Kind = ManifestEntry::Kind;

TEST(Manifest, ParsesEveryEntryKindWithItsOptionsSkippingCommentsAndBlankLines) {
  const std::string text =
      "# a campaign\n"
      "\n"
      "matmul:M=256,N=256,K=256 strategy=random budget=50 seconds=2.5\n"
      "  ast kernels/a.uop   # a saved kernel\n"
      "corpus ../sops.gz sample=20 seed=7 filter=reduce width=3\n"
      "kernel f96cead6cd56ab83\n";
  std::vector<ManifestEntry> m = parse_manifest(text, "m.txt", "/data/run");
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0].kind, Kind::workload);
  EXPECT_EQ(m[0].value, "matmul:M=256,N=256,K=256");
  EXPECT_EQ(m[0].origin, "m.txt:3");
  EXPECT_EQ(m[0].options.strategy, "random");
  EXPECT_EQ(m[0].options.budget, 50);
  EXPECT_EQ(m[0].options.seconds, 2.5);
  EXPECT_FALSE(m[0].options.width);
  EXPECT_EQ(m[1].kind, Kind::ast);
  EXPECT_EQ(m[1].value, "/data/run/kernels/a.uop");
  EXPECT_EQ(m[1].origin, "m.txt:4");
  EXPECT_EQ(m[2].kind, Kind::corpus);
  EXPECT_EQ(m[2].value, "/data/sops.gz");
  EXPECT_EQ(m[2].sample, 20);
  EXPECT_EQ(m[2].sample_seed, 7u);
  EXPECT_TRUE(m[2].reduce_only);
  EXPECT_EQ(m[2].options.width, 3);
  EXPECT_EQ(m[3].kind, Kind::kernel);
  EXPECT_EQ(m[3].value, "f96cead6cd56ab83");
}

// Each malformed line is reported as FILE:LINE: and names the token that is wrong.
TEST(Manifest, AMalformedLineIsAnErrorNamingTheLineAndTheToken) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"matmul budget=0", "budget '0'"},
      {"matmul budget=ten", "ten"},
      {"matmul seconds=-1", "-1"},
      {"matmul width=0", "width"},
      {"matmul colour=red", "colour=red"},
      {"matmul sample=3", "sample=3"},
      {"corpus x.gz filter=wide", "wide"},
      {"corpus x.gz sample=many", "many"},
      {"ast", "'ast' needs a path"},
      {"kernel budget=3", "kernel"},
      {"budget=3", "budget=3"},
      {"matmul stray", "stray"},
  };
  for (const auto& [line, token] : cases) {
    try {
      parse_manifest("# header\nsum\n" + line + "\n", "m.txt", "");
      ADD_FAILURE() << "accepted: " << line;
    } catch (const UsageError& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind("m.txt:3: ", 0), 0u) << message;
      EXPECT_NE(message.find(token), std::string::npos) << line << " -> " << message;
    }
  }
}

RC_GTEST_PROP(Manifest, FormattedOptionsParseBackToTheSameOptions, ()) {
  EntryOptions o;
  if (*rc::gen::arbitrary<bool>())
    o.strategy = *rc::gen::element<std::string>("beam", "random", "hill", "annealing");
  if (*rc::gen::arbitrary<bool>()) o.budget = *rc::gen::inRange<int64_t>(1, 100000);
  if (*rc::gen::arbitrary<bool>()) o.seconds = *rc::gen::inRange(1, 100000) / 8.0;
  if (*rc::gen::arbitrary<bool>()) o.width = *rc::gen::inRange(1, 64);
  std::vector<ManifestEntry> m = parse_manifest("kernel abc" + format_options(o), "plan", "");
  RC_ASSERT(m.size() == 1u);
  RC_ASSERT(m[0].options.strategy == o.strategy);
  RC_ASSERT(m[0].options.budget == o.budget);
  RC_ASSERT(m[0].options.seconds == o.seconds);
  RC_ASSERT(m[0].options.width == o.width);
}

TEST(Shard, ParsesIOfNAndRejectsAnythingElse) {
  Shard s = parse_shard("2/5");
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 5);
  for (const char* bad : {"3/2", "0/2", "1/0", "-1/2", "a/b", "2", "1/2/3", "", "1/"}) {
    try {
      parse_shard(bad);
      ADD_FAILURE() << "accepted --shard " << bad;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos) << e.what();
    }
  }
}

RC_GTEST_PROP(Shard, EveryKernelFallsInExactlyOneShardAndShardsBalance, ()) {
  const int count = *rc::gen::inRange(1, 40);
  const size_t kernels = *rc::gen::inRange<size_t>(0, 500);
  std::vector<size_t> sizes(static_cast<size_t>(count));
  for (size_t k = 0; k < kernels; k++) {
    int owners = 0;
    for (int i = 1; i <= count; i++)
      if (Shard{i, count}.contains(k)) owners++, sizes[static_cast<size_t>(i - 1)]++;
    RC_ASSERT(owners == 1);
  }
  RC_ASSERT(*std::ranges::max_element(sizes) - *std::ranges::min_element(sizes) <= 1u);
}

}  // namespace
}  // namespace tunebed::cli
