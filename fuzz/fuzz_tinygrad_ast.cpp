// Fuzzes the import of tinygrad's kernel-AST text: the fuzzer's bytes are one line for
// parse_tinygrad_uop, and what parses goes through the mapping onto tunebed's kernel AST
// (core/imports). Rejections are fine: a ParseError (or the std::invalid_argument /
// std::out_of_range of a malformed node) from the parser, an ImportError from the mapping. What is
// taken must print as canonical text that parses back to the same UOps, prints the same again and
// hashes the same; and every node the input built must be freed when its handles go.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/imports/tinygrad_ast.hpp"
#include "core/ir/text.hpp"
#include "core/ir/tinygrad_text.hpp"
#include "fuzz/finding_report.hpp"

namespace {

using namespace tunebed;

[[noreturn]] void report(const char* what, const std::string& detail) {
  tunebed::fuzz::report_finding("wrong", std::string("fuzz_tinygrad_ast: ") + what, detail);
}

// print_uop(u) parses back to u and prints the same again.
void check_canonical(const UOp& u, const char* what) {
  const std::string printed = print_uop(u);
  UOp back;
  try {
    back = parse_uop(printed);
  } catch (const std::exception& e) {
    report(what, "printed text does not parse: " + std::string(e.what()) + "\n" + printed);
  }
  if (!(back == u))
    report(what, "printed text parses to another node\n" + printed + "---\n" + print_uop(back));
  if (print_uop(back) != printed) report(what, "printing the reparsed node changed the text\n" + printed);
}

void check_import(std::string_view text) {
  UOp parsed;
  try {
    parsed = parse_tinygrad_uop(text);
  } catch (const ParseError&) {
    return;
  } catch (const std::invalid_argument&) {
    return;
  } catch (const std::out_of_range&) {
    return;
  }
  check_canonical(parsed, "parsed tinygrad text");
  imports::ImportedKernel k;
  try {
    k = imports::from_tinygrad(parsed);
  } catch (const imports::ImportError&) {
    return;
  }
  check_canonical(k.ast, "imported kernel");
  if (!k.ast.arg().is_none()) report("the imported SINK kept an arg", print_uop(k.ast));
  if (kernel_hash(parse_uop(print_uop(k.ast))) != kernel_hash(k.ast))
    report("the kernel hash changed through its text", print_uop(k.ast));
  // The seed's form is a fixed point: importing the imported kernel changes nothing.
  if (!(imports::from_tinygrad(k.ast).ast == k.ast))
    report("the mapping is not idempotent", print_uop(k.ast));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const size_t live = live_uop_count();
  check_import(std::string_view(reinterpret_cast<const char*>(data), size));
  if (live_uop_count() != live)
    report("UOps leaked", std::to_string(live_uop_count() - live) + " nodes still alive");
  return 0;
}
