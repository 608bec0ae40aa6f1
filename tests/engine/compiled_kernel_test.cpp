// The kernel-level API: opts choices, the work estimate, the program cache and batch compiles.
#include "core/engine/compiled_kernel.hpp"

#include <gtest/gtest.h>

#include "core/engine/check.hpp"
#include "core/imports/tinygrad_ast.hpp"
#include "core/opt/heuristic.hpp"
#include "core/runtime/cpu_device.hpp"
#include "core/schedule/ast_interpreter.hpp"
#include "core/schedule/schedule.hpp"
#include "core/tensor/workloads.hpp"

namespace tunebed {
namespace {

UOp only_kernel(const std::string& spec) {
  const Schedule s = create_schedule({make_workload(spec).output.uop()});
  EXPECT_EQ(s.items.size(), 1u) << spec;
  return s.items.at(0).ast;
}

// Runs k on seeded inputs and checks its output against the AST interpreter's exact run.
Verdict run_against_interpreter(const CompiledKernel& k, const UOp& ast) {
  std::vector<HostBuffer> got = k.make_buffers();
  for (size_t i = 1; i < got.size(); i++) fill_random(got[i], i);
  const std::vector<Expected> want = expect_kernel_ast(ast, got);
  std::vector<HostBuffer*> got_ptrs;
  for (HostBuffer& b : got) got_ptrs.push_back(&b);
  k.run(got_ptrs);
  return check_output(got[0], want[0]);
}

TEST(KernelCompiler, OptsChoicesResolveAsAsked) {
  const KernelCompiler compiler(open_device("cpu"));
  const UOp ast = only_kernel("matmul:M=32,N=32,K=32");
  const Kernel plain(ast, compiler.renderer());
  EXPECT_TRUE(compiler.compile(ast, KernelOpts::none()).applied_opts.empty());
  EXPECT_EQ(compiler.compile(ast, KernelOpts::hand_coded()).applied_opts, hand_coded_optimizations(plain));
  const std::vector<Opt> given = parse_opts("UPCAST:0:4,UNROLL:0:4");
  const CompiledKernel k = compiler.compile(ast, KernelOpts::given(given));
  EXPECT_EQ(k.applied_opts, given);
  EXPECT_EQ(run_against_interpreter(k, ast).message, "");
  EXPECT_THROW(compiler.compile(ast, KernelOpts::given(parse_opts("UPCAST:0:5"))), KernelOptError);
}

// Regression (check-corpus, dataset line 3717): a 256-wide unrolled float16 reduce rendered as one
// inline chain nested deeper than clang's 256 brackets and failed to compile.
TEST(KernelCompiler, AWideUnrolledHalfReduceCompiles) {
  const KernelCompiler compiler(open_device("cpu"));
  const UOp ast = only_kernel("sum:M=2,N=256,axis=rows,dtype=float16");
  const CompiledKernel k = compiler.compile(ast, KernelOpts::given(parse_opts("UNROLL:0:16,UNROLL:0:16")));
  EXPECT_EQ(run_against_interpreter(k, ast).message, "");
}

// Regression (check-corpus, dataset line 4080): clang 14 bit-casts a vector element as if it were
// element 0, so an upcast float->int BITCAST copied the first lane into every output.
TEST(KernelCompiler, AnUpcastBitcastKeepsEachLane) {
  const KernelCompiler compiler(open_device("cpu"));
  const UOp ast =
      imports::parse_tinygrad_kernel(
          "UOp(Ops.SINK,dtypes.void,arg=None,src=(UOp(Ops.STORE,dtypes.void,arg=None,src=(UOp(Ops.VIEW,"
          "dtypes.int.ptr(9),arg=ShapeTracker(views=(View(shape=(3,3),strides=(3,1),offset=0,mask=None,"
          "contiguous=True),)),src=(UOp(Ops.DEFINE_GLOBAL,dtypes.int.ptr(9),arg=0,src=()),)),UOp(Ops.BITCAST,"
          "dtypes.int,arg=None,src=(UOp(Ops.LOAD,dtypes.float,arg=None,src=(UOp(Ops.VIEW,dtypes.float.ptr(9),"
          "arg=ShapeTracker(views=(View(shape=(3,3),strides=(3,1),offset=0,mask=None,contiguous=True),)),src="
          "(UOp(Ops.DEFINE_GLOBAL,dtypes.float.ptr(9),arg=1,src=()),)),)),)),)),))")
          .ast;
  const CompiledKernel k = compiler.compile(ast, KernelOpts::given(parse_opts("UPCAST:0:0")));
  EXPECT_EQ(run_against_interpreter(k, ast).message, "");
}

TEST(KernelCompiler, TheSameSourceIsCompiledOnce) {
  const KernelCompiler compiler(open_device("cpu"));
  const UOp ast = only_kernel("sum:M=7,N=3,axis=rows");
  const CompiledKernel a = compiler.compile(ast, KernelOpts::none()),
                       b = compiler.compile(ast, KernelOpts::none());
  EXPECT_EQ(a.program, b.program);
}

TEST(KernelCompiler, ABatchIsOneClangRunAndEachVariantComputesTheKernel) {
  const KernelCompiler compiler(open_device("cpu"));
  const UOp ast = only_kernel("matmul:M=12,N=8,K=20");
  // Options never compiled before in any cache: a fresh directory.
  const char* old_cache = std::getenv("TUNEBED_CACHE_DIR");
  const std::string old = old_cache ? old_cache : "";
  char dir[] = "/tmp/tunebed-engine-cache-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  setenv("TUNEBED_CACHE_DIR", dir, 1);
  std::vector<std::pair<UOp, KernelOpts>> batch;
  for (const char* opts : {"", "UPCAST:0:4", "UPCAST:1:4,UNROLL:0:4", "UPCAST:0:3,UPCAST:1:2,UNROLL:0:5"})
    batch.emplace_back(ast, KernelOpts::given(parse_opts(opts)));
  const int64_t before = clang_invocations();
  const std::vector<CompiledKernel> ks = compiler.compile_batch(batch);
  EXPECT_EQ(clang_invocations() - before, 1);
  old_cache ? setenv("TUNEBED_CACHE_DIR", old.c_str(), 1) : unsetenv("TUNEBED_CACHE_DIR");
  std::filesystem::remove_all(dir);
  ASSERT_EQ(ks.size(), batch.size());
  for (const CompiledKernel& k : ks) {
    SCOPED_TRACE(to_string(k.applied_opts));
    EXPECT_EQ(run_against_interpreter(k, ast).message, "");
  }
  EXPECT_NE(ks[1].spec.name, ks[2].spec.name);
}

TEST(KernelCompiler, ReportLineNamesTheKernelItsOptsAndRates) {
  const KernelCompiler compiler(open_device("cpu"));
  const CompiledKernel k =
      compiler.compile(only_kernel("matmul:M=8,N=8,K=8"), KernelOpts::given(parse_opts("UPCAST:0:2")));
  Timing t;
  t.median = 1e-3;
  const std::string line = report_line(k, t);
  EXPECT_EQ(line.rfind(k.name + "  ", 0), 0u) << line;
  EXPECT_NE(line.find("UPCAST:0:2"), std::string::npos) << line;
  EXPECT_NE(line.find("1.000 ms  0.00 GFLOP/s  0.00 GB/s"), std::string::npos) << line;
}

}  // namespace
}  // namespace tunebed
