// The whole workload library on a GPU device: every kernel of every workload, rendered for the
// device, compiled by its driver, run on seeded random inputs and compared with the direct
// evaluation of the kernel unoptimized. With no opts (every GLOBAL axis a work-group id), with
// tinygrad's hand-coded opts for the device (LOCAL, GROUP, UPCAST ...), and with random legal opt
// sequences that start with a LOCAL, GROUP or GROUPTOP.
//
// The device is OpenCL (PoCL in tests and CI) unless TUNEBED_GPU_TEST_DEVICE names another
// (scripts/gpu-check runs these tests with `cuda`); without it the tests skip and say why.
//
// Tensor cores on CUDA: the library's float16 kernels, and its float workloads built in bfloat16,
// with the TC opt the optimizer applies (Kernel::apply_tensor_cores), on cuda:0, compared with
// core/engine's check_output. Which kernels must take a TC is checked first, with the device's
// renderer or, without a GPU, Renderer::cuda() (sm_80): a kernel that should and does not fails
// the test on any machine; then the TC kernels compile with NVRTC (where it is installed); only
// their values need the GPU, and without one the test skips there and says why.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstdlib>

#include "core/opt/actions.hpp"
#include "core/opt/heuristic.hpp"
#include "core/opt/kernel.hpp"
#include "core/runtime/cuda_device.hpp"
#include "tests/codegen/bounded_property.hpp"
#include "tests/codegen/workload_kernels.hpp"
#include "tests/runtime/runtime_helpers.hpp"

