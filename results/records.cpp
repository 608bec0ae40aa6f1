#include "results/records.hpp"

#include <array>
#include <stdexcept>
#include <utility>

namespace tunebed::results {
namespace {

// The spellings stored in the database (and checked by its CHECK constraints), in enum order.
constexpr std::array<std::string_view, 4> kRunStatus = {"running", "completed", "interrupted", "failed"};
constexpr std::array<std::string_view, 6> kCandidateStatus = {"ok",      "compile_error", "crash",
                                                              "timeout", "wrong",         "stopped"};

template <class E, size_t N>
E parse_enum(const std::array<std::string_view, N>& names, std::string_view s, std::string_view what) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == s) return static_cast<E>(i);
  }
  std::string expected;
  for (auto n : names) expected += (expected.empty() ? "" : ", ") + std::string(n);
  throw std::invalid_argument("unknown " + std::string(what) + " '" + std::string(s) + "' (expected " +
                              expected + ")");
}

int64_t count_for(const std::vector<std::pair<std::string, int64_t>>& counts, std::string_view table) {
  for (const auto& [name, n] : counts) {
    if (name == table) return n;
  }
  return 0;
}

}  // namespace

std::string_view to_string(RunStatus s) { return kRunStatus.at(static_cast<size_t>(s)); }
std::string_view to_string(CandidateStatus s) { return kCandidateStatus.at(static_cast<size_t>(s)); }

RunStatus parse_run_status(std::string_view s) { return parse_enum<RunStatus>(kRunStatus, s, "run status"); }
CandidateStatus parse_candidate_status(std::string_view s) {
  return parse_enum<CandidateStatus>(kCandidateStatus, s, "candidate status");
}

std::optional<double> Comparison::speedup() const {
  if (!a || !b || b->median_us <= 0) return std::nullopt;
  return a->median_us / b->median_us;
}

int64_t TransferStats::added_to(std::string_view table) const { return count_for(added, table); }
int64_t TransferStats::skipped_in(std::string_view table) const { return count_for(skipped, table); }

}  // namespace tunebed::results
