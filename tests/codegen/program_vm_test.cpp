// The program VM (core/codegen/program_vm.hpp) against the AST interpreter: every workload kernel
// unoptimized, with hand-written opts (vector loads and stores, unrolled reduces, a THREAD split,
// tensor cores) and with random legal opts, run after every codegen stage from remove_reduce on;
// what it does with gates; and what it refuses, by name. Also rewrite_stages itself.
#include "core/codegen/program_vm.hpp"

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <random>

#include "core/opt/actions.hpp"
#include "core/opt/kernel.hpp"
#include "core/schedule/ast_interpreter.hpp"
#include "tests/codegen/bounded_property.hpp"
#include "tests/codegen/kernel_check.hpp"
#include "tests/codegen/kernels.hpp"
#include "tests/codegen/workload_kernels.hpp"

namespace tunebed {
namespace {

// The stages whose graphs every kernel can run: REDUCE is gone from "reduce" on.
const std::vector<std::string> kRunnableStages = {"reduce", "devectorizer", "final"};

std::vector<HostBuffer*> pointers(std::vector<HostBuffer>& bufs) {
  std::vector<HostBuffer*> out;
  for (HostBuffer& b : bufs) out.push_back(&b);
  return out;
}

const std::vector<testing::LibraryKernel>& kernels() {
  static const std::vector<testing::LibraryKernel> all = testing::library_kernels();
  return all;
}

// "" when the VM's runs of `optimized` after each runnable stage compute on seeded inputs what the
// AST interpreter computes for `plain`, else the first stage and buffer that differ.
std::string vm_disagreement(const UOp& plain, const UOp& optimized, uint32_t seed) {
  const std::vector<HostBuffer> inputs = testing::random_buffers(plain, seed);
  const std::vector<Expected> want = expect_kernel_ast(plain, inputs, {}, testing::kTestRunBudget);
  for (const RewriteStage& stage : rewrite_stages(optimized, Renderer::cpu(2))) {
    if (std::find(kRunnableStages.begin(), kRunnableStages.end(), stage.name) == kRunnableStages.end())
      continue;
    std::vector<HostBuffer> got = inputs;
    run_program(linearize(stage.sink), pointers(got));
    if (std::string wrong = testing::wrong_output(want, got); !wrong.empty())
      return "after " + stage.name + ", " + wrong;
  }
  return "";
}

TEST(ProgramVM, RunsEveryWorkloadKernelUnoptimizedAsTheAstInterpreter) {
  ASSERT_GE(kernels().size(), 12u);
  for (const testing::LibraryKernel& lk : kernels())
    EXPECT_EQ(vm_disagreement(lk.ast, testing::no_opts(lk.ast), 1), "") << lk.label;
}

// Each sequence on every kernel it is legal for. Every sequence must be legal for some kernel and
// leave the ops it is there for in the final list, so none is silently untested.
TEST(ProgramVM, RunsHandWrittenOptsAsTheAstInterpreter) {
  using Holds = bool (*)(const UOp&);
  struct Case {
    const char* opts;
    const char* what;
    Holds holds;  // a uop the final list must have: what the opts are there to exercise
  };
  const Case cases[] = {
      {"UPCAST:0:4", "a float4 LOAD",
       [](const UOp& u) { return u.op() == Ops::LOAD && u.dtype().count == 4; }},
      {"UNROLL:0:4", "an accumulator", [](const UOp& u) { return u.op() == Ops::DEFINE_REG; }},
      {"UPCAST:0:2,UNROLL:0:0", "an accumulator", [](const UOp& u) { return u.op() == Ops::DEFINE_REG; }},
      {"THREAD:0:2", "a core id", [](const UOp& u) { return u.op() == Ops::SPECIAL; }},
      {"TC:0:(-1,0,1)", "a WMMA", [](const UOp& u) { return u.op() == Ops::WMMA; }},
  };
  for (const Case& c : cases) {
    int ran = 0;
    for (const testing::LibraryKernel& lk : kernels()) {
      Kernel k(lk.ast, Renderer::cpu(2));
      try {
        k.apply_opts(parse_opts(c.opts));
      } catch (const KernelOptError&) {
        continue;
      }
      const UOp optimized = k.get_optimized_ast();
      const std::vector<UOp> uops = full_rewrite(optimized, Renderer::cpu(2));
      if (std::none_of(uops.begin(), uops.end(), c.holds)) continue;
      ran++;
      EXPECT_EQ(vm_disagreement(lk.ast, optimized, 2), "") << lk.label << " opts " << c.opts;
    }
    EXPECT_GT(ran, 0) << c.opts << ": no kernel took these opts and kept " << c.what;
  }
}

// An upcast beyond the tensor core makes the expander's WMMA stand for two; each keeps its own
// accumulator of the WMMA's width, and the result is still the plain kernel's. (One accumulator
// for all of them was a float32.vec(32) for eight CUDA WMMAs, a type CUDA C lacks.)
TEST(ProgramVM, AnUpcastTensorCoreKeepsOneAccumulatorPerWmma) {
  const auto lk = std::find_if(kernels().begin(), kernels().end(), [](const testing::LibraryKernel& k) {
    return k.label.starts_with("matmul:M=16,N=32,K=64,dtype=float32");
  });
  ASSERT_NE(lk, kernels().end());
  const UOp optimized = testing::with_opts(lk->ast, "TC:0:(-1,0,1),UPCAST:0:2");
  std::vector<std::string> wmmas, accumulators;
  for (const UOp& u : full_rewrite(optimized, Renderer::cpu(2))) {
    if (u.op() == Ops::WMMA) wmmas.push_back(to_string(u.dtype()));
    if (u.op() == Ops::DEFINE_REG) accumulators.push_back(to_string(u.dtype().base()));
  }
  ASSERT_EQ(wmmas.size(), 2u);
  EXPECT_EQ(accumulators, wmmas);
  EXPECT_EQ(vm_disagreement(lk->ast, optimized, 3), "");
}

TEST(ProgramVM, AgreesWithTheAstInterpreterUnderRandomLegalOpts) {
  testing::check_bounded_property(30, [] {
    const auto& lk = kernels()[*rc::gen::inRange<size_t>(0, kernels().size())];
    const auto seed = *rc::gen::arbitrary<uint32_t>();
    Kernel k(lk.ast, Renderer::cpu(2));
    const std::vector<Opt> opts = random_opts(k, seed, 4);
    k.apply_opts(opts);
    RC_ASSERT(vm_disagreement(lk.ast, k.get_optimized_ast(), seed) == "");
  });
}

// A gated-off LOAD reads 0 and a gated-off STORE writes nothing: out[0] = in[0] where the gate
// holds, out[1] keeps its value, out[2] = 0 + 1 (a gated load's zero).
TEST(ProgramVM, GatesSkipStoresAndLoadZero) {
  const UOp in = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr_to(4), {}, Arg(1));
  const UOp out = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr_to(4), {}, Arg(0));
  const UOp yes = UOp::const_bool(true), no = UOp::const_bool(false);
  auto at = [](const UOp& buf, int64_t i, const UOp& gate) {
    return UOp::make(Ops::INDEX, buf.dtype(), {buf, UOp::index(i), gate});
  };
  const UOp load0 = UOp::make(Ops::LOAD, dtypes::float32, {at(in, 0, yes)});
  const UOp load_off = UOp::make(Ops::LOAD, dtypes::float32, {at(in, 3, no)});
  const UOp plus_one = load_off + UOp::const_float(dtypes::float32, 1);
  const UOp s0 = UOp::make(Ops::STORE, dtypes::void_, {at(out, 0, yes), load0});
  const UOp s1 = UOp::make(Ops::STORE, dtypes::void_, {at(out, 1, no), load0});
  const UOp s2 = UOp::make(Ops::STORE, dtypes::void_, {at(out, 2, yes), plus_one});
  const UOp sink = UOp::make(Ops::SINK, dtypes::void_, {s0, s1, s2});
  HostBuffer o(dtypes::float32, 4), i(dtypes::float32, 4);
  for (int64_t k = 0; k < 4; k++) {
    o.set_float(k, 10 + k);
    i.set_float(k, 20 + k);
  }
  run_program(sink.toposort(), {&o, &i});
  EXPECT_EQ(o.get_float(0), 20);
  EXPECT_EQ(o.get_float(1), 11);
  EXPECT_EQ(o.get_float(2), 1);
  EXPECT_EQ(o.get_float(3), 13);
}

