// Matmul throughput on the GPU test device, for scripts/gpu-check: C = A @ B at N^3 (4096, or
// TUNEBED_MATMUL_N) in float32 and float16, with the optimizer's default opts without tensor
// cores and with them (get_optimized_ast: TC where one fits), timed by the device's clock (the
// median of 10 runs after 2 warm-ups). Each line reads
//   matmul 4096^3 float16 TC     0.873 ms  157434.1 GFLOP/s  TC:0:(-1,0,1) UPCAST:0:4 ...
// or says "TC unavailable" and why. A measurement, not a test: DISABLED_, so ctest and plain runs
// skip it; gpu-check passes --gtest_also_run_disabled_tests. The device is TUNEBED_GPU_TEST_DEVICE
// (default opencl).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "core/opt/heuristic.hpp"
#include "core/schedule/schedule.hpp"
#include "core/tensor/workloads.hpp"
#include "tests/codegen/workload_kernels.hpp"

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

// The median seconds of the optimized kernel on zero-filled buffers.
double time_kernel(const UOp& optimized, const std::shared_ptr<Device>& device, const Renderer& renderer) {
  const Executable exe(optimized, device, renderer);
  std::vector<std::unique_ptr<Buffer>> bufs;
  std::vector<Buffer*> args;
  for (const DType& d : exe.spec().globals) {
    bufs.push_back(device->allocate(d.base(), d.size));
    bufs.back()->copyin(HostBuffer(d.base(), d.size));
    args.push_back(bufs.back().get());
  }
  return exe.program().time(args, {}, exe.spec().launch_dims()).median;
}

TEST(GpuMatmul, DISABLED_Throughput) {
  const char* name = std::getenv("TUNEBED_GPU_TEST_DEVICE");
  const std::shared_ptr<Device> device = open_device(name ? name : "opencl");
  const char* n_text = std::getenv("TUNEBED_MATMUL_N");
  const int64_t n = n_text ? std::atoll(n_text) : 4096;
  ASSERT_GT(n, 0) << "TUNEBED_MATMUL_N must be a positive integer";
  const Renderer with_tc = renderer_for(*device);
  Renderer without_tc = with_tc;
  without_tc.tensor_cores.clear();
  std::printf("device %s: %s, %d compute units\n", device->name().c_str(), device->fingerprint().arch.c_str(),
              device->capabilities().compute_units);
  for (DType dtype : {dtypes::float32, dtypes::float16}) {
    const UOp ast = matmul_kernel(n, dtype);
    for (const bool tc : {false, true}) {
      const Renderer& r = tc ? with_tc : without_tc;
      char head[64];
      std::snprintf(head, sizeof head, "matmul %lld^3 %-7s %-5s", static_cast<long long>(n),
                    to_string(dtype).c_str(), tc ? "TC" : "no-TC");
      const UOp optimized = get_optimized_ast(ast, r);
      const std::string opts = testing::opts_text(optimized);
      if (tc && opts.find("TC") == std::string::npos) {
        std::printf("%s TC unavailable (no tensor core of %s fits; opts %s)\n", head, r.device.c_str(),
                    opts.c_str());
        continue;
      }
      try {
        const double s = time_kernel(optimized, device, r);
        std::printf("%s %9.3f ms %10.1f GFLOP/s  %s\n", head, s * 1e3, 2.0 * n * n * n / s * 1e-9,
                    opts.c_str());
      } catch (const std::exception& e) {
        const std::string what = e.what();
        std::printf("%s %s: %s\n", head, tc ? "TC unavailable" : "failed",
                    what.substr(0, what.find('\n')).c_str());
        if (!tc && dtype == dtypes::float32) ADD_FAILURE() << what;  // float16 needs cl_khr_fp16 on OpenCL
      }
      std::fflush(stdout);
    }
  }
}

}  // namespace
}  // namespace tunebed
