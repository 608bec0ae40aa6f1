// CPU matmul, n x n x n float32 (n = 1024 unless TUNEBED_BENCH_N says otherwise), single-threaded:
// tunebed's kernel with the tensor-core opt (WMMA register blocks, core/codegen/wmma.cpp), the
// same kernel with the hand-coded opts and no TC, Eigen, and OpenBLAS, all in one run. Each
// reports GFLOP/s (2 n^3 flops per run) over CPU time, so that other load on a shared machine
// counts less; every tunebed kernel is checked against Eigen first.
// OpenBLAS is loaded at run time (libopenblas.so.0, scripts/setup installs libopenblas-dev) with
// OPENBLAS_NUM_THREADS=1; without it that benchmark is skipped with the reason.
// Run: build/bench/bench_tc
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <Eigen/Core>
#include <cstdlib>
#include <random>

#include "core/codegen/codegen.hpp"
#include "core/opt/heuristic.hpp"
#include "core/opt/kernel.hpp"
#include "core/runtime/device.hpp"
#include "core/schedule/schedule.hpp"
#include "core/tensor/workloads.hpp"

namespace tunebed {
namespace {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

int64_t size() {
  const char* n = std::getenv("TUNEBED_BENCH_N");
  return n ? std::atoll(n) : 1024;
}

struct Inputs {
  Matrix a, b, want;
  Inputs() : a(size(), size()), b(size(), size()) {
    std::mt19937 rng(0);
    std::uniform_real_distribution<float> dist(-1, 1);
    for (Matrix* m : {&a, &b})
      for (Eigen::Index i = 0; i < m->size(); i++) m->data()[i] = dist(rng);
    want = a * b;
  }
};

const Inputs& inputs() {
  static const Inputs in;
  return in;
}

void report(benchmark::State& state) {
  const double n = static_cast<double>(size());
  state.counters["GFLOP/s"] =
      benchmark::Counter(2 * n * n * n * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// The workload library's matmul kernel: out = a @ b, buffers (out, a, b).
UOp matmul_ast() {
  const std::string n = std::to_string(size());
  Workload w = make_workload("matmul:M=" + n + ",N=" + n + ",K=" + n + ",dtype=float32");
  for (const ScheduleItem& item : create_schedule({w.output.uop()}).items)
    if (!item.is_copy()) return item.ast;
  throw std::logic_error("the matmul workload scheduled no kernel");
}

// `opts` on the kernel (the hand-coded ones when nullopt, on a target without tensor cores),
// compiled on the CPU, checked against Eigen, then timed.
void run_tunebed(benchmark::State& state, const std::optional<std::vector<Opt>>& opts) {
  Renderer r = Renderer::cpu(1);
  Kernel k(matmul_ast(), r);
  if (opts) {
    k.apply_opts(*opts);
  } else {
    r.tensor_cores.clear();
    Kernel plain(matmul_ast(), r);
    k = plain.apply_opts(hand_coded_optimizations(plain));
  }
  state.SetLabel(to_string(k.applied_opts()));
  const ProgramSpec spec = get_program(k.get_optimized_ast(), r);
  auto cpu = open_device("cpu");
  auto program = cpu->compile(spec.source, spec.name);
  const Inputs& in = inputs();
  const int64_t n = size();
  auto out = cpu->allocate(dtypes::float32, n * n), a = cpu->allocate(dtypes::float32, n * n),
       b = cpu->allocate(dtypes::float32, n * n);
  a->copyin(std::as_bytes(std::span(in.a.data(), in.a.size())));
  b->copyin(std::as_bytes(std::span(in.b.data(), in.b.size())));
  const LaunchDims dims = spec.launch_dims({});
  program->run({out.get(), a.get(), b.get()}, {}, dims);
  Matrix got(n, n);
  out->copyout(std::as_writable_bytes(std::span(got.data(), got.size())));
  if (const float err = (got - in.want).cwiseAbs().maxCoeff(); !(err < 1e-3f * n)) {
    state.SkipWithError(("tunebed's result differs from Eigen's by " + std::to_string(err)).c_str());
    return;
  }
  for (auto _ : state) program->run({out.get(), a.get(), b.get()}, {}, dims);
  report(state);
}

void BM_TunebedTC(benchmark::State& state) {
  run_tunebed(state, std::vector<Opt>{{OptOps::TC, 0, TCArg{-1, 0, 1}}});
}
BENCHMARK(BM_TunebedTC)->Unit(benchmark::kMillisecond);

void BM_TunebedHandCoded(benchmark::State& state) { run_tunebed(state, std::nullopt); }
BENCHMARK(BM_TunebedHandCoded)->Unit(benchmark::kMillisecond);

void BM_Eigen(benchmark::State& state) {
  Eigen::setNbThreads(1);
  const Inputs& in = inputs();
  Matrix c(size(), size());
  for (auto _ : state) {
    c.noalias() = in.a * in.b;
    benchmark::DoNotOptimize(c.data());
  }
  report(state);
}
BENCHMARK(BM_Eigen)->Unit(benchmark::kMillisecond);

// cblas_sgemm from libopenblas, found at run time so the build does not need it.
using Sgemm = void (*)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha, const float* a,
                       int lda, const float* b, int ldb, float beta, float* c, int ldc);

void BM_OpenBLAS(benchmark::State& state) {
  setenv("OPENBLAS_NUM_THREADS", "1", 1);  // read when the library loads
  void* lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  auto sgemm = lib ? reinterpret_cast<Sgemm>(dlsym(lib, "cblas_sgemm")) : nullptr;
  if (!sgemm) {
    state.SkipWithError((std::string("OpenBLAS not found (install libopenblas-dev): ") + dlerror()).c_str());
    return;
  }
  if (auto set_threads = reinterpret_cast<void (*)(int)>(dlsym(lib, "openblas_set_num_threads")))
    set_threads(1);
  const Inputs& in = inputs();
  const int n = static_cast<int>(size());
  Matrix c(n, n);
  constexpr int kRowMajor = 101, kNoTrans = 111;
  for (auto _ : state)
    sgemm(kRowMajor, kNoTrans, kNoTrans, n, n, n, 1.0f, in.a.data(), n, in.b.data(), n, 0.0f, c.data(), n);
  report(state);
}
BENCHMARK(BM_OpenBLAS)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tunebed
