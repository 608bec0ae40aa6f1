// `tunebed replay`: a strategy run against a database's stored measurements instead of the
// machine (search/replay.hpp): no compiling, no timing. Per kernel, the candidates it needed to
// come within 5% of the best stored time; with --curve, its best-so-far after every candidate.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/text.hpp"
#include "core/opt/kernel.hpp"
#include "harness/cli.hpp"
#include "harness/db_cli.hpp"
#include "harness/table_format.hpp"
#include "harness/tune_batch.hpp"
#include "search/kernel_space.hpp"
#include "search/replay.hpp"

namespace tunebed::cli {
namespace {

using results::CandidateStatus;

// What DEVICE measured for each opts of KERNEL_ID, over every stored run: the lowest ok median
// (seconds), else +inf (it failed).
search::StoredCosts stored_costs(results::TuningDb& db, int64_t kernel_id, const std::string& device) {
  search::StoredCosts costs;
  for (const results::CandidateRow& c : db.history(kernel_id)) {
    if (c.device != device) continue;
    const double s = c.status == CandidateStatus::ok && c.median_us ? *c.median_us * 1e-6 : INFINITY;
    auto [it, fresh] = costs.try_emplace(c.opts, s);
    if (!fresh) it->second = std::min(it->second, s);
  }
  return costs;
}

Cell us(double seconds) { return std::isfinite(seconds) ? Cell(seconds * 1e6) : Cell(); }

int replay_cmd(const std::vector<std::string>& args) {
  CommandLine cl{
      .synopsis = "tunebed replay [--strategy S] [--budget N] [--kernel HASH] [--device D] [--curve] [options]",
      .description =
          "Run a search strategy against the measurements stored in the tuning database instead of\n"
          "the machine: each candidate it proposes costs what the database measured for those opts on\n"
          "that device (a failed one: infinite), so nothing is compiled or timed and a strategy is\n"
          "compared on many kernels in seconds. The action space is the kernel's real one; a\n"
          "candidate the database never measured counts as missing (and infinite): replay data made\n"
          "by `tunebed tune --exhaustive` covers everything within its budget.\n"
          "\n"
          "Per kernel: the candidates stored, proposed and missing, the best stored time, the best the\n"
          "strategy found, and to_5pct, the candidates it needed to come within 5% of the best stored\n"
          "time (empty: never). --curve prints the best-so-far after every candidate instead."};
  cl.options.add_options()                                                                            //
      ("strategy", po::value<std::string>()->default_value("beam"), "beam, random, hill, annealing or exhaustive")  //
      ("budget", po::value<int64_t>()->default_value(64), "candidates per kernel at most")             //
      ("seed", po::value<uint64_t>()->default_value(0), "seed of the strategy")                         //
      ("width", po::value<int>()->default_value(4), "beam width")                                       //
      ("kernel", po::value<std::string>()->value_name("HASH"), "only this kernel (a hash prefix)")      //
      ("device", po::value<std::string>()->value_name("D"), "the device whose measurements to use")     //
      ("curve", po::bool_switch(), "print every candidate's best-so-far");
  add_db_option(cl);
  add_output_options(cl);
  cl.examples = {"tunebed tune matmul:M=64,N=64,K=64 --exhaustive --budget 300 --db full.db",
                 "tunebed replay --db full.db --strategy beam --budget 40",
                 "tunebed replay --db full.db --strategy random --seed 3 --curve --format csv"};
  auto vm = parse(cl, args);
  if (!vm) return 0;
  const Output out = output_options(*vm);
  const int64_t budget = (*vm)["budget"].as<int64_t>();
  if (budget < 1) throw UsageError("--budget must be at least 1");
  const std::string strategy_name = (*vm)["strategy"].as<std::string>();
  make_strategy(strategy_name, 0, (*vm)["width"].as<int>());  // a bad name fails before any work
  auto db = open_for_reading((*vm)["db"].as<std::string>());

  std::vector<results::BestRow> winners = db.best();
  try {
    if (vm->count("kernel")) {
      const results::Kernel k = db.kernel(db.resolve_kernel((*vm)["kernel"].as<std::string>()));
      std::erase_if(winners, [&](const results::BestRow& w) { return w.kernel_hash != k.hash; });
    }
    if (vm->count("device")) {
      const int64_t d = db.resolve_device((*vm)["device"].as<std::string>());
      std::erase_if(winners, [&](const results::BestRow& w) { return w.device_id != d; });
    }
  } catch (const results::DbError& e) {
    throw UsageError(e.what());  // an unknown or ambiguous --kernel or --device is bad input
  }
  const std::string version = search::action_space_version({});
  std::erase_if(winners, [&](const results::BestRow& w) { return w.action_space_version != version; });
  if (winners.empty())
    throw UsageError("no kernel of " + db.path() + " has a winner under this tunebed's action space (" + version +
                     ") to replay" + (vm->count("kernel") || vm->count("device") ? " for that --kernel/--device" : ""));

  Table table{(*vm)["curve"].as<bool>()
                  ? std::vector<Column>{id_column("kernel"), {"device"}, {"index"}, {"opts", 48}, {"us"}, {"best_us"}}
                  : std::vector<Column>{id_column("kernel"), {"device"}, {"stored"}, {"proposed"}, {"missing"},
                                        {"best_us"}, {"found_us"}, {"to_5pct"}}};
  std::vector<int64_t> reached;
  for (const results::BestRow& w : winners) {
    const results::Kernel k = db.kernel(db.resolve_kernel(w.kernel_hash));
    const search::StoredCosts costs = stored_costs(db, db.resolve_kernel(w.kernel_hash), w.device);
    Kernel root(parse_uop(k.ast), Renderer::for_device(w.device));
    search::KernelSpace space(root);
    auto strategy = make_strategy(strategy_name, (*vm)["seed"].as<uint64_t>(), (*vm)["width"].as<int>());
    const search::ReplayResult r = search::replay(*strategy, space, costs, budget);
    if ((*vm)["curve"].as<bool>()) {
      for (size_t i = 0; i < r.steps.size(); i++)
        table.add_row({w.kernel_hash, w.device, static_cast<int64_t>(i + 1), r.steps[i].opts,
                       r.steps[i].cost ? us(*r.steps[i].cost) : Cell(std::string("missing")),
                       us(r.steps[i].best_so_far)});
      continue;
    }
    const std::optional<int64_t> to5 = r.candidates_to_within(0.05);
    if (to5) reached.push_back(*to5);
    table.add_row({w.kernel_hash, w.device, static_cast<int64_t>(costs.size()), static_cast<int64_t>(r.steps.size()),
                   r.missing, us(r.best_stored), us(r.steps.empty() ? INFINITY : r.steps.back().best_so_far),
                   to5 ? Cell(*to5) : Cell()});
  }
  write_table(table, out.format, out.verbosity, std::cout);
  if ((*vm)["curve"].as<bool>() || out.format != Format::table || out.verbosity == Verbosity::quiet) return 0;
  std::ranges::sort(reached);
  std::cout << strategy_name << " came within 5% of the best stored time on " << reached.size() << " of "
            << winners.size() << " kernel(s)";
  if (!reached.empty()) std::cout << "; median " << reached[reached.size() / 2] << " candidates to get there";
  std::cout << "\n";
  return 0;
}

const Registrar reg{"replay", "run a search strategy against a database's stored measurements, offline",
                    replay_cmd};

}  // namespace
}  // namespace tunebed::cli
