// Fuzzes the compiler's rewrite tables: each must keep the value of every graph it rewrites. The
// first byte of the input chooses what is rewritten, the rest is that mode's input:
//
// Even: the symbolic tables, one at a time. Each family of core/symbolic (fold, identities,
// combine, range, divmod, compare), the composed symbolic_simple and symbolic tables, runs alone
// on an integer graph, so a rule that is only sound because another family rewrote its input
// first is caught too, and the report names the table. fuzz_symbolic checks simplify() as a whole.
// The graphs are index arithmetic as the lowerer writes it: DEFINE_VARs with bounds and RANGEs
// (loop counters, 0 <= r < end) combined with + - * // % max min < == != where
// (core/symbolic/expr_gen.hpp). To evaluate, each RANGE becomes a DEFINE_VAR with its bounds;
// rewritten and original graph must agree on every assignment of a small domain, on a sample of a
// large one (core/symbolic/eval.hpp).
//
// Odd: the scheduler's and the code generation tables on a whole program. A random tensor
// program (fuzz_kernel's generator, small shapes) is scheduled, and the schedule, run by the AST
// interpreter, must equal the Eigen reference (the scheduler as one stage: kernelize, swizzler,
// fix_kernel_ops). Then each kernel gets a legal opt sequence the bytes choose
// (UPCAST, UNROLL, THREAD, PADTO, SWAP, TC) and goes through codegen's passes (rewrite_stages:
// lowerer, symbolic, expander, reduce, devectorizer, final). The graph after each pass is
// linearized and run in the program VM (core/codegen/program_vm.hpp) on seeded inputs, and every
// buffer must equal what the AST interpreter computes for the unoptimized kernel. Graphs before
// remove_reduce that still hold REDUCE, CONTRACT or an unexpanded UNROLL cannot run as a list:
// those stages are skipped; from "reduce" on every stage must run. The report names the first
// stage whose result is wrong, so the table that broke it (or, for the first stage run, a table
// before it) is named. Both sides divide as exec_alu does (x // 0 == 0), so a division by zero is
// a value, not a refusal; a kernel the AST interpreter refuses is skipped.
//
// A mismatch or an exception is reported (finding_report.hpp) with the graphs, or the kernel AST
// text and its opts.
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/codegen/codegen.hpp"
#include "core/codegen/program_vm.hpp"
#include "core/engine/check.hpp"
#include "core/opt/kernel.hpp"
#include "core/reference/reference.hpp"
#include "core/rewrite/graph_rewrite.hpp"
#include "core/schedule/ast_interpreter.hpp"
#include "core/schedule/schedule.hpp"
#include "core/symbolic/eval.hpp"
#include "core/symbolic/expr_gen.hpp"
#include "core/symbolic/expr_text.hpp"
#include "core/symbolic/rules.hpp"
#include "core/symbolic/symbolic.hpp"
#include "fuzz/fuzz_support.hpp"

