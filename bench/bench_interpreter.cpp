// The AST interpreter's exact run (core/schedule/ast_interpreter.hpp), the oracle of every check:
// how long one iteration of a kernel's full shape takes. A tune's independent check runs up to
// kExactRunBudget iterations of it, so this figure sets how long a big kernel's check takes.
//
// Each benchmark runs expect_kernel_ast on one workload's kernel with seeded inputs, sampled down
// to about 2^20 iterations and to kExactRunBudget's 2^26 (the stride a check would use: the
// sampled outputs' spacing decides how often a load finds its line in the cache), on 1 and on 2
// threads (the exact run splits a kernel whose stores allow it), and reports
//   ns_per_iteration   wall time / the iterations the sampled run visits
#include <benchmark/benchmark.h>

#include <chrono>

#include "bench/kernel_bench.hpp"
#include "core/tensor/workloads.hpp"

namespace tunebed::bench {
namespace {

void BM_ExactRun(benchmark::State& state, const std::string& workload) {
  const int64_t budget = int64_t{1} << state.range(0);
  const int threads = static_cast<int>(state.range(1));
  const UOp ast = single_kernel(make_workload(workload).output, workload);
  std::vector<HostBuffer> bufs;
  for (auto [dtype, size] : ast_buffer_specs(ast)) {
    bufs.emplace_back(dtype, size);
    if (bufs.size() > 1) fill_random(bufs.back(), bufs.size());
  }
  const int64_t iterations = ast_iterations(ast);
  const int64_t visited = iterations / sample_stride(iterations, budget);
  double seconds = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(expect_kernel_ast(ast, bufs, {}, budget, threads));
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  state.counters["ns_per_iteration"] =
      seconds * 1e9 / (static_cast<double>(visited) * static_cast<double>(state.iterations()));
}

BENCHMARK_CAPTURE(BM_ExactRun, matmul_512, std::string("matmul:M=512,N=512,K=512,dtype=float32"))
    ->ArgNames({"log2_budget", "threads"})->ArgsProduct({{20, 26}, {1, 2}})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ExactRun, sum_4096x4096, std::string("sum:M=4096,N=4096,axis=rows,dtype=float32"))
    ->ArgNames({"log2_budget", "threads"})->ArgsProduct({{20, 26}, {1, 2}})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tunebed::bench
