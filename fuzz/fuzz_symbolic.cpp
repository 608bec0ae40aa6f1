// Fuzzes simplify() against the exact evaluator: the fuzzer's bytes choose variables with bounds
// and an expression over them (core/symbolic/expr_gen.hpp); the simplified expression must have
// the same value on every assignment when the domain is small, and on a sample otherwise, and
// simplifying again must change nothing. A mismatch aborts with both expressions and the values.
#include <fuzzer/FuzzedDataProvider.h>

#include "core/rewrite/graph_rewrite.hpp"
#include "core/symbolic/eval.hpp"
#include "core/symbolic/expr_gen.hpp"
#include "core/symbolic/expr_text.hpp"
#include "core/symbolic/symbolic.hpp"
#include "fuzz/finding_report.hpp"

namespace {

struct BytesSource {
  FuzzedDataProvider& fdp;
  int64_t pick(int64_t lo, int64_t hi) { return fdp.ConsumeIntegralInRange<int64_t>(lo, hi); }
};

[[noreturn]] void report(const char* kind, const char* what, const std::string& detail) {
  tunebed::fuzz::report_finding(kind, std::string("fuzz_symbolic: ") + what, detail);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tunebed;
  FuzzedDataProvider fdp(data, size);
  BytesSource src{fdp};
  DType dtype = fdp.ConsumeBool() ? dtypes::int32 : dtypes::int64;
  std::vector<UOp> vars = expr_gen::random_vars(src, 3, dtype);
  UOp e = fdp.ConsumeBool() ? expr_gen::random_int(src, vars, 6) : expr_gen::random_index(src, vars, 3);
  UOp s;
  try {
    s = simplify(e);
  } catch (const std::exception& ex) {
    report("crash", "simplify threw", print_expr(e) + "\n" + ex.what());
  }
  uint64_t seed = fdp.ConsumeIntegral<uint64_t>();
  if (auto m = find_mismatch(e, s, 64, 16, seed))
    report("wrong", "simplify changed the value",
           "input:      " + print_expr(e) + "\nsimplified: " + print_expr(s) +
               "\nat:         " + m->to_string());
  UOp again = simplify(s);
  if (!(again == s))
    report("wrong", "simplify is not idempotent", print_expr(s) + "\nsimplifies to " + print_expr(again));
  return 0;
}