namespace {

using namespace tunebed;

// ---- symbolic tables ---------------------------------------------------------------------------

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

void check_symbolic_table(FuzzedDataProvider& fdp) {
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
}

// ---- codegen tables on kernels -----------------------------------------------------------------

// Whether a list of the graph can run: the expander has removed CONTRACT and every UNROLL but
// those grouping STOREs, and remove_reduce every REDUCE.
bool runnable(const UOp& sink) {
  for (const UOp& u : sink.toposort())
    if (u.op() == Ops::REDUCE || u.op() == Ops::CONTRACT || (u.op() == Ops::UNROLL && !u.dtype().is_void()))
      return false;
  return true;
}

std::vector<HostBuffer*> pointers(std::vector<HostBuffer>& bufs) {
  std::vector<HostBuffer*> out;
  for (HostBuffer& b : bufs) out.push_back(&b);
  return out;
}

struct KernelCase {
  UOp ast;
  std::vector<Opt> opts;
  // `passed`: the stages whose graphs computed the right value (none: an earlier table may be at
  // fault too, as its graph could not run).
  std::string describe(const std::string& passed) const {
    std::ostringstream out;
    out << "kernel " << kernel_hash(ast) << " opts [" << to_string(opts)
        << "]\nearlier stages that ran right: " << (passed.empty() ? "none" : passed) << "\n"
        << print_uop(ast);
    return out.str();
  }
};

// Runs every runnable stage of the optimized kernel in the VM and checks it against `want`, the
// AST interpreter's exact run: the VM computes in the kernel's dtypes, in the order the opts chose
// (an unrolled sum adds in another order), so it must lie within the derived bound of each element.
void check_stages(const KernelCase& kc, const UOp& optimized, const std::vector<HostBuffer>& inputs,
                  const std::vector<Expected>& want) {
  std::vector<RewriteStage> stages;
  try {
    stages = rewrite_stages(optimized, Renderer::cpu(2));
  } catch (const std::exception& e) {
    fuzz::report_finding("crash", std::string("fuzz_rewrite: codegen threw on legal opts: ") + e.what(),
                         kc.describe(""));
  }
  std::string passed;
  bool required = false;
  for (const RewriteStage& stage : stages) {
    required |= stage.name == "reduce";
    if (!required && !runnable(stage.sink)) continue;
    std::vector<HostBuffer> got = inputs;
    try {
      run_program(linearize(stage.sink), pointers(got));
    } catch (const std::exception& e) {
      fuzz::report_finding("crash", "fuzz_rewrite: the graph after " + stage.name + " does not run",
                           std::string(e.what()) + "\n" + kc.describe(passed) + "\nafter " + stage.name +
                               ":\n" + print_uop(stage.sink));
    }
    for (size_t i = 0; i < want.size(); i++) {
      const Verdict v = check_output(got[i], want[i]);
      if (!v.ok)
        fuzz::report_finding("wrong", "fuzz_rewrite: the kernel is wrong after " + stage.name,
                             "buffer " + std::to_string(i) + ": " + v.message + "\n" + kc.describe(passed) +
                                 "\nafter " + stage.name + ":\n" + print_uop(stage.sink),
                             v.max_error);
    }
    passed += (passed.empty() ? "" : " ") + stage.name;
  }
}

// A random legal opt sequence whose choices are the input's bytes: up to 4 opts of the kinds the C
// target takes, on an axis the kernel has, by an amount that fits small dims (0: the whole axis;
// SWAP's is the other axis), each applied when it is legal. random_opts would try every action
// of search at every step: unwinding its refusals costs ten times the rest of an exec, and its
// seed hides the choices from the mutator.
void apply_random_opts(FuzzedDataProvider& fdp, Kernel& k) {
  static constexpr OptOps kOps[] = {OptOps::UPCAST, OptOps::UNROLL, OptOps::THREAD,
                                    OptOps::PADTO,  OptOps::SWAP,   OptOps::TC};
  static constexpr int kAmounts[] = {0, 2, 3, 4};
  for (int n = fdp.ConsumeIntegralInRange<int>(0, 4); n > 0; n--) {
    Opt opt{kOps[fdp.ConsumeIntegralInRange<size_t>(0, std::size(kOps) - 1)],
            fdp.ConsumeIntegralInRange<int>(0, std::max(k.shape_len() - 1, 0)),
            kAmounts[fdp.ConsumeIntegralInRange<size_t>(0, std::size(kAmounts) - 1)]};
    if (opt.op == OptOps::TC) opt.arg = TCArg{-1, fdp.ConsumeIntegralInRange<int>(0, 2), 1};
    (void)k.try_apply_opt(opt);  // an illegal opt is skipped
  }
}

// The scheduler's tables (kernelize, the swizzler's view_left/view_right, fix_kernel_ops) as one
// stage: the schedule's kernels, run exactly by the AST interpreter, must bound what the Eigen
// reference computes from the tensor graph (Eigen rounds in the dtypes, in its own order). A
// program the reference refuses (an integer division by zero) has no value to check.
void check_scheduler(const RandomProgram& program, const Schedule& s) {
  const Tensor& out = program.output;
  HostBuffer eigen;
  try {
    eigen = reference::to_host(reference::evaluate(out.uop(), out.buffers()));
  } catch (const reference::ReferenceError&) {
    return;
  }
  Expected want;
  try {
    want = expect_output(s, out.buffers());
  } catch (const AstInterpreterError&) {
    return;  // as below: a kernel the interpreter cannot run
  }
  const Verdict v = check_output(eigen, want);
  if (!v.ok)
    fuzz::report_finding("wrong", "fuzz_rewrite: the program is wrong after the scheduler",
                         v.message + "\nprogram:\n" + print_uop(out.uop()), v.max_error);
}

void check_kernels(FuzzedDataProvider& fdp) {
  fuzz::FdpSource source(fdp);
  // Small shapes keep the VM fast; the dtypes are fuzz_kernel's.
  const RandomProgram program = random_program(
      source, {.max_depth = 3, .max_rank = 3, .max_dim = 4, .dtypes = {dtypes::float32, dtypes::int32}});
  const uint64_t seed = fdp.ConsumeIntegral<uint64_t>();
  Schedule s;
  try {
    s = create_schedule({program.output.uop()});
  } catch (const std::exception& e) {
    fuzz::report_finding("crash", std::string("fuzz_rewrite: create_schedule threw: ") + e.what(),
                         print_uop(program.output.uop()));
  }
  check_scheduler(program, s);
  uint64_t n = 0;
  for (const ScheduleItem& item : s.items) {
    if (item.is_copy()) continue;
    n++;
    // Seeded contents in every buffer, outputs too: both runs start from the same bytes.
    std::vector<HostBuffer> inputs;
    for (const auto& [dtype, size] : ast_buffer_specs(item.ast)) {
      inputs.emplace_back(dtype, size);
      fill_random(inputs.back(), seed + 16 * n + inputs.size());
    }
    std::vector<Expected> want;
    try {
      want = expect_kernel_ast(item.ast, inputs);
    } catch (const AstInterpreterError&) {
      continue;  // a kernel the interpreter cannot run has no value to check against
    }
    Kernel k(item.ast, Renderer::cpu(2));
    apply_random_opts(fdp, k);
    check_stages({item.ast, k.applied_opts()}, k.get_optimized_ast(), inputs, want);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const bool kernel_mode = size > 0 && (data[0] & 1);
  FuzzedDataProvider fdp(size > 0 ? data + 1 : data, size > 0 ? size - 1 : 0);
  if (kernel_mode)
    check_kernels(fdp);
  else
    check_symbolic_table(fdp);
  return 0;
}
