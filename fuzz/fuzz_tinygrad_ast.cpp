// Fuzzes the import of tinygrad's kernel-AST text: the fuzzer's bytes are one line for
// parse_tinygrad_uop, and what parses goes through the mapping onto tunebed's kernel AST
// (core/imports). Rejections are fine: a ParseError (or the std::invalid_argument /
// std::out_of_range of a malformed node) from the parser, an ImportError with a message from the
// mapping or the kernel-AST rules (core/spec), which see arbitrary parsed graphs here and must
// refuse them, never throw anything else. What is taken must keep every kernel-AST rule, print as
// canonical text that parses back to the same UOps, print the same again and hash the same; and
// every node the input built must be freed when its handles go.
#include <cstdint>
#include <string>
#include <string_view>

#include "core/imports/tinygrad_ast.hpp"
#include "core/ir/tinygrad_text.hpp"
#include "core/spec/verify_kernel_ast.hpp"
#include "fuzz/text_round_trip.hpp"

namespace {

using namespace tunebed;

constexpr const char* kTarget = "fuzz_tinygrad_ast";

[[noreturn]] void report(const char* what, const std::string& detail) {
  fuzz::report_finding("wrong", std::string(kTarget) + ": " + what, detail);
}

void check_import(std::string_view text) {
  const std::optional<UOp> parsed = fuzz::parse_or_skip([&] { return parse_tinygrad_uop(text); });
  if (!parsed) return;
  fuzz::check_canonical(*parsed, kTarget, "parsed tinygrad text");
  imports::ImportedKernel k;
  try {
    k = imports::from_tinygrad(*parsed);
  } catch (const imports::ImportError& e) {
    if (std::string_view(e.what()).empty())
      report("an import was refused without a message", std::string(text));
    return;
  }
  if (std::optional<std::string> violation = kernel_ast_violation(k.ast))
    report("an imported kernel breaks a kernel AST rule", *violation + "\n" + print_uop(k.ast));
  fuzz::check_canonical(k.ast, kTarget, "imported kernel");
  if (!k.ast.arg().is_none()) report("the imported SINK kept an arg", print_uop(k.ast));
  if (kernel_hash(parse_uop(print_uop(k.ast))) != kernel_hash(k.ast))
    report("the kernel hash changed through its text", print_uop(k.ast));
  // The seed's form is a fixed point: importing the imported kernel changes nothing.
  if (!(imports::from_tinygrad(k.ast).ast == k.ast))
    report("the mapping is not idempotent", print_uop(k.ast));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::check_no_leak(kTarget,
                      [&] { check_import(std::string_view(reinterpret_cast<const char*>(data), size)); });
  return 0;
}
