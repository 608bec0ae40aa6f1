// apply_opt's legality rules: one test per rule, each showing the refusal and its message.
#include <gtest/gtest.h>

#include "tests/opt/kernels.hpp"

namespace tunebed {
namespace {

// Applies `before` (which must be legal), then expects why_illegal to name `message` for `opt`,
// and apply_opt to refuse it with the same message and leave the kernel as it was.
void expect_refused(const UOp& ast, const Renderer& r, const std::string& before, const std::string& opt,
                    const std::string& message) {
  Kernel k(ast, r);
  k.apply_opts(parse_opts(before));
  EXPECT_EQ(k.why_illegal(parse_opt(opt)), message);
  Kernel unchanged = k;
  try {
    k.apply_opt(parse_opt(opt));
    FAIL() << opt << " was accepted after \"" << before << "\"";
  } catch (const KernelOptError& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
  EXPECT_EQ(k.sts(), unchanged.sts());
  EXPECT_EQ(k.axis_types(), unchanged.axis_types());
  EXPECT_EQ(k.applied_opts(), unchanged.applied_opts());
}

const Renderer cpu = Renderer::cpu(8);
const Renderer gpu = Renderer::opencl();
const Renderer cuda = Renderer::cuda(80);
const UOp& matmul() { return test::named("matmul_64"); }  // (64, 64, 64), 2 output axes + 1 reduce

// An elementwise copy over a symbolic length N in [1, 100].
UOp symbolic_copy() {
  UOp n = UOp::variable("N", 1, 100);
  ShapeTracker st = ShapeTracker::from_shape({sint(n)});
  auto buf = [&](int i) { return UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr_to(100), {}, Arg(i)); };
  auto view = [&](int i) { return UOp::make(Ops::VIEW, dtypes::float32.ptr_to(100), {buf(i)}, st.to_arg()); };
  UOp load = UOp::make(Ops::LOAD, dtypes::float32, {view(1)});
  return UOp::make(Ops::SINK, dtypes::void_, {UOp::make(Ops::STORE, dtypes::void_, {view(0), load})});
}

TEST(Legality, AmountZeroTakesTheWholeAxis) {
  Kernel k(test::named("max_256x7"), cpu);  // (256, 7) L R
  k.apply_opt(parse_opt("UNROLL:0:0"));
  EXPECT_EQ(test::letters(k), "Lr");
  EXPECT_EQ(to_string(k.full_shape()), "(256, 7)");
}

TEST(Legality, AmountZeroOfASymbolicAxisIsRefused) {
  expect_refused(symbolic_copy(), cpu, "", "UPCAST:0:0",
                 "UPCAST:0:0 takes the whole axis, which is symbolic (N)");
}

TEST(Legality, AmountOneIsMeaningless) {
  expect_refused(matmul(), cpu, "", "UPCAST:0:1", "shift/padto of amt=1 is meaningless");
}

TEST(Legality, AmountMustDivideTheAxis) {
  expect_refused(matmul(), cpu, "", "UPCAST:0:5",
                 "no longer valid shift: axis 0 has size 64, which amt=5 does not divide");
}

TEST(Legality, PadtoNeedNotDivide) {
  Kernel k(test::named("matmul_33x17x29"), cpu);
  k.apply_opt(parse_opt("PADTO:0:4"));
  EXPECT_EQ(to_string(k.full_shape()), "(36, 29, 17)");
}

TEST(Legality, AxisMustExist) {
  expect_refused(matmul(), cpu, "", "UPCAST:3:4",
                 "invalid axis 3 for UPCAST: the kernel has 3 axes (64, 64, 64)");
}

TEST(Legality, UpcastOnlyOnUpcastableDims) {
  expect_refused(matmul(), cpu, "", "UPCAST:2:4",
                 "axis=2 not in upcastable_dims=[0, 1] (loop axes of an int size > 1)");
}

TEST(Legality, UpcastAtMost16) {
  expect_refused(matmul(), cpu, "", "UPCAST:0:32", "don't upcast more than 16, got 32");
}

TEST(Legality, UnrollOnlyOnReduceDims) {
  expect_refused(matmul(), cpu, "", "UNROLL:1:4",
                 "UNROLL axis 1 is not an unrollable dim: UNROLL counts the reduce axes of size > 1 that are "
                 "not already "
                 "unrolled, here 1 of them");
}

TEST(Legality, UnrollNotOnAnAlreadyUnrolledAxis) {
  expect_refused(test::named("max_256x7"), cpu, "UNROLL:0:0", "UNROLL:0:0",
                 "UNROLL axis 0 is not an unrollable dim: UNROLL counts the reduce axes of size > 1 that are "
                 "not already "
                 "unrolled, here 0 of them");
}

TEST(Legality, UnrollAtMost32) {
  expect_refused(test::named("sum_4096x4096"), cpu, "", "UNROLL:0:64", "don't unroll more than 32, got 64");
}

TEST(Legality, LocalOnlyOnTargetsWithLocals) {
  expect_refused(matmul(), cpu, "", "LOCAL:0:4", "target CPU does not support local");
}

TEST(Legality, LocalOnlyOnGlobalAxes) {
  expect_refused(matmul(), gpu, "", "LOCAL:2:4", "local is for globals: axis 2 is REDUCE");
}

TEST(Legality, GroupOnlyWithSharedMemory) {
  expect_refused(matmul(), cpu, "", "GROUP:0:4", "target CPU does not support local or shared mem");
}

TEST(Legality, GroupOnlyOnReduceAxes) {
  expect_refused(matmul(), gpu, "", "GROUPTOP:1:4",
                 "GROUPTOP axis 1 is not a reduce axis: GROUPTOP counts the REDUCE axes, here 1 of them");
}

TEST(Legality, GroupNotWithParallelReduces) {
  // A dataset kernel whose reduces fold axes (3,), (4,) and (4,): two share axis 4.
  expect_refused(test::named("parallel_reduce"), gpu, "", "GROUP:0:2", "can't group with parallel reduces");
}

TEST(Legality, GroupWithinTheSharedMemoryLimit) {
  // 256 grouped x 4 bytes x 4 upcast x 32 local = 131072 bytes
  expect_refused(test::named("sum_4096x4096"), gpu, "UPCAST:0:4,LOCAL:0:32", "GROUPTOP:0:256",
                 "exceeds maximum shared memory size: needs 131072 bytes, max 32768");
}

TEST(Legality, PaddingAGroupedKernelStaysWithinTheSharedMemoryLimit) {
  // 64 grouped x 4 bytes x 4 upcast x 32 local is the 32768-byte limit; padding the local axis
  // to 48 needs 49152.
  expect_refused(test::named("sum_4096x4096"), gpu, "UPCAST:0:4,LOCAL:0:32,GROUPTOP:0:64", "PADTO:1:48",
                 "exceeds maximum shared memory size: needs 49152 bytes, max 32768");
}

TEST(Legality, SplittingAGroupedKernelCountsTheGroupInSharedMemory) {
  // 16 grouped x 4 bytes x 64 local (all of M) = 4096 bytes; upcasting N by 16 needs 65536
  // bytes, over CUDA's 49152. tinygrad's estimate leaves the group out (16 x 4 x 64 = 4096
  // bytes) and accepts it.
  expect_refused(matmul(), cuda, "LOCAL:0:16,GROUP:0:16,LOCAL:0:4", "UPCAST:0:16",
                 "exceeds maximum shared memory size: needs 65536 bytes, max 49152");
}

TEST(Legality, NolocalsOnlyBeforeAnyLocal) {
  expect_refused(matmul(), gpu, "LOCAL:0:4", "NOLOCALS", "can't have no locals with locals");
}

TEST(Legality, NolocalsOnlyOnTargetsWithLocalsAndOnlyOnce) {
  const std::string msg =
      "NOLOCALS is meaningless if target does not support local or already not using locals";
  expect_refused(matmul(), cpu, "", "NOLOCALS", msg);
  expect_refused(matmul(), gpu, "NOLOCALS", "NOLOCALS", msg);
}

TEST(Legality, NoLocalsAfterNolocals) {
  expect_refused(matmul(), gpu, "NOLOCALS", "LOCAL:0:4", "not using locals: LOCAL after NOLOCALS");
}

TEST(Legality, SwapOnlyOfTwoGlobalAxes) {
  expect_refused(matmul(), gpu, "", "SWAP:0:2", "swap is for globals: axis 0 is GLOBAL, axis 2 is REDUCE");
}

TEST(Legality, SwapOnlyForAxisBelowArg) {
  expect_refused(matmul(), gpu, "", "SWAP:1:0", "swap is only for axis < amt, getting amt=0, axis=1");
}

TEST(Legality, SwapPermutesEveryTracker) {
  Kernel k(test::named("matmul_33x17x29"), gpu);
  k.apply_opt(parse_opt("SWAP:0:1"));
  EXPECT_EQ(to_string(k.full_shape()), "(29, 33, 17)");
}

TEST(Legality, PadtoNotOnSymbolicShapes) {
  expect_refused(symbolic_copy(), cpu, "", "PADTO:0:32", "PADTO does not work with symbolic shape");
}

TEST(Legality, PadtoNotOnUpcastAxes) {
  expect_refused(matmul(), cpu, "UPCAST:0:4", "PADTO:2:32", "cannot pad upcasted: axis 2 is UPCAST");
}

TEST(Legality, PadtoOnReduceAxesOnlyForSums) {
  expect_refused(test::named("max_256x7"), cpu, "", "PADTO:1:8",
                 "cannot pad a reduce axis of a MAX reduce: only a sum can be padded");
}

TEST(Legality, PadtoOnReduceAxesOnlyWhereParentsKeepZero) {
  expect_refused(test::named("exp_sum_1000"), cpu, "", "PADTO:0:32",
                 "cannot pad the sum: its source uses EXP2, and f(0) != 0 for it");
}

TEST(Legality, PadtoNeverMoreThanQuadruples) {
  expect_refused(test::named("matmul_33x17x29"), cpu, "", "PADTO:1:128",
                 "pad adds more than quadruple the work: axis 1 has size 29, which is not > amt//4=32");
}

TEST(Legality, PadtoMustPadSomething) {
  expect_refused(matmul(), cpu, "", "PADTO:0:32", "nothing was padded: axis 0 is already a multiple of 32");
}

TEST(Legality, TensorCoresOnlyAsTheFirstOpt) {
  expect_refused(matmul(), cuda, "UPCAST:0:4", "TC:0:(-1,0,1)", "tensor core opts must be first");
}

TEST(Legality, TensorCoresOnlyWhereTheTargetHasThem) {
  expect_refused(matmul(), gpu, "", "TC:0:(-1,0,1)", "target GPU has no tensor cores");
}

TEST(Legality, TensorCoresArgsInRange) {
  expect_refused(matmul(), cuda, "", "TC:0:(5,0,1)",
                 "tensor core opts must have a valid tc_select: 5 is not in -1..4");
  expect_refused(matmul(), cuda, "", "TC:0:(-1,3,1)",
                 "tensor core opts must have a valid tc_opt (0..2), got 3");
  expect_refused(matmul(), cuda, "", "TC:0:(-1,0,0)", "use_tensor_cores value is not valid (1 or 2), got 0");
}

TEST(Legality, TensorCoreDtypesMustMatchTheReduce) {  // a float32 matmul; CUDA's take half/bfloat16
  expect_refused(matmul(), cuda, "", "TC:0:(-1,0,1)",
                 "no tensor core available: the reduce is not a sum of a product of two loads in a tensor "
                 "core's dtypes whose dims divide the axes, or TC axis 0 is not one of its (N, M, K) choices");
}

TEST(Legality, ThreadOnlyOnTargetsWithAThreadPool) {
  expect_refused(matmul(), gpu, "", "THREAD:0:4", "target GPU has no thread pool: THREAD is for the CPU");
}

TEST(Legality, ThreadOnlyOnLoopAxes) {
  expect_refused(matmul(), cpu, "", "THREAD:2:4", "THREAD splits a loop (global) axis: axis 2 is REDUCE");
}

TEST(Legality, ThreadAtMostTheCores) {
  expect_refused(matmul(), cpu, "", "THREAD:1:16", "THREAD amount 16 exceeds the 8 cores of the target");
}

TEST(Legality, ThreadOnlyOnce) {
  expect_refused(matmul(), cpu, "THREAD:1:4", "THREAD:1:2",
                 "THREAD is already applied: a kernel has one THREAD axis");
}

TEST(Legality, ThreadIsTheOutermostSplit) {
  Kernel k(matmul(), cpu);
  k.apply_opts(parse_opts("UPCAST:1:4,THREAD:1:8"));
  // the top 8 of axis 1 becomes axis 0; each slice is a contiguous block of columns
  EXPECT_EQ(to_string(k.full_shape()), "(8, 64, 2, 4, 64)");
  EXPECT_EQ(test::letters(k), "tLLuR");
}

TEST(Legality, NegativeAmountsAndMissingAxesAreRefused) {
  expect_refused(matmul(), cpu, "", "UPCAST:0:-4", "UPCAST amount -4 is negative");
  expect_refused(matmul(), cpu, "", "UPCAST:None:4", "UPCAST needs an axis");
  expect_refused(matmul(), cpu, "", "UPCAST:0:None", "UPCAST needs an int amount");
}

}  // namespace
}  // namespace tunebed
