// Fuzz findings in the tuning database: one row per distinct bug a fuzz target has hit.
//
// A finding is keyed by (target, kind, signature): the fuzz target ("kernel" for fuzz_kernel),
// what happened (crash, wrong, timeout, leak) and a signature that names the bug rather than the
// input (the failed check's message, or the top frames of the crash's stack). Every later input
// that hits the same key counts on the same row instead of adding one, and the row keeps the
// smallest input seen, so `tunebed fuzz repro ID` always replays the shortest reproducer known.
//
// The table arrives with schema migration 4 (results/schema.cpp). Like the rest of results/, this
// knows nothing of the fuzzers: inputs are bytes, details are text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "results/sqlite.hpp"

namespace tunebed::results {

// crash, wrong, timeout or leak; anything else is std::invalid_argument listing the four.
std::string_view check_finding_kind(std::string_view kind);

// One observation of a bug: what a fuzzer run reported.
struct FindingReport {
  std::string target, kind, signature;
  std::string input;                // the reproducing input, raw bytes
  std::string detail;               // the fuzzer's report or the stack for that input
  std::optional<double> max_error;  // wrong values: the largest |out - ref|
};

struct Finding {
  int64_t id = 0;
  std::string target, kind, signature, input, detail;
  std::optional<double> max_error;
  std::string first_seen, last_seen;  // utc_now() form
  int64_t count = 0;                  // how many reports hit this key
  bool minimized = false;             // the input was shrunk by `tunebed fuzz minimize`
};

class Findings {
 public:
  explicit Findings(Db& db) : db_(db) {}

  struct Recorded {
    int64_t id;
    bool is_new;  // no finding had this key before
  };
  // Adds the report as a new finding, or counts it on the one with its key (keeping the smaller
  // of the two inputs and its detail). Throws std::invalid_argument for an unknown kind.
  Recorded record(const FindingReport& report);

  std::optional<Finding> get(int64_t id);
  std::vector<Finding> list();  // by id

  // Stores a shrunk input for finding ID (and its detail) and marks it minimized. Throws
  // std::invalid_argument when there is no such finding.
  void replace_input(int64_t id, const std::string& input, const std::string& detail);

 private:
  Db& db_;
};

}  // namespace tunebed::results
