// The campaign runner's pieces without a fuzzing run: how a fuzzer's output becomes a finding
// (kind and a signature that is the same for every input hitting one bug), finding binaries,
// replaying one input, and shrinking it.
#include <gtest/gtest.h>

#include "harness/cli.hpp"
#include "harness/fuzz_campaign.hpp"
#include "tests/fuzz/fake_fuzzer.hpp"

namespace tunebed::cli {
namespace {

TEST(Classify, ACleanRunIsNoFinding) { EXPECT_FALSE(classify("Executed x in 3 ms\n", 0).failed); }

TEST(Classify, ATargetsOwnReportGivesKindSignatureAndMaxError) {
  const Outcome o = classify(
      "Running: crash-1\ntunebed-finding: wrong: compiled kernel differs from the reference\nmax_error: "
      "0.125\n"
      "element 3: 1 vs reference 2\n==1==ERROR: libFuzzer: deadly signal\n",
      1);
  ASSERT_TRUE(o.failed);
  EXPECT_EQ(o.kind, "wrong");
  EXPECT_EQ(o.signature, "compiled kernel differs from the reference");
  EXPECT_EQ(o.max_error, 0.125);
}

// Two crashes of one bug differ in addresses, pids and sizes, not in the functions on the stack.
TEST(Classify, AsanCrashesOfOneBugShareASignature) {
  auto output = [](const std::string& addr, const std::string& pid) {
    return "==" + pid + "==ERROR: AddressSanitizer: heap-buffer-overflow on address " + addr +
           " at pc 0x55d1 bp 0x7ff sp 0x7fe\nREAD of size 4 at " + addr + " thread T0\n" +
           "    #0 0x55d1a in tunebed::View::pad(std::vector<int> const&) "
           "/work/main/core/shape/view.cpp:140:3\n"
           "    #1 0x55d1b in tunebed::ShapeTracker::pad(int) /work/main/core/shape/shapetracker.cpp:50:1\n"
           "    #2 0x55d1c in LLVMFuzzerTestOneInput /work/main/fuzz/fuzz_shapetracker.cpp:16:3\n"
           "    #3 0x55d1d in fuzzer::Fuzzer::ExecuteCallback(unsigned char const*, unsigned long)\n";
  };
  const Outcome a = classify(output("0x602000000014", "11"), 1),
                b = classify(output("0x6020000000f4", "97"), 1);
  EXPECT_EQ(a.kind, "crash");
  EXPECT_EQ(a.signature, b.signature);
  EXPECT_EQ(a.signature,
            "AddressSanitizer heap-buffer-overflow: tunebed::View::pad < tunebed::ShapeTracker::pad < "
            "LLVMFuzzerTestOneInput");
}

TEST(Classify, UbsanReportsDedupeByPlaceAndMessageNotValues) {
  const Outcome a = classify(
      "/work/main/core/symbolic/fold.cpp:42:7: runtime error: signed integer overflow: 2147483647 + 1 cannot "
      "be represented in type 'int32_t'\n",
      1);
  const Outcome b = classify(
      "/work/main/core/symbolic/fold.cpp:42:7: runtime error: signed integer overflow: 2147483000 + 900 "
      "cannot "
      "be represented in type 'int32_t'\n",
      1);
  EXPECT_EQ(a.kind, "crash");
  EXPECT_EQ(a.signature, b.signature);
  EXPECT_NE(a.signature.find("fold.cpp:N"), std::string::npos) << a.signature;
  EXPECT_NE(a.signature.find("int32_t"), std::string::npos) << a.signature;
}

TEST(Classify, TimeoutsLeaksAndUncaughtExceptions) {
  EXPECT_EQ(classify("==5== ERROR: libFuzzer: timeout after 25 seconds\n", 70).kind, "timeout");
  EXPECT_EQ(classify("", 124).kind, "timeout");  // killed by coreutils' timeout
  const Outcome leak = classify(
      "==9==ERROR: LeakSanitizer: detected memory leaks\n\nDirect leak of 8 byte(s) in 1 object(s) allocated "
      "from:\n"
      "    #0 0x4a in malloc\n    #1 0x4b in tunebed::UOp::make(int) /x/uop.cpp:3\n",
      1);
  EXPECT_EQ(leak.kind, "leak");
  EXPECT_EQ(leak.signature, "LeakSanitizer: tunebed::UOp::make");
  const Outcome thrown = classify(
      "terminate called after throwing an instance of 'tunebed::KernelOptError'\n  what():  axis 7 is out of "
      "range\n",
      134);
  EXPECT_EQ(thrown.kind, "crash");
  EXPECT_EQ(thrown.signature, "uncaught tunebed::KernelOptError: axis N is out of range");
  EXPECT_EQ(classify("something else\n", 3).signature, "exit status 3");
}

TEST(FuzzerBinaries, AMissingTargetIsAUsageErrorListingTheTargets) {
  const testing::FakeFuzzers fakes("find");
  const std::filesystem::path& dir = fakes.path();
  EXPECT_EQ(list_fuzz_targets(dir), std::vector<std::string>{"fake"});
  EXPECT_FALSE(find_fuzzer(dir, "fuzz_fake").libfuzzer);
  try {
    find_fuzzer(dir, "nosuch");
    FAIL() << "no exception";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("(there: fake)"), std::string::npos) << e.what();
  }
}

TEST(Replay, RunsOneInputAndClassifiesIt) {
  const testing::FakeFuzzers fakes("replay");
  const FuzzerBinary fake = find_fuzzer(fakes.path(), "fake");
  EXPECT_FALSE(replay(fake, "fine", 10).failed);
  const Outcome o = replay(fake, "not fine: X", 10);
  EXPECT_TRUE(o.failed);
  EXPECT_EQ(o.kind, "wrong");
  EXPECT_EQ(o.signature, "fake check failed at element N");
}

TEST(Minimize, ShrinksToTheBytesTheFailureNeeds) {
  const testing::FakeFuzzers fakes("minimize");
  const FuzzerBinary fake = find_fuzzer(fakes.path(), "fake");
  const std::string input = "some bytes before X and after";
  const auto [smaller, outcome] = minimize(fake, input, replay(fake, input, 10), 60, 10);
  EXPECT_EQ(smaller, "X");
  EXPECT_EQ(outcome.signature, "fake check failed at element N");
}

TEST(RunTarget, RefusesAReplayOnlyBinary) {
  const testing::FakeFuzzers fakes("run");
  const std::filesystem::path& dir = fakes.path();
  CampaignOptions opt{
      .seconds = 1, .corpus_dir = dir / "corpus", .seeds_dir = dir, .findings_dir = dir / "findings"};
  try {
    run_target(find_fuzzer(dir, "fake"), opt);
    FAIL() << "no exception";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("replay-only"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tunebed::cli
