// Runtime overheads: clang compile of a small kernel (cache miss) and a cache hit, launch cost of
// an empty kernel on the CPU (inline and through the thread pool) and on OpenCL, what a cold first
// launch costs over warm ones, and the thread pool's split of a 200 us kernel over two cores.
// Run: build/bench/bench_runtime   (compiled objects go to a temporary cache, removed at exit)
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/ir/host_buffer.hpp"
#include "core/runtime/device.hpp"
#include "core/runtime/thread_pool.hpp"

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

// What a first launch costs over warm ones: the figure behind search/measure.hpp's
// kSelfWarmingLaunch (a verification launch that long is the first sample, not a warm-up). Each
// iteration uploads fresh buffers (3 MB in, 3 MB out), streams 64 MB through the caches on the
// host as a verification check does, launches once (cold) and then 5 times (warm). The kernel
// doubles its input state.range(0) times over, so a launch takes from about a millisecond to
// about half a second. Counters: cold_ms, warm_ms (the warm launches' median), penalty_ms.
constexpr const char* kCpuPasses = R"(
#include <stdint.h>
void passes(void* const* bufs, const int32_t* vars, int32_t core_id, int32_t num_cores) {
  volatile float* out = (float*)bufs[0];
  const float* in = (const float*)bufs[1];
  for (int32_t r = 0; r < vars[0]; r++)
    for (int32_t i = 0; i < 786432; i++) out[i] = in[i] * 2.0f;
}
)";

void BM_CpuColdLaunch(benchmark::State& state) {
  use_private_cache();
  auto cpu = open_device("cpu");
  auto program = cpu->compile(kCpuPasses, "passes");
  const int32_t passes = static_cast<int32_t>(state.range(0));
  const LaunchDims one{{1, 1, 1}, {1, 1, 1}};
  HostBuffer input(dtypes::float32, 786432), flush(dtypes::float64, int64_t{8} << 20);
  double cold = 0, warm = 0, sink = 0;
  for (auto _ : state) {
    auto in = cpu->allocate(dtypes::float32, input.numel()), out = cpu->allocate(dtypes::float32, input.numel());
    in->copyin(input);
    out->copyin(input);
    for (int64_t i = 0; i < flush.numel(); i += 8) sink += flush.get_float(i);
    const double first = program->run({out.get(), in.get()}, {passes}, one);
    std::vector<double> later;
    for (int k = 0; k < 5; k++) later.push_back(program->run({out.get(), in.get()}, {passes}, one));
    std::ranges::sort(later);
    cold += first;
    warm += later[2];
    state.SetIterationTime(first);
  }
  benchmark::DoNotOptimize(sink);
  const double n = static_cast<double>(state.iterations());
  state.counters["cold_ms"] = cold / n * 1e3;
  state.counters["warm_ms"] = warm / n * 1e3;
  state.counters["penalty_ms"] = (cold - warm) / n * 1e3;
}
BENCHMARK(BM_CpuColdLaunch)->Arg(1)->Arg(16)->Arg(128)->Arg(1024)->Iterations(5)->UseManualTime()->Unit(benchmark::kMillisecond);

// A THREAD kernel's split, alone: parallel_for over 2 slices that each spin for 100 us, back to
// back as timing runs launch. Ideal is 100 us per dispatch; 200 us means the pool's thread was
// still asleep and the caller ran both slices. `pool_share` is the fraction of slices the pool ran.
void BM_ThreadPoolSplit(benchmark::State& state) {
  ThreadPool pool(1);
  const auto caller = std::this_thread::get_id();
  std::atomic<int64_t> by_pool = 0, slices = 0;
  const std::function<void(int)> slice = [&](int) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(100);
    while (std::chrono::steady_clock::now() < until) {
    }
    if (std::this_thread::get_id() != caller) by_pool++;
    slices++;
  };
  for (auto _ : state) pool.parallel_for(2, slice);
  state.counters["pool_share"] = static_cast<double>(by_pool) / static_cast<double>(std::max<int64_t>(1, slices));
}
BENCHMARK(BM_ThreadPoolSplit)->Unit(benchmark::kMicrosecond)->UseRealTime();

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
