// Matmul throughput on the GPU test device, for scripts/gpu-check: C = A @ B at N^3 (4096, or
// TUNEBED_MATMUL_N) in float32 and float16, with the optimizer's default opts without tensor
// cores and with them (get_optimized_ast: TC where one fits), timed by the device's clock (the
// median of 10 runs after 2 warm-ups) on inputs drawn by fill_random (core/engine/check.hpp).
// Before a kernel is timed its values are checked at 256^3 (TUNEBED_MATMUL_CHECK_N) with the
// same opts (the optimizer's own for that size where they do not fit), against the direct
// evaluation of the unoptimized kernel, with check_output: a wrong kernel fails the test and is
// not timed. Each pair of lines reads
//   check  256^3 float16 TC    ok      TC:0:(-1,0,1) UPCAST:0:4 ...
//   matmul 4096^3 float16 TC     0.873 ms  157434.1 GFLOP/s  TC:0:(-1,0,1) UPCAST:0:4 ...
// or says "TC unavailable" and why. A measurement, not a test: DISABLED_, so ctest and plain runs
// skip it; gpu-check passes --gtest_also_run_disabled_tests. The device is TUNEBED_GPU_TEST_DEVICE
// (default opencl); without it the test skips and says why.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "core/engine/check.hpp"
#include "core/opt/heuristic.hpp"
#include "core/opt/kernel.hpp"
#include "core/schedule/schedule.hpp"
#include "core/tensor/workloads.hpp"
#include "tests/codegen/workload_kernels.hpp"
#include "tests/runtime/runtime_helpers.hpp"

namespace tunebed {
namespace {

UOp matmul_kernel(int64_t n, DType dtype) {
  const std::string size = std::to_string(n);
  const Workload w =
      make_workload("matmul:M=" + size + ",N=" + size + ",K=" + size + ",dtype=" + to_string(dtype));
  const Schedule s = create_schedule({w.output.uop()});
  for (const ScheduleItem& item : s.items)
    if (!item.is_copy()) return item.ast.with_arg(Arg(None{}));
  throw std::logic_error("matmul has no kernel");
}

// AST under the opts of `optimized` (the same kernel at another size), or under the optimizer's
// own opts where those do not fit.
UOp with_opts_of(const UOp& ast, const UOp& optimized, const Renderer& renderer) {
  try {
    Kernel k(ast, renderer);
    k.apply_opts(kernel_info(optimized).applied_opts);
    return k.get_optimized_ast();
  } catch (const KernelOptError&) {
    return get_optimized_ast(ast, renderer);
  }
}

// The median seconds of the compiled kernel on inputs drawn by fill_random.
double time_kernel(const CompiledProgram& exe) {
  std::vector<HostBuffer> bufs = exe.make_buffers();
  std::vector<HostBuffer*> args;
  uint64_t seed = 1;
  for (HostBuffer& b : bufs) {
    fill_random(b, seed++);
    args.push_back(&b);
  }
  return exe.time(args).median;
}

int64_t size_from_env(const char* name, int64_t fallback) {
  const char* text = std::getenv(name);
  return text ? std::atoll(text) : fallback;
}

TEST(GpuMatmul, DISABLED_Throughput) {
  const char* name = std::getenv("TUNEBED_GPU_TEST_DEVICE");
  const testing::Opened opened = testing::try_open(name ? name : "opencl");
  if (!opened.device) GTEST_SKIP() << "no " << (name ? name : "opencl") << " device: " << opened.why_not;
  const std::shared_ptr<Device>& device = opened.device;
  const int64_t n = size_from_env("TUNEBED_MATMUL_N", 4096),
                check_n = size_from_env("TUNEBED_MATMUL_CHECK_N", 256);
  ASSERT_GT(n, 0) << "TUNEBED_MATMUL_N must be a positive integer";
  ASSERT_GT(check_n, 0) << "TUNEBED_MATMUL_CHECK_N must be a positive integer";
  const Renderer with_tc = renderer_for(*device);
  Renderer without_tc = with_tc;
  without_tc.tensor_cores.clear();
  std::printf("device %s: %s, %d compute units\n", device->name().c_str(), device->fingerprint().arch.c_str(),
              device->capabilities().compute_units);
  for (DType dtype : {dtypes::float32, dtypes::float16}) {
    const UOp ast = matmul_kernel(n, dtype), small_ast = matmul_kernel(check_n, dtype);
    for (const bool tc : {false, true}) {
      const Renderer& r = tc ? with_tc : without_tc;
      char head[64], check_head[64];
      std::snprintf(head, sizeof head, "matmul %lld^3 %-8s %-5s", static_cast<long long>(n),
                    to_string(dtype).c_str(), tc ? "TC" : "no-TC");
      std::snprintf(check_head, sizeof check_head, "check  %lld^3 %-8s %-5s", static_cast<long long>(check_n),
                    to_string(dtype).c_str(), tc ? "TC" : "no-TC");
      const UOp optimized = get_optimized_ast(ast, r);
      const std::string opts = testing::opts_text(optimized);
      if (tc && opts.find("TC") == std::string::npos) {
        std::printf("%s TC unavailable (no tensor core of %s fits; opts %s)\n", head, r.device.c_str(),
                    opts.c_str());
        continue;
      }
      std::optional<CompiledProgram> exe;
      try {
        exe = compile_program(optimized, device, r);
      } catch (const std::exception& e) {
        const std::string what = e.what();
        std::printf("%s %s: %s\n", head, tc ? "TC unavailable" : "failed",
                    what.substr(0, what.find('\n')).c_str());
        // float16 needs cl_khr_fp16 on OpenCL (PoCL has none); CUDA has it always.
        if (!tc && (dtype == dtypes::float32 || device->name().starts_with("cuda"))) ADD_FAILURE() << what;
        std::fflush(stdout);
        continue;
      }
      const UOp small = with_opts_of(small_ast, optimized, r);
      const std::string wrong = testing::check_on_device(small, testing::no_opts(small_ast), device, r, 7);
      std::printf("%s %-7s %s\n", check_head, wrong.empty() ? "ok" : "FAILED",
                  testing::opts_text(small).c_str());
      if (!wrong.empty()) {
        ADD_FAILURE() << check_head << " with " << testing::opts_text(small) << ": " << wrong;
        std::printf("%s not timed: its values are wrong at %lld^3\n", head, static_cast<long long>(check_n));
        std::fflush(stdout);
        continue;
      }
      const double s = time_kernel(*exe);
      std::printf("%s %9.3f ms %10.1f GFLOP/s  %s\n", head, s * 1e3, 2.0 * n * n * n / s * 1e-9,
                  opts.c_str());
      std::fflush(stdout);
    }
  }
}

}  // namespace
}  // namespace tunebed
