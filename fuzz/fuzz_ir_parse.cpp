// Fuzzes the canonical text form: the fuzzer's bytes are text for parse_uop. Text the parser
// rejects is fine (ParseError, or the std::invalid_argument / std::out_of_range of a malformed
// node); text it accepts must print to text that parses back to the same node and prints the
// same again, and every node the input built must be freed when its handles go.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/ir/text.hpp"
#include "fuzz/finding_report.hpp"

namespace {

[[noreturn]] void report(const char* what, const std::string& detail) {
  tunebed::fuzz::report_finding("wrong", std::string("fuzz_ir_parse: ") + what, detail);
}

void check_round_trip(std::string_view text) {
  using namespace tunebed;
  UOp u;
  try {
    u = parse_uop(text);
  } catch (const ParseError&) {
    return;
  } catch (const std::invalid_argument&) {
    return;
  } catch (const std::out_of_range&) {
    return;
  }
  std::string printed = print_uop(u);
  UOp back;
  try {
    back = parse_uop(printed);
  } catch (const std::exception& e) {
    report("printed text does not parse", printed + e.what());
  }
  if (!(back == u)) report("printed text parses to another node", printed + "---\n" + print_uop(back));
  std::string again = print_uop(back);
  if (again != printed) report("printing the reparsed node changed the text", printed + "---\n" + again);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  size_t live = tunebed::live_uop_count();
  check_round_trip(std::string_view(reinterpret_cast<const char*>(data), size));
  if (tunebed::live_uop_count() != live)
    report("UOps leaked", std::to_string(tunebed::live_uop_count() - live) + " nodes still alive");
  return 0;
}
