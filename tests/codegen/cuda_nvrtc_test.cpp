// Every workload's kernels render to CUDA C that NVRTC compiles without error, for sm_80 (the
// Renderer::cuda() record): with no opts, with the optimizer's default opts for CUDA (tensor
// cores where one fits: the float16 matmuls), and with random legal opt sequences (TC among the
// actions), in float32 and float16. Compile-only, so no GPU is needed; where libnvrtc cannot be
// loaded the tests skip and say why.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "core/opt/actions.hpp"
#include "core/opt/heuristic.hpp"
#include "core/opt/kernel.hpp"
#include "core/runtime/cuda_device.hpp"
#include "tests/codegen/bounded_property.hpp"
#include "tests/codegen/workload_kernels.hpp"

namespace tunebed {
namespace {

using testing::no_opts;
using testing::opts_text;

const std::vector<testing::LibraryKernel>& kernels() {
  static const std::vector<testing::LibraryKernel> k = [] {
    std::vector<testing::LibraryKernel> all = testing::library_kernels(dtypes::float32);
    for (auto& k : testing::library_kernels(dtypes::float16)) all.push_back(std::move(k));
    return all;
  }();
  return k;
}

// "" when NVRTC compiles the kernel's CUDA C, else the error (with the source).
std::string nvrtc_failure(const UOp& optimized) {
  try {
    const ProgramSpec p = get_program(optimized, Renderer::cuda());
    nvrtc_compile(p.source, p.name, "sm_80");
    return "";
  } catch (const CompileError& e) {
    return std::string(e.what()) + "\n" + e.numbered_source();
  } catch (const CodegenError& e) {
    return std::string("refused: ") + e.what();
  }
}

#define REQUIRE_NVRTC() \
  if (auto why = nvrtc_unavailable_reason()) GTEST_SKIP() << "NVRTC is not available: " << *why

TEST(CudaNvrtc, EveryLibraryKernelCompilesWithNoOptsAndHandCodedOpts) {
  REQUIRE_NVRTC();
  ASSERT_GE(kernels().size(), 30u);
  int with_locals = 0, with_tc = 0;
  for (const auto& k : kernels()) {
    EXPECT_EQ(nvrtc_failure(no_opts(k.ast)), "") << k.label << " with no opts";
    const UOp optimized = get_optimized_ast(k.ast, Renderer::cuda());
    with_locals += opts_text(optimized).find("LOCAL") != std::string::npos;
    with_tc += opts_text(optimized).find("TC") != std::string::npos;
    EXPECT_EQ(nvrtc_failure(optimized), "") << k.label << " with " << opts_text(optimized);
  }
  EXPECT_GT(with_locals, 5);
  EXPECT_GT(with_tc, 0);
}

// Found by RandomLegalOptsCompile (seed 2575516894984): eight m16n8k16 WMMAs upcast over a whole
// axis accumulated in one float32.vec(32), which CUDA C has no type for; now eight float4s.
TEST(CudaNvrtc, AWholeAxisUpcastOverATensorCoreCompiles) {
  REQUIRE_NVRTC();
  const auto conv = std::find_if(kernels().begin(), kernels().end(), [](const testing::LibraryKernel& k) {
    return k.label.starts_with("conv2d:") && k.label.find("dtype=float16#0") != std::string::npos;
  });
  ASSERT_NE(conv, kernels().end());
  Kernel kernel(conv->ast, Renderer::cuda());
  kernel.apply_opts(parse_opts("TC:4:(-1,2,1),UPCAST:0:0"));
  EXPECT_EQ(nvrtc_failure(kernel.get_optimized_ast()), "");
}

TEST(CudaNvrtc, RandomLegalOptsCompile) {
  REQUIRE_NVRTC();
  testing::check_bounded_property(30, [] {
    const auto& k = kernels()[*rc::gen::inRange<size_t>(0, kernels().size())];
    Kernel kernel(k.ast, Renderer::cuda());
    for (const Opt& o : random_opts(kernel, *rc::gen::arbitrary<uint64_t>(), 6)) kernel.apply_opt(o);
    const UOp optimized = kernel.get_optimized_ast();
    const std::string failure = nvrtc_failure(optimized);
    if (!failure.empty()) RC_FAIL(k.label + " with " + opts_text(optimized) + "\n" + failure);
  });
}

}  // namespace
}  // namespace tunebed
