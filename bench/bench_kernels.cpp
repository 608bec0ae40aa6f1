// tunebed's kernels with tinygrad's hand-coded opts beside Eigen, on the same data in the same
// run (issue 6's benchmark b), and the time from a kernel AST to its rendered source (a).
//
// Each kernel goes the whole way: workload -> create_schedule -> Kernel -> hand_coded_optimizations
// -> get_optimized_ast -> get_program -> CPU device compile -> Program::run. Every iteration runs
// the tunebed kernel once and Eigen once, interleaved, so both see the same machine state; the
// reported time is tunebed's (manual time), and the counters give both sides as medians:
//
//   GFLOPs, GBs              tunebed, from kernel_cost (core/opt/cost.hpp)
//   eigen_GFLOPs, eigen_GBs  Eigen on one thread, the same FLOP and byte counts
//   vs_eigen                 Eigen's median time / tunebed's: above 1, tunebed is faster
//   best_GFLOPs, eigen_best_GFLOPs   the fastest iteration of each, for a loaded machine
//
// The `/1thread` variants render for one core, like Eigen; `/Nthreads` lets the hand-coded opts
// THREAD the kernel over every core of the machine. Both outputs are checked against the AST
// interpreter's exact run (sampled; core/engine/check.hpp) and a mismatch fails the benchmark.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <functional>
#include <map>
#include <thread>

#include "bench/kernel_bench.hpp"
#include "core/tensor/workloads.hpp"
#include "search/measure.hpp"

namespace tunebed::bench {
namespace {

constexpr int64_t kAddN = int64_t{1} << 24;
// Seconds of tunebed time per benchmark: enough for a few 1024^3 matmuls, so that the medians
// are of more than one launch.
constexpr double kMinTime = 3.0;

struct Case {
  std::function<Tensor()> build;
  // Eigen's version: fills OUT from the kernel's inputs (data.host[1...]).
  std::function<void(KernelData& data, float* out)> eigen;
};

Case matmul(int64_t n) {
  return {[n] {
            const std::string d = std::to_string(n);
            return make_workload("matmul:M=" + d + ",N=" + d + ",K=" + d + ",dtype=float32").output;
          },
          [n](KernelData& data, float* out) { eigen_matmul(out, data.f32(1), data.f32(2), n, n, n); }};
}

const std::map<std::string, Case>& cases() {
  static const auto& all = *new std::map<std::string, Case>{
      {"matmul_512", matmul(512)},
      {"matmul_1024", matmul(1024)},
      {"sum_4096x4096",
       {[] { return make_workload("sum:M=4096,N=4096,axis=rows,dtype=float32").output; },
        [](KernelData& data, float* out) {
          Eigen::Map<Eigen::VectorXf>(out, 4096) = MapMatrix(data.f32(1), 4096, 4096).rowwise().sum();
        }}},
      {"add_16M",
       {[] {
          return Tensor::from_host(HostBuffer(dtypes::float32, kAddN), {kAddN}) +
                 Tensor::from_host(HostBuffer(dtypes::float32, kAddN), {kAddN});
        },
        [](KernelData& data, float* out) {
          using Vec = Eigen::Map<Eigen::ArrayXf>;
          Vec(out, kAddN) = Vec(data.f32(1), kAddN) + Vec(data.f32(2), kAddN);
        }}},
  };
  return all;
}

int machine_cores() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

void BM_Kernel(benchmark::State& state, const std::string& name, int cores) {
  const Case& c = cases().at(name);
  const UOp ast = single_kernel(c.build(), name);
  const KernelCost cost = kernel_cost(ast);
  std::shared_ptr<Device> device = open_device("cpu");
  CompiledKernel k = compile_kernel(*device, ast, hand_coded(ast, cores), cores);
  KernelData data(*device, k.spec);
  HostBuffer eigen_out(dtypes::float32, data.host[0].numel());
  auto run_tunebed = [&] { return k.program->run(data.args, {}, k.dims); };
  auto run_eigen = [&] {
    return seconds([&] { c.eigen(data, reinterpret_cast<float*>(eigen_out.bytes.data())); });
  };
  for (int i = 0; i < 2; i++) run_tunebed(), run_eigen();  // warm-up: caches, page faults, threads

  std::vector<double> tunebed_s, eigen_s;
  for (auto _ : state) {
    tunebed_s.push_back(run_tunebed());
    eigen_s.push_back(run_eigen());
    state.SetIterationTime(tunebed_s.back());
  }
  for (const auto& [who, out] :
       {std::pair{"tunebed", data.device[0]->to_host()}, std::pair{"Eigen", eigen_out}})
    if (const std::string off = off_exact(ast, data, out); !off.empty()) {
      state.SkipWithError((std::string(who) + " is off the exact run: " + off).c_str());
      return;
    }
  const double t = search::median(tunebed_s), e = search::median(eigen_s);
  state.counters["GFLOPs"] = static_cast<double>(cost.flops) / t / 1e9;
  state.counters["GBs"] = static_cast<double>(cost.bytes) / t / 1e9;
  state.counters["eigen_GFLOPs"] = static_cast<double>(cost.flops) / e / 1e9;
  state.counters["eigen_GBs"] = static_cast<double>(cost.bytes) / e / 1e9;
  state.counters["vs_eigen"] = e / t;
  // On a loaded machine the fastest launch says what the code can do; the median what it did.
  const double t_best = *std::min_element(tunebed_s.begin(), tunebed_s.end());
  const double e_best = *std::min_element(eigen_s.begin(), eigen_s.end());
  state.counters["best_GFLOPs"] = static_cast<double>(cost.flops) / t_best / 1e9;
  state.counters["eigen_best_GFLOPs"] = static_cast<double>(cost.flops) / e_best / 1e9;
  state.SetLabel(k.opts.empty() ? "no opts" : k.opts);
}

// A search pays this per candidate: the Kernel with its opts applied, the optimized AST, every
// codegen pass and the C renderer (no compiler).
void BM_Render(benchmark::State& state, const std::string& name, int cores) {
  const UOp ast = single_kernel(cases().at(name).build(), name);
  const std::vector<Opt> opts = hand_coded(ast, cores);
  const Renderer renderer = Renderer::cpu(cores);
  size_t bytes = 0;
  for (auto _ : state) {
    Kernel k(ast, renderer);
    k.apply_opts(opts);
    ProgramSpec p = get_program(k.get_optimized_ast(), renderer);
    bytes = p.source.size();
    benchmark::DoNotOptimize(p.source);
  }
  state.counters["source_bytes"] = static_cast<double>(bytes);
  state.SetLabel(to_string(opts));
}

[[maybe_unused]] const bool registered = [] {
  for (const auto& [name, c] : cases()) {
    benchmark::RegisterBenchmark(("BM_Kernel/" + name + "/1thread").c_str(), BM_Kernel, name, 1)
        ->UseManualTime()
        ->MinTime(kMinTime)
        ->Unit(benchmark::kMillisecond);
    const int n = machine_cores();
    if (n > 1)
      benchmark::RegisterBenchmark(("BM_Kernel/" + name + "/" + std::to_string(n) + "threads").c_str(),
                                   BM_Kernel, name, n)
          ->UseManualTime()
          ->MinTime(kMinTime)
          ->Unit(benchmark::kMillisecond);
  }
  for (const auto& [name, c] : cases())
    benchmark::RegisterBenchmark(("BM_Render/" + name).c_str(), BM_Render, name, machine_cores())
        ->Unit(benchmark::kMicrosecond);
  return true;
}();

}  // namespace
}  // namespace tunebed::bench
