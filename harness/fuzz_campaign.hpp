// Running the libFuzzer targets as campaigns for `tunebed fuzz`: finding their binaries, running
// each for a time budget on a kept corpus, turning what they leave behind into findings, and
// replaying and shrinking one input.
//
// Every input a fuzzer stops on (libFuzzer's crash-, leak-, timeout- and oom- files) is replayed
// alone, and its output classified (classify): a target's own report line
// `tunebed-finding: KIND: SIGNATURE` (fuzz/fuzz_support.hpp) says a wrong value or a wrong
// exception; otherwise the sanitizer's or libFuzzer's headline says crash, leak or timeout, and
// the signature is that headline plus the top frames of the stack, with addresses and paths left
// out, so the same bug reached by other inputs dedupes to one finding.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "results/findings.hpp"

namespace tunebed::cli {

namespace fs = std::filesystem;

struct FuzzerBinary {
  std::string target;  // "kernel" for fuzz_kernel
  fs::path exe;
  bool libfuzzer = false;  // false: a normal build's replay-only binary
};

// The fuzz/ folder of the build tree this tunebed executable belongs to (<build>/fuzz).
fs::path default_fuzzer_dir();
// The targets with a binary in DIR ("kernel", "opts", ...), sorted.
std::vector<std::string> list_fuzz_targets(const fs::path& dir);
// TARGET ("kernel" or "fuzz_kernel") in DIR; throws UsageError naming the target and the
// targets there when it is missing.
FuzzerBinary find_fuzzer(const fs::path& dir, const std::string& target);

// What one replayed input did.
struct Outcome {
  bool failed = false;  // false: the input ran clean
  std::string kind;     // crash, wrong, timeout or leak
  std::string signature;
  std::optional<double> max_error;
  std::string detail;  // the end of the output
};
// Classifies the output and exit status of a fuzzer run on one input.
Outcome classify(const std::string& output, int exit_code);

// Runs FUZZER on the single input INPUT (raw bytes) and classifies what happened.
Outcome replay(const FuzzerBinary& fuzzer, const std::string& input, int timeout_s);

struct CampaignOptions {
  int seconds = 60;       // per target
  int jobs = 1;           // > 1: libFuzzer's fork mode, which keeps going after a finding
  int timeout_s = 25;     // one input running longer is a timeout finding
  fs::path corpus_dir;    // kept corpora, one folder per target (created)
  fs::path seeds_dir;     // checked-in seed corpora and dictionaries (fuzz/), read only
  fs::path findings_dir;  // the inputs a fuzzer stopped on, one folder per target
};

struct TargetRun {
  std::string target;
  double seconds = 0;
  int64_t execs = 0;                // as libFuzzer counted them
  std::vector<fs::path> artifacts;  // crash-/leak-/timeout-/oom- files it left
  int exit_code = 0;
};

// Fuzzes one target for options.seconds, then merges (-merge=1) its kept corpus so that only
// inputs adding coverage stay. Throws UsageError for a replay-only binary.
TargetRun run_target(const FuzzerBinary& fuzzer, const CampaignOptions& options);

// Shrinks INPUT while FUZZER still fails on it the same way (kind and signature): libFuzzer's
// -minimize_crash for seconds/2, then a structural pass that zeroes and drops bytes (the
// generators read a zero as their smallest choice: fewer ops, smaller shapes, fewer opts).
// Returns the smallest input found and its outcome.
std::pair<std::string, Outcome> minimize(const FuzzerBinary& fuzzer, const std::string& input,
                                         const Outcome& expected, int seconds, int timeout_s);

}  // namespace tunebed::cli
