// What the two text fuzzers (fuzz_ir_parse, fuzz_tinygrad_ast) check alike: text a parser refuses
// is no finding, a node it builds prints as canonical text that parses back to the same node and
// prints the same again, and no node outlives the input that built it.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

#include "core/ir/text.hpp"
#include "fuzz/finding_report.hpp"

namespace tunebed::fuzz {

// PARSE's result, or nothing when it refused the text: a ParseError, or the std::invalid_argument
// / std::out_of_range of a malformed node.
template <class Parse>
std::optional<UOp> parse_or_skip(Parse parse) {
  try {
    return parse();
  } catch (const ParseError&) {
  } catch (const std::invalid_argument&) {
  } catch (const std::out_of_range&) {
  }
  return std::nullopt;
}

// print_uop(u) parses back to u and prints the same again; else a finding of TARGET about WHAT.
inline void check_canonical(const UOp& u, const std::string& target, const std::string& what) {
  auto fail = [&](const std::string& how, const std::string& detail) {
    report_finding("wrong", target + ": " + what + ": " + how, detail);
  };
  const std::string printed = print_uop(u);
  UOp back;
  try {
    back = parse_uop(printed);
  } catch (const std::exception& e) {
    fail("printed text does not parse", std::string(e.what()) + "\n" + printed);
  }
  if (!(back == u)) fail("printed text parses to another node", printed + "---\n" + print_uop(back));
  const std::string again = print_uop(back);
  if (again != printed) fail("printing the reparsed node changed the text", printed + "---\n" + again);
}

// Runs CHECK and reports the UOps it left alive.
template <class Check>
void check_no_leak(const std::string& target, Check check) {
  const size_t live = live_uop_count();
  check();
  if (live_uop_count() != live)
    report_finding("wrong", target + ": UOps leaked",
                   std::to_string(live_uop_count() - live) + " nodes still alive");
}

}  // namespace tunebed::fuzz