std::string vm_error(const std::vector<UOp>& uops, std::vector<HostBuffer*> bufs) {
  try {
    run_program(uops, bufs);
  } catch (const ProgramVMError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ProgramVM, RefusesAGraphBeforeRemoveReduceNamingTheOp) {
  const UOp ast = testing::sum_rows(4, 8);
  const std::vector<RewriteStage> stages = rewrite_stages(ast);
  HostBuffer out(dtypes::float32, 4), in(dtypes::float32, 32);
  const std::string msg = vm_error(linearize(stages.at(2).sink), {&out, &in});  // "expander"
  EXPECT_NE(msg.find("REDUCE"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not an op the VM runs"), std::string::npos) << msg;
}

TEST(ProgramVM, RefusesOutOfBoundsAccessAndWrongBuffersClearly) {
  const UOp buf = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr_to(4), {}, Arg(0));
  const UOp index = UOp::make(Ops::INDEX, buf.dtype(), {buf, UOp::index(4)});
  const UOp store = UOp::make(Ops::STORE, dtypes::void_, {index, UOp::const_float(dtypes::float32, 1)});
  const std::vector<UOp> uops = UOp::make(Ops::SINK, dtypes::void_, {store}).toposort();
  HostBuffer f(dtypes::float32, 4), i(dtypes::int32, 4), small(dtypes::float32, 3);
  EXPECT_NE(vm_error(uops, {&f}).find("accesses element 4 of data0, which has 4"), std::string::npos);
  EXPECT_NE(vm_error(uops, {&i}).find("is a buffer of float32, given one of int32"), std::string::npos);
  EXPECT_NE(vm_error(uops, {&small}).find("needs 4 elements, given 3"), std::string::npos);
  EXPECT_NE(vm_error(uops, {}).find("is buffer 0, but 0 were given"), std::string::npos);
  EXPECT_NE(vm_error({store}, {&f}).find("does not end with a SINK"), std::string::npos);
  EXPECT_NE(vm_error({index, uops.back()}, {&f}).find("not computed before it"), std::string::npos);
}

TEST(CodegenStages, NamesEachPassInOrderAndEndsWithTheRenderedSink) {
  const UOp ast = testing::split_axis(testing::sum_rows(4, 8), 1, 4, AxisType::UNROLL);
  const std::vector<RewriteStage> stages = rewrite_stages(ast);
  std::vector<std::string> names;
  for (const RewriteStage& s : stages) names.push_back(s.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"lowerer", "symbolic", "expander", "reduce", "devectorizer", "final"}));
  EXPECT_EQ(stages.back().sink, full_rewrite_to_sink(ast));
  // Each stage is the graph its pass leaves: the expander removes the CONTRACT, remove_reduce
  // the REDUCE.
  auto holds = [](const UOp& sink, Ops op) {
    const std::vector<UOp> topo = sink.toposort();
    return std::any_of(topo.begin(), topo.end(), [&](const UOp& u) { return u.op() == op; });
  };
  EXPECT_TRUE(holds(stages[1].sink, Ops::CONTRACT));
  EXPECT_FALSE(holds(stages[2].sink, Ops::CONTRACT));
  EXPECT_TRUE(holds(stages[2].sink, Ops::REDUCE));
  EXPECT_FALSE(holds(stages[3].sink, Ops::REDUCE));
}

}  // namespace
}  // namespace tunebed
