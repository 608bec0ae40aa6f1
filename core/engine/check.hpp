// Checking a computed buffer against a reference one, and the seeded inputs both are computed on:
// what the search (every candidate), `tunebed run --check`, check-corpus and the fuzzers share.
//
// compare_output: a candidate's output is compared with the reference output
// (the unoptimized kernel's, on the same inputs) with a tolerance that follows the dtype: exact
// for integers and bool, |out - ref| <= atol + rtol * |ref| for floats, looser for the 16-bit
// floats. A NaN or infinity where the reference has a finite value is wrong whatever the
// tolerance; NaN where the reference is NaN and the same infinity are equal.
#pragma once

#include <cstdint>
#include <string>

#include "core/ir/host_buffer.hpp"

namespace tunebed {

struct Tolerance {
  double atol = 0, rtol = 0;
};
Tolerance tolerance_for(DType dtype);

struct Verdict {
  bool ok = true;
  double max_error = 0;  // the largest |out - ref| over finite pairs (inf where NaN/Inf mismatch)
  std::string message;   // empty when ok: "element 17: 3.5 vs reference 3 (tolerance 1e-4)"
};
// OUT and REF must have the same dtype and length (a mismatch is a wrong answer, said so).
Verdict compare_output(const HostBuffer& out, const HostBuffer& ref);

// Fills BUF with values drawn from SEED: floats uniform in [-1, 1), integers small (so sums and
// products stay exact) and never 0 (so dividing by an input is defined): signed in [-8, 8]
// without 0, unsigned in [1, 16]; bool 0/1. The same seed gives the same bytes everywhere.
void fill_random(HostBuffer& buf, uint64_t seed);

}  // namespace tunebed
