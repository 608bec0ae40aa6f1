// Runtime overheads: clang compile of a small kernel (cache miss) and a cache hit, launch cost of
// an empty kernel on the CPU (inline and through the thread pool) and on OpenCL.
// Run: build/bench/bench_runtime   (compiled objects go to a temporary cache, removed at exit)
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/runtime/device.hpp"

namespace tunebed {
namespace {

constexpr const char* kCpuNop = R"(
#include <stdint.h>
void nop(void* const* bufs, const int32_t* vars, int32_t core_id, int32_t num_cores) {
  float* out = (float*)bufs[0];
  if (core_id == 0) out[0] = (float)(vars[0] + num_cores);
}
)";

constexpr const char* kClNop = R"(
__kernel void nop(__global float* out, int v) { if (get_global_id(0) == 0) out[0] = (float)v; }
)";

// A private kernel cache for the whole run, so "miss" really misses and nothing is left behind.
void use_private_cache() {
  static const struct PrivateCache {
    std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("tunebed-bench-cache-" + std::to_string(getpid()));
    PrivateCache() { setenv("TUNEBED_CACHE_DIR", dir.c_str(), 1); }
    ~PrivateCache() { std::filesystem::remove_all(dir); }
  } cache;
}

void BM_CpuCompileMiss(benchmark::State& state) {
  use_private_cache();
  auto cpu = open_device("cpu");
  int nonce = 0;
  for (auto _ : state)
    benchmark::DoNotOptimize(cpu->compile("// " + std::to_string(nonce++) + kCpuNop, "nop"));
}
BENCHMARK(BM_CpuCompileMiss)->Unit(benchmark::kMillisecond)->Iterations(10);

void BM_CpuCompileHit(benchmark::State& state) {
  use_private_cache();
  auto cpu = open_device("cpu");
  cpu->compile(kCpuNop, "nop");
  for (auto _ : state) benchmark::DoNotOptimize(cpu->compile(kCpuNop, "nop"));
}
BENCHMARK(BM_CpuCompileHit)->Unit(benchmark::kMicrosecond);

// Wall time per Program::run of an empty kernel: dispatch + (for cores > 1) pool wake-up and join.
void BM_CpuLaunch(benchmark::State& state) {
  use_private_cache();
  auto cpu = open_device("cpu");
  auto program = cpu->compile(kCpuNop, "nop");
  auto out = cpu->allocate(dtypes::float32, 1);
  const LaunchDims dims{{state.range(0), 1, 1}, {1, 1, 1}};
  for (auto _ : state) program->run({out.get()}, {1}, dims);
}
BENCHMARK(BM_CpuLaunch)->Arg(1)->Arg(2)->Arg(8)->Unit(benchmark::kMicrosecond);

// Wall time per Program::run on OpenCL (enqueue, wait, profiling query); device_us is the
// event's own START..END.
void BM_OpenCLLaunch(benchmark::State& state) {
  std::shared_ptr<Device> cl;
  try {
    cl = open_device("opencl");
  } catch (const DeviceError& e) {
    state.SkipWithError(e.what());
    return;
  }
  auto program = cl->compile(kClNop, "nop");
  auto out = cl->allocate(dtypes::float32, 1);
  const LaunchDims dims{{state.range(0), 1, 1}, {1, 1, 1}};
  double device_seconds = 0;
  for (auto _ : state) device_seconds += program->run({out.get()}, {1}, dims);
  state.counters["device_us"] =
      benchmark::Counter(device_seconds * 1e6 / static_cast<double>(state.iterations()));
}
BENCHMARK(BM_OpenCLLaunch)->Arg(1)->Arg(64)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace tunebed
