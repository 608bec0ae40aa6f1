// `tunebed tune`: tune every kernel of some workloads on a device into the tuning database.
// With no workloads it tunes the default batch, the README's main job.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "core/schedule/schedule.hpp"
#include "core/tensor/workloads.hpp"
#include "harness/build_info.hpp"
#include "harness/cli.hpp"
#include "results/tuning_db.hpp"
#include "search/kernel_target.hpp"
#include "search/tune.hpp"
#include "search/worker_pool.hpp"

namespace tunebed::cli {
namespace {

// A handful of library workloads at sizes that tune in a few minutes on two cores.
const std::vector<std::string> kDefaultBatch = {
    "matmul:M=256,N=256,K=256,dtype=float32",
    "sum:M=1024,N=1024,axis=rows,dtype=float32",
    "softmax:M=512,N=512,dtype=float32",
    "elementwise:N=1048576,length=4,dtype=float32",
};

std::unique_ptr<search::Strategy> make_strategy(const std::string& name, uint64_t seed, int width) {
  if (name == "beam") return search::make_beam({.width = width});
  if (name == "random") return search::make_random({.seed = seed});
  if (name == "hill") return search::make_hill_climb({.seed = seed});
  if (name == "annealing") return search::make_annealing({.seed = seed});
  throw UsageError("unknown strategy '" + name + "' (expected beam, random, hill or annealing)");
}

struct Row {
  std::string kernel, shape, opts, hand_opts;
  double tuned_us = 0;
  bool cache_hit = false;
};

int run(const std::vector<std::string>& args) {
  CommandLine cl{
      .synopsis = "tunebed tune [WORKLOAD...] [options]",
      .description =
          "Schedule each workload into kernels and tune every kernel on the device: a search\n"
          "over OptOps in isolated worker processes, every candidate verified against the\n"
          "unoptimized kernel and recorded in the tuning database. A kernel already tuned on the\n"
          "same device (same AST hash and action space) reuses its stored winner, re-verified,\n"
          "unless --retune. With no WORKLOAD, tunes the default batch:\n  " +
          [] {
            std::string s;
            for (const auto& w : kDefaultBatch) s += (s.empty() ? "" : "\n  ") + w;
            return s;
          }(),
  };
  cl.options.add_options()                                                                      //
      ("workload", po::value<std::vector<std::string>>(), "workload specs (tunebed workloads)")  //
      ("device", po::value<std::string>()->default_value("cpu"), "device to tune on")           //
      ("strategy", po::value<std::string>()->default_value("beam"), "beam, random, hill or annealing")
      ("width", po::value<int>()->default_value(2), "beam width")                              //
      ("budget", po::value<int64_t>()->default_value(24), "candidates per kernel at most")      //
      ("seconds", po::value<double>()->default_value(60), "wall seconds per kernel at most")    //
      ("seed", po::value<uint64_t>()->default_value(0), "seed of the strategy and the inputs")  //
      ("jobs", po::value<int>()->default_value(0), "worker processes (0: one per core)")         //
      ("db", po::value<std::string>()->default_value("results/tuning.db"), "tuning database")  //
      ("retune", po::bool_switch(), "tune again even where the database has a winner");
  cl.positional.add("workload", -1);
  cl.examples = {"tunebed tune", "tunebed tune matmul:M=512,N=512,K=512 --strategy annealing --budget 64",
                 "tunebed tune softmax --db my.db --retune"};
  auto vm = parse(cl, args);
  if (!vm) return 0;

  std::vector<std::string> specs =
      vm->count("workload") ? (*vm)["workload"].as<std::vector<std::string>>() : kDefaultBatch;
  std::string device = (*vm)["device"].as<std::string>();
  if (device != "cpu") throw UsageError("tune renders kernels for the CPU only so far, not '" + device + "'");
  int64_t budget = (*vm)["budget"].as<int64_t>();
  if (budget < 1) throw UsageError("--budget must be at least 1");
  uint64_t seed = (*vm)["seed"].as<uint64_t>();
  std::string strategy_name = (*vm)["strategy"].as<std::string>();
  make_strategy(strategy_name, seed, (*vm)["width"].as<int>());  // a bad name fails before any work

  // Every workload is scheduled before any worker is forked, so bad input fails fast.
  struct Job {
    std::string spec;
    UOp ast;
  };
  std::vector<Job> jobs;
  for (const std::string& spec : specs) {
    auto workload = [&] {
      try {
        return make_workload(spec, seed);
      } catch (const WorkloadError& e) {
        throw UsageError(e.what());
      }
    };
    Workload w = workload();
    for (const ScheduleItem& item : create_schedule({w.output.uop()}).items)
      if (!item.is_copy()) jobs.push_back({w.spec, item.ast});
  }

  results::TuningDb db = results::TuningDb::open((*vm)["db"].as<std::string>(), results::TuningDb::Mode::create);
  search::WorkerPool pool({.workers = (*vm)["jobs"].as<int>()});
  search::TuneOptions options;
  options.device = device;
  options.budget = {budget, (*vm)["seconds"].as<double>()};
  options.retune = (*vm)["retune"].as<bool>();
  options.seed = seed;
  options.input_seed = seed;
  options.tunebed_version = build_version();
  options.git_rev = build_git_rev();

  std::vector<Row> rows;
  for (size_t i = 0; i < jobs.size(); i++) {
    search::KernelTarget target(jobs[i].ast, jobs[i].spec, device);
    auto strategy = make_strategy(strategy_name, seed, (*vm)["width"].as<int>());
    std::cerr << "kernel " << i + 1 << "/" << jobs.size() << " " << target.target().kernel.shape << " ("
              << jobs[i].spec << ")\n";
    search::TuneResult r = search::tune(target.target(), *strategy, pool, db, options);
    rows.push_back({target.target().kernel.hash, target.target().kernel.shape, r.opts, target.hand_coded_opts(),
                    r.median_s * 1e6, r.cache_hit});
  }

  std::printf("%-16s %-28s %10s  %-5s %s\n", "kernel", "shape", "tuned_us", "cache", "opts (hand-coded)");
  for (const Row& r : rows)
    std::printf("%-16s %-28s %10.1f  %-5s %s (%s)\n", r.kernel.c_str(), r.shape.c_str(), r.tuned_us,
                r.cache_hit ? "hit" : "-", r.opts.empty() ? "none" : r.opts.c_str(),
                r.hand_opts.empty() ? "none" : r.hand_opts.c_str());
  return 0;
}

const Registrar reg{"tune", "tune the kernels of workloads into the tuning database", run};

}  // namespace
}  // namespace tunebed::cli
