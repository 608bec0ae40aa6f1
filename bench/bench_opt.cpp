// The optimizer's legality checks, as search and fuzz_opts pay for them (issue 18's benchmark).
//
//   BM_KernelActions   kernel_actions on every kernel: each search action tried on the kernel,
//                      the legal ones applied (what BEAM does per state it expands)
//   BM_RandomOpts      random_opts(k, seed): a random legal walk of up to 8 opts per kernel
//   BM_ArbitraryOpts   fuzz_opts's inner loop: 6 arbitrary opts (any op, axis -1..6, odd amounts)
//                      applied in turn, most refused
//
// The kernels are the library workloads' (default shapes) and every kernel of the checked-in
// dataset sample (tests/data/sops-sample.txt, found through TUNEBED_SOURCE_DIR), for the CPU
// target of 2 cores. The counter `kernels_per_s` is kernels handled per second.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <random>

#include "core/imports/corpus.hpp"
#include "core/ir/text.hpp"
#include "core/opt/actions.hpp"
#include "core/schedule/schedule.hpp"
#include "core/tensor/workloads.hpp"

namespace tunebed {
namespace {

std::vector<Kernel> bench_kernels() {
  std::vector<Kernel> out;
  const Renderer cpu = Renderer::cpu(2);
  for (const WorkloadDef& def : workload_library())
    for (const ScheduleItem& item : create_schedule({make_workload(def.name).output.uop()}).items)
      if (!item.is_copy()) out.emplace_back(item.ast, cpu);
  const char* root = std::getenv("TUNEBED_SOURCE_DIR");
  const std::string sample = std::string(root ? root : ".") + "/tests/data/sops-sample.txt";
  for (const imports::CorpusKernel& k : imports::import_lines(imports::read_lines(sample)).kernels)
    out.emplace_back(parse_uop(k.text), cpu);
  return out;
}

const std::vector<Kernel>& kernels() {
  static const std::vector<Kernel> ks = bench_kernels();
  return ks;
}

void report(benchmark::State& state, size_t per_iteration) {
  state.counters["kernels_per_s"] =
      benchmark::Counter(static_cast<double>(per_iteration), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_KernelActions(benchmark::State& state) {
  size_t legal = 0;
  for (auto _ : state)
    for (const Kernel& k : kernels()) legal += kernel_actions(k).size();
  benchmark::DoNotOptimize(legal);
  report(state, kernels().size());
}
BENCHMARK(BM_KernelActions)->Unit(benchmark::kMillisecond);

void BM_RandomOpts(benchmark::State& state) {
  uint64_t seed = 0, applied = 0;
  for (auto _ : state)
    for (const Kernel& k : kernels()) applied += random_opts(k, seed++).size();
  benchmark::DoNotOptimize(applied);
  report(state, kernels().size());
}
BENCHMARK(BM_RandomOpts)->Unit(benchmark::kMillisecond);

// Any opt, legal or not, as fuzz_opts draws them.
Opt arbitrary_opt(std::mt19937_64& rng) {
  static constexpr int kAmounts[] = {0, 2, 3, 4, 1, 5, 7, 8, 16, 32};
  const auto op = static_cast<OptOps>(rng() % (static_cast<int>(OptOps::THREAD) + 1));
  Opt opt{op, std::nullopt, std::monostate{}};
  if (op == OptOps::NOLOCALS) return opt;
  if (rng() % 16 != 0) opt.axis = static_cast<int>(rng() % 8) - 1;
  if (op == OptOps::TC)
    opt.arg = TCArg{static_cast<int>(rng() % 4) - 1, static_cast<int>(rng() % 3), static_cast<int>(rng() % 2) + 1};
  else
    opt.arg = kAmounts[rng() % std::size(kAmounts)];
  return opt;
}

void BM_ArbitraryOpts(benchmark::State& state) {
  std::mt19937_64 rng(1);
  size_t refused = 0;
  for (auto _ : state)
    for (const Kernel& root : kernels()) {
      Kernel k = root;
      for (int n = 0; n < 6; n++) {
        try {
          k.apply_opt(arbitrary_opt(rng));
        } catch (const KernelOptError&) {
          refused++;
        }
      }
    }
  benchmark::DoNotOptimize(refused);
  report(state, kernels().size());
}
BENCHMARK(BM_ArbitraryOpts)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tunebed
