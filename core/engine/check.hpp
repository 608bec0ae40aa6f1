// Checking a computed buffer, and the seeded inputs every check computes on: what the search
// (every candidate), `tunebed run --check`, check-corpus and the fuzzers share.
//
// A verdict needs an independent account of what a correct kernel computes. That is an Expected
// (core/ir/error_bound.hpp): per element the exact value, computed in float64 by the AST
// interpreter's exact run (or read off the Eigen reference), and a bound on how far a correct
// evaluation in the kernel's dtypes may lie from it, in any summation order. check_output accepts
// an element when |out - exact| <= bound. The bound is derived, not chosen: it follows the dtype's
// unit roundoff u, the length n of every sum the element depends on and the magnitudes of its
// terms (error_bound.hpp has the rules). Two cases at |r| = 1, 0.01 and 1e-4, against the
// dtype-only tolerance this replaced (atol + rtol |r|: 1e-3 + 1e-3|r| float32, 1e-2 + 1e-2|r|
// float16, 5e-2 + 5e-2|r| bfloat16):
//
//   dtype     old at |r| = 1 / 0.01 / 1e-4   one rounding (a*b)           1024 distinct, sum|x_i| = 32|r|
//   float32   2e-3 / 1.0e-3 / 1.0e-3         6.0e-8 / 6.0e-10 / 6.0e-12   3.0e-4 / 3.0e-6 / 3.0e-8
//   float16   2e-2 / 1.0e-2 / 1.0e-2         4.9e-4 / 4.9e-6 / 7.7e-8     2.5    / 2.5e-2 / 2.5e-4
//   bfloat16  1e-1 / 5.1e-2 / 5.0e-2         3.9e-3 / 3.9e-5 / 3.9e-7     20     / 0.20   / 2.0e-3
//
// (1024 distinct terms: g = 5 sqrt(1023) = 160, so the bound is 160 u sum|x_i|; 1024 equal terms
// err together, g = 1023; a sum whose terms cancel, sum|x_i| >> |r|, gets the larger bound it
// needs.) Integers and bool are exact unless they come from floats near a rounding or comparison
// edge. An element whose bound is infinite (see error_bound.hpp) is counted as unverified, not
// accepted silently.
#pragma once

#include <cstdint>
#include <string>

#include "core/ir/error_bound.hpp"
#include "core/ir/host_buffer.hpp"

namespace tunebed {

struct Verdict {
  bool ok = true;
  double max_error = 0;    // the largest |out - exact| over finite pairs (inf where NaN/Inf mismatch)
  double worst_ratio = 0;  // the largest |out - exact| / bound: how close the output came to failing
  int64_t unverified = 0;  // elements with an infinite bound (error_bound.hpp) or none (not sampled)
  std::string message;     // empty when ok: "element 17: 3.5 vs exact 3 (bound 1.2e-05)"
};

// OUT (in WANT's dtype, of WANT's length) against what a correct kernel computes. NaN must meet
// NaN and an infinity the same infinity; a NaN or infinity where the exact value is finite is
// wrong whatever the bound. An element that still holds the poison (below) was never written:
// wrong, whether or not the exact run sampled it, and even where the exact value is NaN.
Verdict check_output(const HostBuffer& out, const Expected& want);

// N elements of what an output buffer holds before the kernel under test runs. Floats: a quiet
// NaN with the payload 0x5a5a... (a NaN that arithmetic makes carries the default payload, and the
// inputs hold none), so check_output tells an element the kernel never wrote from any it computed,
// on elements a sampled exact run did not compute too. 32- and 64-bit integers: 0x5a5a5a5a
// (1515870810) and 0x5a5a...5a, which the small inputs of fill_random reach only through
// wraparound or hashing: an element holding it is never written unless the exact run computed that
// very value there (so an unsampled one a kernel did compute so is wrong once in 2^32). Narrower
// integers and bool: 1, wrong against most exact values but not told from a computed 1.
HostBuffer poisoned(DType dtype, int64_t n);

// Fills BUF with values drawn from SEED: floats uniform in [-1, 1), integers small (so sums and
// products stay exact) and never 0 (so dividing by an input is defined): signed in [-8, 8]
// without 0, unsigned in [1, 16]; bool 0/1. The same seed gives the same bytes everywhere.
void fill_random(HostBuffer& buf, uint64_t seed);

}  // namespace tunebed