namespace tunebed {
namespace {

using testing::check_on_device;
using testing::library_kernels;
using testing::no_opts;
using testing::opts_text;

std::string device_name() {
  const char* name = std::getenv("TUNEBED_GPU_TEST_DEVICE");
  return name ? name : "opencl";
}

// The device, or null with the reason (the tests skip) where there is none.
std::shared_ptr<Device> gpu_device(std::string& why) {
  try {
    return open_device(device_name());
  } catch (const DeviceError& e) {
    why = e.what();
    return nullptr;
  }
}

const std::vector<testing::LibraryKernel>& kernels() {
  static const std::vector<testing::LibraryKernel> k = library_kernels();
  return k;
}

#define REQUIRE_GPU(device)                                                                        \
  std::string why;                                                                                 \
  const std::shared_ptr<Device> device = gpu_device(why);                                          \
  if (!device) GTEST_SKIP() << "no " << device_name() << " device (PoCL: scripts/setup): " << why; \
  const Renderer renderer = renderer_for(*device)

TEST(GpuWorkloads, EveryLibraryKernelMatchesWithNoOpts) {
  REQUIRE_GPU(device);
  ASSERT_GE(kernels().size(), 15u);
  uint32_t seed = 0;
  for (const auto& k : kernels()) {
    const UOp plain = no_opts(k.ast);
    EXPECT_EQ(check_on_device(plain, plain, device, renderer, seed++), "") << k.label;
  }
}

TEST(GpuWorkloads, EveryLibraryKernelMatchesWithHandCodedOpts) {
  REQUIRE_GPU(device);
  uint32_t seed = 0;
  int with_locals = 0, with_groups = 0;
  for (const auto& k : kernels()) {
    const UOp optimized = get_optimized_ast(k.ast, renderer);
    const std::string opts = opts_text(optimized);
    with_locals += opts.find("LOCAL") != std::string::npos;
    with_groups += opts.find("GROUP") != std::string::npos;
    EXPECT_EQ(check_on_device(optimized, no_opts(k.ast), device, renderer, seed++), "")
        << k.label << " with " << opts;
  }
  // The heuristics use the workgroup: otherwise this test would not test locals.
  EXPECT_GT(with_locals, 5);
  EXPECT_GT(with_groups, 0);
}

// A random kernel of the library under a random legal opt sequence whose first opt is a LOCAL,
// GROUP or GROUPTOP (when the kernel has one), then up to 5 more random legal opts. 30 cases,
// each compiling one kernel (about 0.4 s of PoCL).
TEST(GpuWorkloads, RandomLegalOptsWithLocalsAndGroupsMatch) {
  REQUIRE_GPU(device);
  testing::check_bounded_property(30, [&] {
    const auto& k = kernels()[*rc::gen::inRange<size_t>(0, kernels().size())];
    const OptOps first = *rc::gen::element(OptOps::LOCAL, OptOps::GROUP, OptOps::GROUPTOP);
    Kernel kernel(k.ast, renderer);
    std::vector<Kernel> firsts;
    for (auto& [opt, next] : kernel_actions(kernel))
      if (opt.op == first) firsts.push_back(next);
    RC_PRE(!firsts.empty());
    // random_opts gives the whole sequence, the first opt included: it re-applies to the plain kernel.
    const std::vector<Opt> opts =
        random_opts(firsts[*rc::gen::inRange<size_t>(0, firsts.size())], *rc::gen::arbitrary<uint64_t>(), 6);
    Kernel optimized_kernel(k.ast, renderer);
    for (const Opt& o : opts) optimized_kernel.apply_opt(o);
    const UOp optimized = optimized_kernel.get_optimized_ast();
    RC_TAG(std::string(optops_name(first)));
    const std::string failure =
        check_on_device(optimized, no_opts(k.ast), device, renderer, *rc::gen::arbitrary<uint32_t>());
    if (!failure.empty()) RC_FAIL(k.label + " with " + opts_text(optimized) + "\n" + failure);
  });
}

// The kernels a tensor core must take at the small sizes of workload_kernels.cpp (at the first
// TC opt level, 0 to 2, and axis choice that fits): every matmul, attention's two (q @ k^T and
// the weights @ v) and, for float16 only, conv2d's sum of products (36 long: only the 8x16x8
// half core fits it, padded). mlp's layers take none yet.
bool must_take_tc(const testing::LibraryKernel& k, DType dtype) {
  for (const char* prefix : {"matmul:", "batched_matmul:"})
    if (k.label.starts_with(prefix)) return true;
  if (k.label.starts_with("attention:") && (k.label.ends_with("#0") || k.label.ends_with("#4"))) return true;
  return dtype == dtypes::float16 && k.label.starts_with("conv2d:");
}

void tensor_cores_match_on_cuda(DType dtype) {
  const testing::Opened cuda = testing::try_open("cuda");
  const Renderer renderer = cuda.device ? renderer_for(*cuda.device) : Renderer::cuda();
  const std::string arch = cuda.device ? cuda.device->fingerprint().arch : "sm_80";
  bool has_tc = false;
  for (const TensorCore& tc : renderer.tensor_cores) has_tc |= tc.dtype_in == dtype;
  if (!has_tc) GTEST_SKIP() << "CUDA " << arch << " has no " << to_string(dtype) << " tensor core";
  const std::vector<testing::LibraryKernel> kernels =
      dtype == dtypes::float16 ? testing::library_kernels(dtype) : testing::library_float_kernels_in(dtype);
  std::vector<std::pair<const testing::LibraryKernel*, UOp>> with_tc;
  for (const auto& k : kernels) {
    Kernel kernel(k.ast, renderer);
    bool applied = false;
    for (int level = 0; level <= 2 && !applied; level++)
      for (int axis = 0; axis < 8 && !applied; axis++)
        applied = kernel.apply_tensor_cores(1, std::nullopt, axis, -1, level);
    if (applied)
      with_tc.emplace_back(&k, kernel.get_optimized_ast());
    else if (must_take_tc(k, dtype))
      ADD_FAILURE() << k.label << ": no tensor core of " << arch << " applies";
  }
  ASSERT_FALSE(with_tc.empty()) << "no " << to_string(dtype) << " kernel took a tensor core";
  if (!cuda.device) {
    if (auto why = nvrtc_unavailable_reason())
      GTEST_SKIP() << "no CUDA device (" << cuda.why_not << ") and no NVRTC: " << *why;
    for (const auto& [k, optimized] : with_tc) {
      try {
        const ProgramSpec p = get_program(optimized, renderer);
        nvrtc_compile(p.source, p.name, "sm_80");
      } catch (const std::exception& e) {
        ADD_FAILURE() << k->label << " with " << opts_text(optimized) << ": " << e.what();
      }
    }
    GTEST_SKIP()
        << "no CUDA device: " << cuda.why_not << " (" << with_tc.size() << " " << to_string(dtype)
        << " kernels took a tensor core and compiled with NVRTC; their values need a GPU: scripts/gpu-check)";
  }
  uint32_t seed = 0;
  for (const auto& [k, optimized] : with_tc)
    EXPECT_EQ(check_on_device(optimized, no_opts(k->ast), cuda.device, renderer, seed++), "")
        << k->label << " with " << opts_text(optimized);
}

TEST(GpuWorkloads, Float16KernelsWithTensorCoresMatchOnCuda) { tensor_cores_match_on_cuda(dtypes::float16); }

TEST(GpuWorkloads, BFloat16KernelsWithTensorCoresMatchOnCuda) {
  tensor_cores_match_on_cuda(dtypes::bfloat16);
}

}  // namespace
}  // namespace tunebed
