// How much of a repetitive test to run. Under AddressSanitizer + UBSan (scripts/test's second
// build) our code runs 5-10x slower, and a test that repeats the same code over more data (100
// random opt sequences, an exact run of a million iterations) spends minutes finding nothing the
// first cases did not reach: the sanitizers look for memory and undefined-behaviour errors on the
// paths taken, not for wrong values. So under them such loops run a tenth of their cases; the
// normal build runs them all.
#pragma once

#include <algorithm>
#include <cstdint>

namespace tunebed::testing {

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

// N cases, or a tenth of them (at least one) under the sanitizers.
constexpr int64_t scaled(int64_t n) { return kSanitized ? std::max<int64_t>(1, n / 10) : n; }

}  // namespace tunebed::testing
