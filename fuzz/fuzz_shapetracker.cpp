// libFuzzer target: random movement-op sequences on a random base shape (fuzz/shape_op_sequence.hpp
// decodes the bytes), checked against the naive reference map that shares no code with View:
//   - the tracker reads what the naive map reads, index for index;
//   - simplify() keeps the map and never adds views;
//   - the (index, valid) UOps, evaluated at every index, give the same map;
//   - the tracker's text form (as a VIEW arg) parses back to the same tracker.
// Every decoded op is legal, so any exception is a bug too (libFuzzer reports it as a crash).
#include <cstdint>
#include <string>
#include <utility>

#include "fuzz/finding_report.hpp"
#include "fuzz/shape_op_sequence.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tunebed::naive;
  Applied a = apply_case(decode_case(data, size));
  using Check = std::string (*)(const Applied&);
  const std::pair<const char*, Check> checks[] = {{"map", check_map},
                                                  {"simplify", check_simplify},
                                                  {"index uops", check_index_uops},
                                                  {"text round trip", check_text_round_trip}};
  for (const auto& [name, check] : checks) {
    std::string failure = check(a);
    if (!failure.empty())
      tunebed::fuzz::report_finding("wrong", std::string("fuzz_shapetracker: the ") + name + " check failed",
                                    failure);
  }
  return 0;
}
