// Launch dims of GPU kernels (gpudims.cpp): GLOBAL axes are work-groups and LOCAL axes
// work-items, more axes than the three dimensions (or larger than a dimension allows) merge, a
// launch that cannot fit is refused with the dims named, NOLOCALS uses global ids; each kernel
// also runs on the OpenCL device and matches the plain kernel (without a device, the test skips
// there and says why).
#include <gtest/gtest.h>

#include "core/opt/kernel.hpp"
#include "core/opt/kernel_info.hpp"
#include "tests/codegen/kernels.hpp"
#include "tests/codegen/workload_kernels.hpp"
#include "tests/runtime/runtime_helpers.hpp"

namespace tunebed {
namespace {

using testing::elementwise_add;
using testing::split_axis;

std::array<int64_t, 3> ints(const std::array<sint, 3>& s) {
  return {s[0].to_int(), s[1].to_int(), s[2].to_int()};
}

// The kernel runs on OpenCL and matches `plain`. Without an OpenCL device the test skips here,
// saying why, after the checks of the rendered launch above it have run.
#define EXPECT_RUNS_ON_OPENCL(optimized, plain)                                                        \
  do {                                                                                                 \
    const testing::Opened cl = testing::try_open("opencl");                                            \
    if (!cl.device) GTEST_SKIP() << "no OpenCL device (PoCL: scripts/setup): " << cl.why_not;          \
    EXPECT_EQ(testing::check_on_device(optimized, plain, cl.device, renderer_for(*cl.device), 7), ""); \
  } while (0)

TEST(GpuLaunch, GlobalAxesAreWorkGroupsAndLocalAxesWorkItems) {
  const UOp plain = elementwise_add(64), ast = split_axis(plain, 0, 8, AxisType::LOCAL);
  const ProgramSpec p = get_program(ast, Renderer::opencl());
  EXPECT_EQ(ints(p.global_size), (std::array<int64_t, 3>{8, 1, 1}));
  EXPECT_EQ(ints(p.local_size), (std::array<int64_t, 3>{8, 1, 1}));
  EXPECT_NE(p.source.find("get_group_id(0)"), std::string::npos) << p.source;
  EXPECT_NE(p.source.find("get_local_id(0)"), std::string::npos) << p.source;
  const std::string cuda = get_program(ast, Renderer::cuda()).source;
  EXPECT_NE(cuda.find("blockIdx.x"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("__launch_bounds__(8)"), std::string::npos) << cuda;
  EXPECT_RUNS_ON_OPENCL(ast, plain);
}

// (120) split into GLOBAL axes (5, 2, 3, 4); innermost first, (4, 3, 2, 5) merges to (12, 2, 5).
TEST(GpuLaunch, MoreGlobalAxesThanDimensionsMergeInnermostFirst) {
  const UOp plain = elementwise_add(120);
  const UOp ast = split_axis(split_axis(split_axis(plain, 0, 2, AxisType::GLOBAL), 0, 3, AxisType::GLOBAL), 0,
                             4, AxisType::GLOBAL);
  const ProgramSpec p = get_program(ast, Renderer::opencl());
  EXPECT_EQ(ints(p.global_size), (std::array<int64_t, 3>{12, 2, 5}));
  EXPECT_EQ(ints(p.local_size), (std::array<int64_t, 3>{1, 1, 1}));
  EXPECT_RUNS_ON_OPENCL(ast, plain);
}

TEST(GpuLaunch, AxesOverTheLocalLimitMergeOrAreRefused) {
  const UOp ast = split_axis(split_axis(elementwise_add(256), 0, 4, AxisType::LOCAL), 0, 8, AxisType::LOCAL);
  Renderer r = Renderer::opencl();
  r.local_max = std::array<int64_t, 3>{64, 4, 4};  // (4, 8): 8 > 4 in dim 1, merged into dim 0
  EXPECT_EQ(ints(get_program(ast, r).local_size), (std::array<int64_t, 3>{32, 1, 1}));
  r.local_max = std::array<int64_t, 3>{16, 4, 4};  // 32 > 16: no merge fits
  try {
    get_program(ast, r);
    FAIL() << "a launch over the local limits was rendered";
  } catch (const CodegenError& e) {
    EXPECT_NE(std::string(e.what()).find("launch dims (4, 8) (lidx) do not fit"), std::string::npos)
        << e.what();
  }
}

TEST(GpuLaunch, NoLocalsUsesGlobalIdsAndGroupsOfOne) {
  const UOp plain = elementwise_add(64);
  KernelInfo info = no_opts_info(plain);
  info.dont_use_locals = true;
  const UOp ast = with_kernel_info(plain, info);
  const ProgramSpec p = get_program(ast, Renderer::opencl());
  EXPECT_NE(p.source.find("get_global_id(0)"), std::string::npos) << p.source;
  EXPECT_EQ(ints(p.global_size), (std::array<int64_t, 3>{64, 1, 1}));
  EXPECT_EQ(ints(p.local_size), (std::array<int64_t, 3>{1, 1, 1}));
  EXPECT_RUNS_ON_OPENCL(ast, plain);
}

TEST(GpuLaunch, TheCpuRendererRefusesLocalAxes) {
  const UOp ast = split_axis(elementwise_add(64), 0, 8, AxisType::LOCAL);
  EXPECT_THROW(get_program(ast, Renderer::cpu(1)), CodegenError);
}

// out[i] = max_j sum_k a[i, j, k]: two reduces in one kernel, the inner one split across the
// workgroup by a GROUP. Its result goes through local memory again for the outer reduce (core/opt's
// group_reduce for a reduce that is not the last), into a buffer of its own (temp0_out), since
// other work-items may still be reading the partials in temp0; the first lanes store it and all
// wait at a barrier before reading it. Only the form is checked: core/opt's AST for this kernel
// leaves the outer reduce's axis out of the local buffer's view (size 1), so it does not compute
// max_j sum_k (see the issue 11 report); codegen renders what it is given.
UOp max_of_sums(int64_t n) {
  const UOp a = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr_to(4 * n * n), {}, Arg(1));
  const UOp out = UOp::make(Ops::DEFINE_GLOBAL, dtypes::float32.ptr_to(4), {}, Arg(0));
  auto view = [](const UOp& buf, const ShapeTracker& st) {
    return UOp::make(Ops::VIEW, buf.dtype(), {buf}, st.to_arg());
  };
  auto reduce = [](Ops op, int64_t axis, const UOp& x) {
    return UOp::make(Ops::REDUCE_AXIS, dtypes::float32, {x},
                     Arg::tuple({Arg(op), Arg::ints(std::vector<int64_t>{axis})}));
  };
  const UOp x = UOp::make(Ops::LOAD, dtypes::float32, {view(a, ShapeTracker::from_shape({4, n, n}))});
  const UOp store = UOp::make(
      Ops::STORE, dtypes::void_,
      {view(out, ShapeTracker::from_shape({4, 1, 1})), reduce(Ops::MAX, 1, reduce(Ops::ADD, 2, x))});
  return UOp::make(Ops::SINK, dtypes::void_, {store});
}

// A GROUP on the inner reduce of max_j sum_k would lose the outer reduce's loop in the local
// buffer's view (a wrong answer on PoCL), so it is refused until core/opt keeps those axes.
TEST(GpuLaunch, GroupOnANestedReduceIsRefused) {
  Kernel k(max_of_sums(16), Renderer::opencl());
  ASSERT_EQ(k.reduceops().size(), 2u);
  try {
    k.apply_opt(Opt{OptOps::GROUP, 1, 4});
    FAIL() << "GROUP on a nested reduce was accepted";
  } catch (const KernelOptError& e) {
    EXPECT_NE(std::string(e.what()).find("nested reduces"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tunebed
