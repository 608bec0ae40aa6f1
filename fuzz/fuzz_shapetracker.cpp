// libFuzzer target: random movement-op sequences on a random base shape (tests/shape/op_sequence.hpp
// decodes the bytes), checked against the naive reference map that shares no code with View:
//   - the tracker reads what the naive map reads, index for index;
//   - simplify() keeps the map and never adds views;
//   - the (index, valid) UOps, evaluated at every index, give the same map;
//   - the tracker's text form (as a VIEW arg) parses back to the same tracker.
// Every decoded op is legal, so any exception is a bug too (libFuzzer reports it as a crash).
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "tests/shape/op_sequence.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tunebed::naive;
  Applied a = apply_case(decode_case(data, size));
  for (auto check : {check_map, check_simplify, check_index_uops, check_text_round_trip}) {
    std::string failure = check(a);
    if (!failure.empty()) {
      std::fprintf(stderr, "%s\n", failure.c_str());
      std::abort();
    }
  }
  return 0;
}
