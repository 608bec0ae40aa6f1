// BEAM on real kernels (issue 7's benchmark): width 4 on a float32 512^3 matmul and on the
// library's default conv2d, each tuned through tune() into a tuning database in a temporary
// directory, then the winner timed beside tinygrad's hand-coded opts and Eigen in this process.
//
//   bench_beam [--budget N] [--seconds S] [--db PATH]
//
// Per kernel it prints the search's wall time and candidates per second, where the time went
// (read back from the candidates the run wrote: compile_ms, every timing sample, the medians),
// and the three GFLOP/s figures. A plain program rather than a Google Benchmark: one tuning run
// is the measurement, repeating it would only re-measure the same search.
//
// The compile cache (TUNEBED_CACHE_DIR) is pointed at the temporary directory, so that every
// candidate is really compiled. Tuning forks the worker processes first; only after the pool is
// gone does this process open the CPU device itself (worker_pool.hpp says why).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <thread>

#include "bench/kernel_bench.hpp"
#include "core/tensor/workloads.hpp"
#include "search/kernel_target.hpp"
#include "search/measure.hpp"
#include "search/tune.hpp"

namespace tunebed::bench {
namespace {

struct Case {
  std::string spec;
  // Eigen's version: fills OUT from the kernel's input buffers (data.host[1...]).
  std::function<void(KernelData& data, float* out)> eigen;
};

const ConvShape kConv{.n = 1, .c = 32, .h = 32, .w = 32, .k = 64, .r = 3, .s = 3, .pad = 1};

std::vector<Case> cases() {
  return {
      {"matmul:M=512,N=512,K=512,dtype=float32",
       [](KernelData& data, float* out) { eigen_matmul(out, data.f32(1), data.f32(2), 512, 512, 512); }},
      {"conv2d",  // the library's defaults: x (1, 32, 32, 32), w (64, 32, 3, 3), padding 1
       [cols = std::vector<float>()](KernelData& data, float* out) mutable {
         // The inputs' order is the scheduler's; tell them apart by size.
         const bool x_first = data.host[1].numel() == kConv.n * kConv.c * kConv.h * kConv.w;
         eigen_conv2d(out, data.f32(x_first ? 1 : 2), data.f32(x_first ? 2 : 1), kConv, cols);
       }},
  };
}

struct Tuned {
  std::string spec, hand_opts;
  UOp ast;
  KernelCost cost;
  search::TuneResult result;
  double wall_s = 0;
};

// Where the run's time went, from the candidates it committed.
struct RunShares {
  int64_t candidates = 0;
  double compile_s = 0, timed_s = 0, verify_s = 0;
  std::string statuses;
};

RunShares shares(results::TuningDb& db, int64_t run_id) {
  RunShares s;
  results::Statement st = results::raw_connection(db).prepare(
      "SELECT count(*), coalesce(sum(compile_ms), 0) / 1e3, coalesce(sum(median_us), 0) / 1e6, "
      "(SELECT coalesce(sum(j.value), 0) / 1e6 FROM candidates c, json_each(c.samples_us) j "
      " WHERE c.run_id = ?1) FROM candidates WHERE run_id = ?1");
  st.bind_all(run_id).step();
  s.candidates = st.column_int(0);
  s.compile_s = st.column_double(1);
  s.verify_s = st.column_double(2);  // one untimed run per candidate, about its median
  s.timed_s = st.column_double(3);
  results::Statement by_status = results::raw_connection(db).prepare(
      "SELECT status, count(*) FROM candidates WHERE run_id = ? GROUP BY status ORDER BY status");
  by_status.bind_all(run_id);
  while (by_status.step())
    s.statuses += (s.statuses.empty() ? "" : " ") + by_status.column_text(0) + "=" +
                  std::to_string(by_status.column_int(1));
  return s;
}

// Seconds per launch over ROUNDS interleaved rounds of the winner, the hand-coded kernel and Eigen.
struct Compared {
  std::vector<double> winner, hand, eigen;
};

void check(const std::string& what, const UOp& ast, const KernelData& data, const HostBuffer& got) {
  if (const std::string off = off_exact(ast, data, got); !off.empty())
    throw std::runtime_error(what + " is off the exact run: " + off);
}

Compared compare(const Tuned& t, const Case& c, int rounds) {
  std::shared_ptr<Device> device = open_device("cpu");
  const int cores = Renderer::for_device("cpu").threads;
  CompiledKernel winner = compile_kernel(*device, t.ast, parse_opts(t.result.opts), cores);
  CompiledKernel hand = compile_kernel(*device, t.ast, hand_coded(t.ast, cores), cores);
  KernelData data(*device, winner.spec);
  HostBuffer eigen_out(dtypes::float32, data.host[0].numel());
  float* out = reinterpret_cast<float*>(eigen_out.bytes.data());
  Compared cmp;
  for (int i = 0; i < rounds + 2; i++) {  // the first two rounds warm up
    const double ws = winner.program->run(data.args, {}, winner.dims);
    HostBuffer winner_out = data.device[0]->to_host();
    const double hs = hand.program->run(data.args, {}, hand.dims);
    const double es = seconds([&] { c.eigen(data, out); });
    if (i == 0) {
      check(t.spec + ": the winner", t.ast, data, winner_out);
      check(t.spec + ": hand-coded", t.ast, data, data.device[0]->to_host());
      check(t.spec + ": Eigen", t.ast, data, eigen_out);
    }
    if (i >= 2) cmp.winner.push_back(ws), cmp.hand.push_back(hs), cmp.eigen.push_back(es);
  }
  return cmp;
}

// "median (best)" GFLOP/s: on a loaded machine the best round says what the code can do, the
// median what it did.
std::string gflops(const KernelCost& cost, const std::vector<double>& s) {
  auto g = [&](double t) { return static_cast<double>(cost.flops) / t / 1e9; };
  char buf[64];
  std::snprintf(buf, sizeof buf, "%8.2f (%7.2f)", g(search::median(s)),
                g(*std::min_element(s.begin(), s.end())));
  return buf;
}

int run(int argc, char** argv) {
  int64_t budget = 80;
  double seconds_cap = 900;
  std::string db_path;
  const std::string usage = " (bench_beam [--budget N] [--seconds S] [--db PATH])";
  for (int i = 1; i < argc; i++) {
    const std::string arg = argv[i];
    // scripts/bench hands Google Benchmark's flags to every bench program; they mean nothing here.
    if (arg.starts_with("--benchmark_")) continue;
    if (arg != "--budget" && arg != "--seconds" && arg != "--db")
      throw std::invalid_argument("unknown argument '" + arg + "'" + usage);
    if (i + 1 >= argc) throw std::invalid_argument("'" + arg + "' needs a value" + usage);
    const std::string value = argv[++i];
    try {
      if (arg == "--budget") budget = std::stoll(value);
      if (arg == "--seconds") seconds_cap = std::stod(value);
    } catch (const std::logic_error&) {
      throw std::invalid_argument("'" + arg + "' needs a number, not '" + value + "'");
    }
    if (arg == "--db") db_path = value;
  }
  if (budget < 1) throw std::invalid_argument("--budget must be at least 1");
  if (!(seconds_cap > 0)) throw std::invalid_argument("--seconds must be positive");
  const auto dir =
      std::filesystem::temp_directory_path() / ("tunebed_bench_beam_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  ::setenv("TUNEBED_CACHE_DIR", (dir / "cache").c_str(), 1);
  if (db_path.empty()) db_path = (dir / "tuning.db").string();

  const std::vector<Case> all = cases();
  std::vector<Tuned> tuned;
  auto db = results::TuningDb::open(db_path, results::TuningDb::Mode::create);
  {
    search::WorkerPool pool;
    std::printf("BEAM width 4, budget %lld candidates (%.0f s cap), %d workers, database %s\n",
                static_cast<long long>(budget), seconds_cap, pool.size(), db_path.c_str());
    for (const Case& c : all) {
      Tuned t;
      t.spec = c.spec;
      t.ast = single_kernel(make_workload(c.spec).output, c.spec);
      t.cost = kernel_cost(t.ast);
      search::KernelTarget target(t.ast, c.spec, "cpu");
      t.hand_opts = to_string(hand_coded(t.ast, Renderer::for_device("cpu").threads));
      auto beam = search::make_beam({.width = 4});
      search::TuneOptions o;
      o.budget = {budget, seconds_cap};
      o.retune = true;
      t.wall_s = seconds([&] { t.result = search::tune(target.target(), *beam, pool, db, o); });
      tuned.push_back(std::move(t));
    }
  }
  for (size_t i = 0; i < all.size(); i++) {
    const Tuned& t = tuned[i];
    const RunShares s = shares(db, t.result.run_id);
    const Compared cmp = compare(t, all[i], 10);
    auto pct = [&](double x) { return 100 * x / t.wall_s; };
    std::printf("\n%s  (%.3g GFLOP per run)\n", t.spec.c_str(), static_cast<double>(t.cost.flops) / 1e9);
    std::printf("  search      %lld candidates in %.1f s wall: %.2f candidates/s  [%s]\n",
                static_cast<long long>(s.candidates), t.wall_s, s.candidates / t.wall_s, s.statuses.c_str());
    std::printf("  compile     %7.2f s  %5.1f%% of wall (summed over workers; overlaps the runs)\n",
                s.compile_s, pct(s.compile_s));
    std::printf("  timed runs  %7.2f s  %5.1f%%\n", s.timed_s, pct(s.timed_s));
    std::printf("  verify      %7.2f s  %5.1f%% (one run + compare per candidate, estimated by its median)\n",
                s.verify_s, pct(s.verify_s));
    std::printf("  rest        %7.2f s  %5.1f%% (render, warm-up, re-timing the top 3, pipes, database)\n",
                t.wall_s - s.timed_s - s.verify_s, pct(t.wall_s - s.timed_s - s.verify_s));
    std::printf("  GFLOP/s     median (best of 10 rounds)\n");
    std::printf("  winner      %s  %s\n", gflops(t.cost, cmp.winner).c_str(),
                t.result.opts.empty() ? "(no opts)" : t.result.opts.c_str());
    std::printf("  hand-coded  %s  %s\n", gflops(t.cost, cmp.hand).c_str(), t.hand_opts.c_str());
    std::printf("  Eigen       %s  (one thread)\n", gflops(t.cost, cmp.eigen).c_str());
  }
  std::filesystem::remove_all(dir / "cache");
  return 0;
}

}  // namespace
}  // namespace tunebed::bench

int main(int argc, char** argv) {
  try {
    return tunebed::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
