// `tunebed tune`: tune every kernel of a batch (workloads, a manifest, or the default batch) on a
// device into the tuning database, as one run that can be stopped, resumed and sharded.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <future>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/text.hpp"
#include "harness/cli.hpp"
#include "harness/db_cli.hpp"
#include "harness/manifest.hpp"
#include "harness/progress.hpp"
#include "harness/table_format.hpp"
#include "harness/tune_batch.hpp"
#include "harness/workload_check.hpp"
#include "results/json_lines.hpp"
#include "search/kernel_space.hpp"
#include "search/kernel_target.hpp"
#include "search/stored.hpp"
#include "search/tune.hpp"
#include "search/worker_pool.hpp"
#include "tunebed/build_info.hpp"

namespace tunebed::cli {
namespace {

// A handful of library workloads at sizes that tune in a few minutes on two cores.
const std::vector<std::string> kDefaultBatch = {
    "matmul:M=256,N=256,K=256,dtype=float32",
    "sum:M=1024,N=1024,axis=rows,dtype=float32",
    "softmax:M=512,N=512,dtype=float32",
    "elementwise:N=1048576,length=4,dtype=float32",
};

// Set by SIGINT/SIGTERM; tune() reads it at every candidate boundary. The handler is reset after
// the first signal (SA_RESETHAND), so a second Ctrl-C kills at once (the run stays resumable).
std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler needs a lock-free flag");

extern "C" void request_stop(int) { g_stop.store(true); }

// Installed before the worker pool forks, so workers inherit it too: a SIGTERM sent to every
// process of a Slurm job does not kill a worker mid-candidate (which would record a crash).
void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = request_stop;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

// TUNEBED_WORKERS, the default of --jobs (docs/ENVIRONMENT.md).
int workers_from_env() {
  const char* text = std::getenv("TUNEBED_WORKERS");
  if (!text || !*text) return 0;
  char* end = nullptr;
  const long n = std::strtol(text, &end, 10);
  if (*end != '\0' || n < 0 || n > 4096)
    throw UsageError(std::string("TUNEBED_WORKERS='") + text +
                     "': expected a number of worker processes (0: one per core)");
  return static_cast<int>(n);
}

std::string default_batch_text() {
  std::string s;
  for (const auto& w : kDefaultBatch) s += "\n  " + w;
  return s;
}

results::TuningDb open_db(const std::string& path, results::TuningDb::Mode mode) {
  try {
    return results::TuningDb::open(path, mode);
  } catch (const results::DbError& e) {
    throw UsageError(e.what());
  }
}

// The batch a run works through, and what the run row stores about it.
struct Batch {
  std::vector<BatchKernel> kernels;
  uint64_t seed = 0;
  bool retune = false;
  int64_t check_iterations = kExactRunBudget;  // of each independent check's exact run
  StrategyOptions model;  // the model strategy's model and knobs (seed, width: per kernel)
  bool uses_model() const {
    return std::ranges::any_of(kernels, [](const BatchKernel& k) { return *k.options.strategy == "model"; });
  }
};

KernelLookup lookup_in(std::optional<results::TuningDb>& db, const std::string& path) {
  return [&db, path](const std::string& hash) -> std::optional<std::pair<std::string, std::string>> {
    if (!db) db.emplace(open_db(path, results::TuningDb::Mode::existing));
    const std::optional<results::Kernel> k = db->kernel(hash);
    if (!k) return std::nullopt;
    return std::pair{k->ast, k->source};
  };
}

// A new batch from the command line: workload arguments, then the manifest's entries.
Batch plan_batch(const po::variables_map& vm, const TuneDefaults& defaults,
                 std::optional<results::TuningDb>& db) {
  std::vector<ManifestEntry> entries;
  std::vector<std::string> specs = vm.count("workload")   ? vm["workload"].as<std::vector<std::string>>()
                                   : vm.count("manifest") ? std::vector<std::string>{}
                                                          : kDefaultBatch;
  for (size_t i = 0; i < specs.size(); i++)
    entries.push_back(
        {.kind = ManifestEntry::Kind::workload, .value = specs[i], .origin = "workload " + specs[i]});
  if (vm.count("manifest")) {
    std::vector<ManifestEntry> m = read_manifest(vm["manifest"].as<std::string>());
    entries.insert(entries.end(), m.begin(), m.end());
  }
  Batch batch{.seed = vm["seed"].as<uint64_t>(),
              .retune = vm["retune"].as<bool>(),
              .check_iterations = vm["check-budget"].as<int64_t>(),
              .model = model_options(vm)};
  std::vector<BatchKernel> all =
      expand(entries, defaults, batch.seed, lookup_in(db, vm["db"].as<std::string>()));
  const Shard shard = vm.count("shard") ? parse_shard(vm["shard"].as<std::string>()) : Shard{};
  for (size_t i = 0; i < all.size(); i++)
    if (shard.contains(i)) batch.kernels.push_back(std::move(all[i]));
  if (!batch.uses_model()) refuse_unused_model_options(vm);
  return batch;
}

results::RunSpec run_spec(const Batch& batch, const TuneDefaults& defaults) {
  results::RunSpec spec;
  spec.strategy = defaults.strategy;
  for (const BatchKernel& k : batch.kernels)
    if (*k.options.strategy != defaults.strategy) spec.strategy = "mixed";
  StrategyOptions so = batch.model;
  so.seed = batch.seed;
  so.width = defaults.width;
  results::JsonRow params = results::parse_json_object(make_strategy(defaults.strategy, so)->params_json());
  params.emplace_back("retune", static_cast<int64_t>(batch.retune));
  params.emplace_back("check_iterations", batch.check_iterations);
  if (batch.uses_model()) store_model_options(batch.model, params);  // a resume searches as this run did
  params.emplace_back("plan", plan_text(batch.kernels));
  spec.params = results::to_json(params);
  spec.seed = static_cast<int64_t>(batch.seed);
  spec.budget_candidates = defaults.budget;
  spec.budget_seconds = defaults.seconds;
  spec.action_space_version = search::action_space_version({});
  spec.tunebed_version = build::kVersion;
  spec.git_rev = build::kGitRev;
  return spec;
}

// The batch of run SPEC (an id or uuid prefix) in DB, which must be a `tune` batch not yet
// completed; RUN is set to it.
Batch resumed_batch(std::optional<results::TuningDb>& db, const std::string& spec, results::Run& run) {
  try {
    run = db->run(db->resolve_run(spec));
  } catch (const results::DbError& e) {
    throw UsageError("--resume: " + std::string(e.what()));
  }
  const std::string name = "run " + std::to_string(run.id);
  if (run.status == results::RunStatus::completed)
    throw UsageError("--resume: " + name + " has completed; there is nothing to resume");
  std::optional<std::string> plan;
  Batch batch{.seed = static_cast<uint64_t>(run.seed)};
  try {
    const results::JsonRow params = results::parse_json_object(run.params);
    load_model_options(params, batch.model);
    for (const auto& [key, value] : params) {
      if (key == "plan" && std::holds_alternative<std::string>(value)) plan = std::get<std::string>(value);
      if (key == "retune" && std::holds_alternative<int64_t>(value))
        batch.retune = std::get<int64_t>(value) != 0;
      if (key == "check_iterations" && std::holds_alternative<int64_t>(value))
        batch.check_iterations = std::get<int64_t>(value);
    }
  } catch (const std::invalid_argument&) {
  }  // params that are not a flat object hold no plan either
  if (!plan) throw UsageError("--resume: " + name + " was not started by `tunebed tune` (it stores no plan)");
  batch.kernels = expand(parse_manifest(*plan, name + "'s plan", ""), TuneDefaults{}, batch.seed,
                         lookup_in(db, db->path()));
  if (batch.uses_model()) try {
      make_strategy("model", batch.model);
    } catch (const UsageError& e) {
      throw UsageError("--resume: " + name + "'s model strategy: " + e.what());
    }
  return batch;
}

// A batch and the run that records it: resumed, or planned from the command line and begun.
struct Session {
  std::optional<results::TuningDb> db;
  results::Run run;
  Batch batch;
  bool resumed = false;
};

// Every kernel is planned before the database is created or a worker forked: bad input fails
// fast and leaves no file behind.
Session start_session(const po::variables_map& vm, const TuneDefaults& defaults) {
  Session s;
  const std::string db_path = vm["db"].as<std::string>();
  if (vm.count("resume")) {
    std::vector<std::string> planned = {"workload", "manifest", "shard", "strategy", "exhaustive", "width",
                                        "budget",   "seconds",  "seed",  "retune",   "check-budget"};
    planned.insert(planned.end(), model_flags().begin(), model_flags().end());
    if (const std::optional<std::string> flag = first_given(vm, planned))
      throw UsageError("--resume finishes the run's own plan with its own options: drop --" + *flag);
    s.db.emplace(open_db(db_path, results::TuningDb::Mode::existing));
    s.batch = resumed_batch(s.db, vm["resume"].as<std::string>(), s.run);
    s.run = s.db->resume_run(s.run.id);
    s.resumed = true;
    return s;
  }
  s.batch = plan_batch(vm, defaults, s.db);
  if (s.batch.kernels.empty()) return s;
  if (!s.db) s.db.emplace(open_db(db_path, results::TuningDb::Mode::create));
  // The plan names kernels by hash, so their ASTs go into the database before the run begins.
  for (const BatchKernel& k : s.batch.kernels) {
    std::string shape;
    try {
      shape = search::shape_summary(k.ast);
    } catch (const std::exception&) {
    }  // the kernel's own tuning will say what is wrong with it
    s.db->upsert_kernel({.hash = k.hash, .ast = print_uop(k.ast), .shape = shape, .source = k.source});
  }
  s.run = s.db->begin_run(run_spec(s.batch, defaults));
  return s;
}

struct Outcome {
  std::string hash, shape;
  std::optional<search::TuneResult> result;  // none when the kernel failed
};

void print_summary(const std::vector<Outcome>& outcomes, std::ostream& out) {
  Table t{{id_column("kernel"), {"shape", 24}, {"default_us"}, {"tuned_us"}, {"speedup"}, {"cache"}, {"opts"}}};
  for (const Outcome& o : outcomes) {
    const search::TuneResult* r = o.result ? &*o.result : nullptr;
    Cell baseline = r && r->baseline_s ? Cell{*r->baseline_s * 1e6} : Cell{};
    Cell tuned = r && !r->interrupted && r->not_tuned.empty() ? Cell{r->median_s * 1e6} : Cell{};
    Cell speedup = r && r->baseline_s && !r->interrupted && r->median_s > 0
                       ? Cell{*r->baseline_s / r->median_s}
                       : Cell{};
    std::string state = !r                      ? "failed"
                        : !r->not_tuned.empty() ? "wrong"
                        : r->interrupted        ? "stopped"
                        : r->cache_hit          ? "hit"
                        : !r->demoted.empty()   ? "demoted"
                                                : "-";
    t.add_row({o.hash, o.shape, baseline, tuned, speedup, state, r && !r->opts.empty() ? r->opts : "none"});
  }
  write_table(t, Format::table, Verbosity::normal, out);
}

int run(const std::vector<std::string>& args) {
  const int default_workers = workers_from_env();
  CommandLine cl{
      .synopsis = "tunebed tune [WORKLOAD...] [--manifest FILE] [--shard I/N] [--resume RUN] [options]",
      .description =
          "Schedule each workload into kernels and tune every kernel on the device: a search over\n"
          "OptOps in isolated worker processes, every candidate verified against the unoptimized\n"
          "kernel and recorded in the tuning database. The batch is one run. A kernel already tuned\n"
          "on the same device (same AST hash and action space) reuses its stored winner,\n"
          "re-verified, unless --retune. At the end a table compares each winner with the default\n"
          "opts (what `tunebed run` runs untuned: a tensor core where one fits, else tinygrad's\n"
          "hand-coded opts, and THREAD on the CPU), both re-timed in one interleaved measurement\n"
          "(default_us, tuned_us); the winner is never the slower of the two. `tunebed run --db`\n"
          "then runs each kernel's winner.\n\n"
          "--manifest FILE lists workloads, kernel AST files (`ast PATH`), tinygrad corpora\n"
          "(`corpus PATH [sample=N] [seed=S] [filter=reduce]`) and stored kernels (`kernel HASH`),\n"
          "one per line, each with optional strategy= budget= seconds= width=; the format is\n"
          "documented in harness/manifest.hpp. --shard I/N (1 <= I <= N) tunes every N-th kernel\n"
          "from the I-th, so N machines share a manifest (scripts/slurm/tune-array.sbatch).\n\n"
          "Ctrl-C or SIGTERM stops at the next candidate: what was measured is kept, the run is\n"
          "marked interrupted, and `tunebed tune --resume RUN --db F` finishes it (exit 130).\n"
          "Environment: TUNEBED_WORKERS, TUNEBED_CACHE_DIR, TUNEBED_CLANG (docs/ENVIRONMENT.md).\n"
          "Exit codes: 0 ok, 1 a kernel could not be tuned, 2 bad usage or input, 130 interrupted.\n\n"
          "With no WORKLOAD and no --manifest, tunes the default batch:" +
          default_batch_text(),
  };
  cl.options.add_options()                                                                       //
      ("workload", po::value<std::vector<std::string>>(), "workload specs (tunebed workloads)")  //
      ("manifest", po::value<std::string>(), "tune the entries of this manifest file")           //
      ("shard", po::value<std::string>(), "tune only the I-th of N round-robin slices, I/N")     //
      ("resume", po::value<std::string>(), "finish this interrupted run (id or uuid prefix)")    //
      ("device", po::value<std::string>()->default_value("cpu"), "device to tune on")            //
      ("strategy", po::value<std::string>()->default_value("beam"), "beam, random, hill, annealing, exhaustive or model (a cost model trained on the\n"
      "other kernels of --train-db, or of --db, ranks candidates; only its top few are measured)")(
          "width", po::value<int>()->default_value(2), "beam width")                            //
      ("exhaustive", po::bool_switch(), "every candidate breadth-first, to --budget: data for `tunebed replay`")  //
      ("budget", po::value<int64_t>()->default_value(24), "candidates per kernel at most")      //
      ("seconds", po::value<double>()->default_value(60), "wall seconds per kernel at most")    //
      ("seed", po::value<uint64_t>()->default_value(0), "seed of the strategy and the inputs")  //
      ("jobs", po::value<int>()->default_value(default_workers),
       "worker processes (0: one per core; env TUNEBED_WORKERS)")                       //
      ("db", po::value<std::string>()->default_value(kDefaultDb), "tuning database")    //
      ("retune", po::bool_switch(), "tune again even where the database has a winner")  //
      ("check-budget", po::value<int64_t>()->default_value(kExactRunBudget),
       "iterations of each kernel's exact reference run; a larger kernel is checked on a\n"
       "sample of its outputs (every k-th, k odd)")  //
      ("progress", po::value<std::string>()->default_value("auto"), "auto, live, jsonl or none");
  add_model_options(cl);
  cl.positional.add("workload", -1);
  cl.examples = {"tunebed tune", "tunebed tune matmul:M=512,N=512,K=512 --strategy annealing --budget 64",
                 "tunebed tune --manifest campaign.txt --shard 2/8 --db shard-2.db --progress=jsonl",
                 "tunebed tune --resume 3 --db results/tuning.db"};
  auto vm = parse(cl, args);
  if (!vm) return 0;

  const std::string db_path = (*vm)["db"].as<std::string>();
  const std::string device = (*vm)["device"].as<std::string>();
  if (device != "cpu") throw UsageError("tune renders kernels for the CPU only so far, not '" + device + "'");
  if ((*vm)["exhaustive"].as<bool>() && !(*vm)["strategy"].defaulted())
    throw UsageError("--exhaustive is a strategy: drop --strategy");
  const std::string strategy = (*vm)["exhaustive"].as<bool>() ? "exhaustive" : (*vm)["strategy"].as<std::string>();
  const TuneDefaults defaults{strategy, (*vm)["budget"].as<int64_t>(),
                              (*vm)["seconds"].as<double>(), (*vm)["width"].as<int>()};
  if (defaults.budget < 1) throw UsageError("--budget must be at least 1");
  if ((*vm)["check-budget"].as<int64_t>() < 1) throw UsageError("--check-budget must be at least 1");
  make_strategy(defaults.strategy, {.width = defaults.width});  // a bad name fails before any work
  std::unique_ptr<Progress> progress = make_progress((*vm)["progress"].as<std::string>());

  Session session = start_session(*vm, defaults);
  if (session.batch.kernels.empty()) {
    std::cerr << "nothing to tune: shard " << (*vm)["shard"].as<std::string>() << " has no kernels\n";
    return 0;
  }
  results::TuningDb& db = *session.db;
  const Batch& batch = session.batch;
  const results::Run& run = session.run;

  install_stop_handlers();
  search::WorkerPool pool({.workers = (*vm)["jobs"].as<int>(), .device = device});
  search::TuneOptions options;
  options.device = device;
  options.retune = batch.retune;
  options.seed = batch.seed;
  options.input_seed = batch.seed;
  options.run_id = run.id;
  options.stop = &g_stop;

  progress->run_start({run.id, run.uuid, db_path, batch.kernels.size(), session.resumed});
  std::vector<Outcome> outcomes;
  // The Eigen half of the independent check. A workload of one kernel is checked on that kernel's
  // own inputs and exact run (eigen_disagreement_on); one of several kernels once per batch, when
  // a kernel of it first needs checking (deferred: it runs on the thread of the first get, beside
  // that kernel's own exact run).
  std::map<std::string, std::shared_future<std::optional<std::string>>> eigen_checks;
  size_t failed = 0;
  bool interrupted = false;
  std::optional<search::TrainingSet> prior;  // the model strategy's, built when a kernel first needs it
  for (size_t i = 0; i < batch.kernels.size() && !interrupted; i++) {
    if (g_stop.load()) {
      interrupted = true;
      break;
    }
    const BatchKernel& k = batch.kernels[i];
    const KernelSlot slot{i + 1, batch.kernels.size(), *k.options.budget};
    Outcome& outcome = outcomes.emplace_back(Outcome{k.hash, "", std::nullopt});
    try {
      search::KernelTarget target(k.ast, k.source, device, {}, batch.check_iterations);
      search::TuneTarget& t = target.target();
      if (k.from_workload) {
        auto [it, fresh] = eigen_checks.try_emplace(k.source);
        if (fresh)
          it->second = std::async(std::launch::deferred, eigen_disagreement, k.source, batch.seed,
                                  batch.check_iterations).share();
        t.cross_check = [check = it->second, spec = k.source, output = t.output](
                            const std::vector<HostBuffer>& buffers, const std::shared_future<Expected>& expected) {
          if (std::optional<std::string> on_kernel = eigen_disagreement_on(spec, buffers, output, expected))
            return on_kernel;
          return check.get();
        };
        t.cross_oracle = "eigen";
      }
      outcome.shape = t.kernel.shape;
      StrategyOptions so = batch.model;
      so.seed = batch.seed;
      so.width = *k.options.width;
      if (*k.options.strategy == "model") {
        // The model learns from every other kernel measured on the device (of --train-db, or of this database).
        if (!prior) prior = model_training(batch.model, db, search::fingerprint_of(device));
        so.prior = std::make_shared<const search::TrainingSet>(prior->without(k.hash));
      }
      auto strategy = make_strategy(*k.options.strategy, so);
      options.budget = {*k.options.budget, *k.options.seconds};
      options.on_event = [&](const search::TuneEvent& e) { progress->event(slot, e); };
      outcome.result = search::tune(t, *strategy, pool, db, options);
      interrupted = outcome.result->interrupted;
      if (!outcome.result->not_tuned.empty()) {
        failed++;
        std::cerr << "error: " << k.origin << ": kernel " << k.hash
                  << " not tuned: " << outcome.result->not_tuned << "\n";
      }
      if (!outcome.result->demoted.empty())
        std::cerr << "warning: kernel " << k.hash << ": the stored winner was demoted ("
                  << outcome.result->demoted << ") and the kernel tuned again\n";
    } catch (const std::exception& e) {
      // One kernel that cannot be tuned (its reference fails, codegen rejects it) does not stop
      // the batch; it is reported and the exit code says so.
      failed++;
      progress->kernel_failed(slot, k.hash, e.what());
      std::cerr << "error: " << k.origin << ": kernel " << k.hash << ": " << e.what() << "\n";
    }
  }

  const size_t done = static_cast<size_t>(
      std::ranges::count_if(outcomes, [](const Outcome& o) { return o.result && !o.result->interrupted; }));
  if (interrupted)
    db.mark_interrupted(run.id);
  else
    db.finish_run(run.id, results::RunStatus::completed);
  progress->run_done(interrupted ? "interrupted" : "completed", done, failed);
  // With --progress=jsonl stdout carries only JSON lines.
  print_summary(outcomes, (*vm)["progress"].as<std::string>() == "jsonl" ? std::cerr : std::cout);
  if (interrupted) {
    std::cerr << "interrupted: resume with tunebed tune --resume " << run.id << " --db " << db_path << "\n";
    return 130;
  }
  return failed > 0 ? 1 : 0;
}

const Registrar reg{"tune", "tune the kernels of workloads or a manifest into the tuning database", run};

}  // namespace
}  // namespace tunebed::cli
