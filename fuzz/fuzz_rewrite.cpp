// Fuzzes the symbolic rewrite tables one at a time: each family of core/symbolic (fold,
// identities, combine, range, divmod, compare), the composed symbolic_simple and symbolic tables,
// must keep the value of every integer graph it rewrites. fuzz_symbolic checks simplify() as a
// whole; here a table runs alone, so a rule that is only sound because another family rewrote its
// input first is caught too, and the report names the table.
//
// The graphs are index arithmetic as the lowerer writes it: DEFINE_VARs with bounds and RANGEs
// (loop counters, 0 <= r < end) combined with + - * // % max min < == != where
// (core/symbolic/expr_gen.hpp). To evaluate, each RANGE becomes a DEFINE_VAR with its bounds;
// rewritten and original graph must agree on every assignment of a small domain, on a sample of a
// large one (core/symbolic/eval.hpp). A mismatch or an exception is reported (finding_report.hpp) with both
// graphs.
#include <fuzzer/FuzzedDataProvider.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/rewrite/graph_rewrite.hpp"
#include "core/symbolic/eval.hpp"
#include "core/symbolic/expr_gen.hpp"
#include "core/symbolic/expr_text.hpp"
#include "core/symbolic/rules.hpp"
#include "core/symbolic/symbolic.hpp"
#include "fuzz/finding_report.hpp"

namespace {

using namespace tunebed;

struct BytesSource {
  FuzzedDataProvider& fdp;
  int64_t pick(int64_t lo, int64_t hi) { return fdp.ConsumeIntegralInRange<int64_t>(lo, hi); }
};

struct Table {
  const char* name;
  PatternMatcher pm;
};

const std::vector<Table>& tables() {
  using namespace symbolic_detail;
  static const std::vector<Table> all = {
      {"symbolic", symbolic()},           {"symbolic_simple", symbolic_simple()},
      {"fold_rules", fold_rules()},       {"identity_rules", identity_rules()},
      {"combine_rules", combine_rules()}, {"range_rules", range_rules()},
      {"divmod_rules", divmod_rules()},   {"compare_rules", compare_rules()},
  };
  return all;
}

// Each RANGE replaced by a DEFINE_VAR "r<axis>" over [0, end-1], so the evaluator can assign it.
UOp ranges_as_vars(const UOp& root) {
  std::map<const void*, UOp> done;
  for (const UOp& u : root.toposort()) {
    std::vector<UOp> src;
    for (const UOp& s : u.src()) src.push_back(done.at(s.get()));
    UOp out = u.op() == Ops::RANGE ? UOp::variable("r" + std::to_string(u.arg().as_int()), 0,
                                                   u.src(0).const_int() - 1, u.dtype())
                                   : (src.empty() ? u : u.with_src(std::move(src)));
    done.emplace(u.get(), out);
  }
  return done.at(root.get());
}

[[noreturn]] void report(const char* kind, const char* table, const char* what, const std::string& detail) {
  fuzz::report_finding(kind, std::string("fuzz_rewrite: ") + table + " " + what, detail);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  BytesSource src{fdp};
  const Table& table = tables()[fdp.ConsumeIntegralInRange<size_t>(0, tables().size() - 1)];
  const DType dtype = fdp.ConsumeBool() ? dtypes::int32 : dtypes::index;
  std::vector<UOp> leaves = expr_gen::random_vars(src, 2, dtype);
  for (int64_t axis = 0, n = src.pick(0, 2); axis < n; axis++)
    leaves.push_back(UOp::make(Ops::RANGE, dtype, {UOp::const_int(dtype, src.pick(1, 32))}, axis));
  // Mostly index expressions (the tables' real diet), sometimes arbitrary integer arithmetic.
  const UOp e =
      src.pick(0, 3) ? expr_gen::random_index(src, leaves, 3) : expr_gen::random_int(src, leaves, 5);
  UOp r;
  try {
    r = graph_rewrite(e, table.pm);
  } catch (const std::exception& ex) {
    report("crash", table.name, "threw", print_expr(e) + "\n" + ex.what());
  }
  const UOp before = ranges_as_vars(e), after = ranges_as_vars(r);
  if (auto m = find_mismatch(before, after, 256, 32, fdp.ConsumeIntegral<uint64_t>()))
    report("wrong", table.name, "changed the value",
           "input:     " + print_expr(before) + "\nrewritten: " + print_expr(after) +
               "\nat:        " + m->to_string());
  return 0;
}
