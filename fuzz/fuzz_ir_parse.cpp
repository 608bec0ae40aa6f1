// Fuzzes the canonical text form: the fuzzer's bytes are text for parse_uop. Text the parser
// rejects is fine (ParseError, or the std::invalid_argument / std::out_of_range of a malformed
// node); text it accepts must print to text that parses back to the same node and prints the
// same again, and every node the input built must be freed when its handles go.
#include <cstdint>
#include <string_view>

#include "fuzz/text_round_trip.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tunebed;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  fuzz::check_no_leak("fuzz_ir_parse", [&] {
    if (auto u = fuzz::parse_or_skip([&] { return parse_uop(text); }))
      fuzz::check_canonical(*u, "fuzz_ir_parse", "parsed text");
  });
  return 0;
}
