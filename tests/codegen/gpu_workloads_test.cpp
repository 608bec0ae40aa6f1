// The whole workload library on a GPU device: every kernel of every workload, rendered for the
// device, compiled by its driver, run on seeded random inputs and compared with the direct
// evaluation of the kernel unoptimized. With no opts (every GLOBAL axis a work-group id), with
// tinygrad's hand-coded opts for the device (LOCAL, GROUP, UPCAST ...), and with random legal opt
// sequences that start with a LOCAL, GROUP or GROUPTOP.
//
// The device is OpenCL (PoCL in tests and CI) unless TUNEBED_GPU_TEST_DEVICE names another
// (scripts/gpu-check runs these tests with `cuda`); without it the tests skip and say why.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstdlib>

#include "core/opt/actions.hpp"
#include "core/opt/heuristic.hpp"
#include "core/opt/kernel.hpp"
#include "tests/codegen/bounded_property.hpp"
#include "tests/codegen/workload_kernels.hpp"

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

}  // namespace
}  // namespace tunebed
