// How a fuzz target reports a finding that is not a crash of its own (a wrong value, an exception
// where none may be):
//
//   tunebed-finding: <kind>: <signature>
//   max_error: <x>                  (wrong values only)
//   <detail lines: the inputs, both results>
//
// and then abort(), so libFuzzer stops and saves the input as for any crash. `tunebed fuzz`
// (harness/fuzz_campaign.hpp) reads <kind> (wrong or crash) and <signature>: a short text naming
// the failed check and not the input, so every input that hits one bug dedupes to one finding.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace tunebed::fuzz {

[[noreturn]] inline void report_finding(const std::string& kind, const std::string& signature,
                                        const std::string& detail, double max_error = -1) {
  std::fprintf(stderr, "tunebed-finding: %s: %s\n", kind.c_str(), signature.c_str());
  if (max_error >= 0) std::fprintf(stderr, "max_error: %g\n", max_error);
  std::fprintf(stderr, "%s\n", detail.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace tunebed::fuzz
